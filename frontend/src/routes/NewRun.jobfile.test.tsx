// New run with a fio job file (issue 24, ADR 0029), rendered: the engine's jobs shown as the text
// is typed (POST /workloads/jobfile), its refusal under the text, the run queued with the text
// exactly as typed, and the host's 422 at the text.
import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../lib/auth";
import { policyAgent } from "../test/fixtures";
import { renderAt, stubApi } from "../test/render";
import { NewRun } from "./NewRun";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const TEXT = "; mine\n[global]\nbs=4k\nfilename=/dev/sdb\n\n[w]\nrw=write\nsize=1m\n";
const PARSE = {
  global_options: { bs: "4k", filename: "/dev/sdb" },
  jobs: [
    {
      name: "w",
      group: 0,
      line: 6,
      options: { bs: "4k", filename: "/dev/sdb", rw: "write", size: "1m" },
    },
  ],
  replaced: ["global: filename=/dev/sdb"],
};

describe("NewRun with a fio job file", { timeout: 30_000 }, () => {
  it("shows the engine's jobs, then queues the text as typed; the host's 422 lands at the text", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [policyAgent()], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/workloads/jobfile": (req) => {
        void req;
        const last = calls[calls.length - 1]?.body as { text: string };
        if (last.text.includes("bogus"))
          return {
            status: 422,
            body: {
              error: "validation_error",
              message: "invalid",
              detail: [{ field: "text", message: "line 9: bogus: unknown option" }],
            },
          };
        return { body: PARSE };
      },
      "POST /api/v1/runs": () => ({
        status: 422,
        body: {
          error: "host_policy_refused",
          message: "refused",
          detail: [
            {
              field: "workload.jobfile.text",
              message: "[w] job 0 runs 100 threads; the host allows 64",
              rule: "limit.threads",
              fix: "iowatt-agent targets limits --max-threads 100",
            },
          ],
        },
      }),
    });
    renderAt(<NewRun />);
    await screen.findByText("local (box)", { selector: "option" });
    fireEvent.click(screen.getByTestId("mode-jobfile"));
    const input = screen.getByTestId("jobfile-input");
    fireEvent.change(input, { target: { value: `${TEXT}bogus=1\n` } });
    const refused = await screen.findByTestId("jobfile-refused", {}, { timeout: 5_000 });
    expect(refused.textContent).toContain("line 9: bogus: unknown option");

    fireEvent.change(input, { target: { value: TEXT } });
    const summary = await screen.findByTestId("jobfile-summary", {}, { timeout: 5_000 });
    expect(summary.textContent).toContain("1 job in 1 group");
    expect(screen.getByTestId("jobfile-replaced").textContent).toContain("filename=/dev/sdb");
    // the section's own options, not [global]'s again
    expect(screen.getByTestId("jobfile-job").textContent).toContain("rw=write size=1m");
    expect(screen.getByTestId("jobfile-job").textContent).not.toContain("filename");

    fireEvent.click(screen.getByTestId("submit-run"));
    const err = await screen.findByTestId("field-error-jobfile");
    expect(err.textContent).toContain("runs 100 threads");
    const post = calls.find((c) => c.method === "POST" && c.path === "/api/v1/runs");
    expect(post?.body).toMatchObject({
      workload: { kind: "jobfile", jobs: [], jobfile: { text: TEXT } },
      workload_id: null,
      shorten: null,
    });
    await waitFor(() => expect(screen.queryByTestId("run-page")).toBeNull());
  });
});
