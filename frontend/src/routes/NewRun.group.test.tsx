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

// A group run from the New run form (ADR 0038): "Add a host" adds another online agent's row;
// the form then queues POST /run-groups, shows the server's 422 of that host beside its row and,
// once queued, opens the first member's run page. The form's role queries are slow in jsdom
// (NewRun.test.tsx): the waits use test ids and text.
describe("NewRun: a group run", { timeout: 30_000 }, () => {
  it("adds a host, sends the group, puts a member's 422 on its row, then opens the run", async () => {
    setToken("tok");
    const left = policyAgent({ id: "a1", name: "left", hostname: "h1" });
    const right = policyAgent({ id: "a2", name: "right", hostname: "h2" });
    let refuse = true;
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [left, right], total: 2 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/run-groups": () =>
        refuse
          ? {
              status: 422,
              body: {
                error: "validation_error",
                message: "invalid request",
                detail: [{ field: "members.1.target_path", message: "not a target of this host" }],
              },
            }
          : { status: 201, body: { id: "g1", members: [{ run_id: "r-1" }, { run_id: "r-2" }] } },
    });
    renderAt(<NewRun />);
    await screen.findByText("left (h1)", { selector: "option" });
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.click(screen.getByTestId("add-host"));
    expect((screen.getByTestId("group-host-agent") as HTMLSelectElement).value).toBe("a2");
    fireEvent.change(screen.getByTestId("shared-store"), { target: { value: "san:lun7" } });
    expect(screen.getByTestId("submit-run").textContent).toBe("Queue group run");
    fireEvent.click(screen.getByTestId("submit-run"));

    const err = await screen.findByTestId("field-error-hosts.0.target");
    expect(err.textContent).toBe("not a target of this host");
    const post = calls.find((c) => c.method === "POST");
    expect(post?.path).toBe("/api/v1/run-groups");
    expect(post?.body).toMatchObject({
      members: [
        { agent_id: "a1", target_path: "/srv/bench" },
        { agent_id: "a2", target_path: "/srv/bench" },
      ],
      shared_store: "san:lun7",
      destructive: false,
    });
    expect(calls.some((c) => c.path === "/api/v1/runs")).toBe(false);

    refuse = false;
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    await waitFor(() => expect(calls.filter((c) => c.method === "POST")).toHaveLength(2));
  });
});
