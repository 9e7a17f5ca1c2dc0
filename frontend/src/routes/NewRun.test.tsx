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

const agent = policyAgent();

/** Waits until the form offers `name`, then returns that option by its role. A role query on this
 * form takes hundreds of ms in jsdom (each element's accessible name and visibility): polled by
 * findByRole, two or three polls filled its 1 s window on a loaded machine and the test timed
 * out. The wait polls a cheap query instead; the role is asserted once. */
async function offered(name: string): Promise<HTMLElement> {
  await screen.findByText(name, { selector: "option" });
  return screen.getByRole("option", { name });
}

// The form is large and its role queries slow (above): seconds of CPU on a loaded machine, more
// than vitest's default 5 s per test. The budget is for a stuck test, not a slow one.
describe("NewRun", { timeout: 30_000 }, () => {
  it("sends a single job and shows the server's 422 next to the field", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({
        body: { items: [agent, { ...agent, id: "a2", name: "gone", online: false }], total: 2 },
      }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/runs": (req) => {
        expect(req.headers.get("Authorization")).toBe("Bearer tok");
        return {
          status: 422,
          body: {
            error: "validation_error",
            message: "invalid request",
            detail: [{ field: "workload.jobs.0.bs_bytes", message: "must be greater than 0" }],
          },
        };
      },
    });
    renderAt(<NewRun />);
    // Only online agents are offered.
    await offered("local (box)");
    expect(screen.queryByRole("option", { name: /gone/ })).toBeNull();

    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /Block size/ }), {
      target: { value: "0" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));

    const err = await screen.findByTestId("field-error-jobs.0.bs");
    expect(err.textContent).toBe("must be greater than 0");
    expect(err.dataset.source).toBe("server");
    const post = calls.find((c) => c.method === "POST");
    expect(post?.body).toMatchObject({
      agent_id: "a1",
      target_path: "/srv/bench",
      destructive: false,
      workload_id: null,
      workload: {
        // the default job length is the short-run rule's 10 s (libs/workload MIN_RUNTIME_S)
        jobs: [{ rw: "randread", bs_bytes: 0, size_bytes: 64 * 1024 * 1024, runtime_s: 10 }],
      },
    });
  });

  it("refuses an unparseable block size without a request, and navigates on success", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
    });
    renderAt(<NewRun />);
    await offered("local (box)");
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /Block size/ }), {
      target: { value: "lots" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-jobs.0.bs")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    fireEvent.change(screen.getByRole("textbox", { name: /Block size/ }), {
      target: { value: "1m" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    await waitFor(() => expect(calls.filter((c) => c.method === "POST")).toHaveLength(1));
  });

  it("sends I/O size and end fsync, and shows the server's io_size_bytes 422 on the I/O size", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/runs": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid request",
          detail: [
            { field: "workload.jobs.0.io_size_bytes", message: "must be at least bs_bytes (4096)" },
          ],
        },
      }),
    });
    renderAt(<NewRun />);
    await offered("local (box)");
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /I\/O size/ }), {
      target: { value: "many" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-jobs.0.iosize")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    fireEvent.change(screen.getByRole("textbox", { name: /I\/O size/ }), {
      target: { value: "16m" },
    });
    fireEvent.click(screen.getByRole("checkbox", { name: /End fsync/ }));
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-jobs.0.iosize")).dataset.source).toBe("server");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      workload: { jobs: [{ io_size_bytes: 16 * 1024 * 1024, end_fsync: true }] },
    });
  });

  it("sends the environment, a meter name and idle seconds, and shows the meter's 422", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/environments": () => ({
        body: {
          items: [{ id: "e1", name: "lab", kind: "local", effective_g_per_kwh: 380 }],
          total: 1,
        },
      }),
      "POST /api/v1/runs": () => ({
        status: 422,
        body: {
          error: "invalid",
          message: "invalid input",
          detail: [
            {
              field: "meter",
              message:
                "the host has no meter 'plug' (on the host: iowatt-agent meters set plug SPEC)",
            },
          ],
        },
      }),
    });
    renderAt(<NewRun />);
    await offered("lab (local, 380 gCO2e/kWh)");
    fireEvent.change(screen.getByTestId("environment-select"), { target: { value: "e1" } });
    fireEvent.change(screen.getByTestId("meter-select"), { target: { value: "plug" } });
    fireEvent.change(screen.getByRole("textbox", { name: /Idle baseline/ }), {
      target: { value: "-1" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-idle")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.change(screen.getByRole("textbox", { name: /Idle baseline/ }), {
      target: { value: "10" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    const err = await screen.findByTestId("field-error-meter");
    expect(err.textContent).toContain("meters set plug");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      environment_id: "e1",
      meter: "plug",
      idle_s: 10,
    });
  });
  it("builds several jobs (add, reorder, remove) and places a job's 422 at that job's field", async () => {
    setToken("tok");
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/runs": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid request",
          detail: [
            {
              field: "workload.jobs.1.random_distribution",
              message: "zipf needs a theta above 0 and other than 1, e.g. zipf:1.2",
            },
          ],
        },
      }),
    });
    renderAt(<NewRun />);
    await offered("local (box)");
    fireEvent.click(screen.getByTestId("mode-custom"));
    // the default job reads with direct I/O
    expect(
      (screen.getByRole("checkbox", { name: /Direct I\/O/ }) as HTMLInputElement).checked,
    ).toBe(true);
    fireEvent.click(screen.getByTestId("add-job"));
    fireEvent.click(screen.getByTestId("add-job"));
    expect(screen.getAllByText(/^Job \d of 3/)).toHaveLength(3);
    fireEvent.change(
      screen.getByTestId("job-0").querySelector("input[name='jobs.0.name']") as HTMLInputElement,
      { target: { value: "first" } },
    );
    fireEvent.click(screen.getByTestId("remove-job-2"));
    const second = screen.getByTestId("job-1");
    fireEvent.change(second.querySelector("input[name='jobs.1.bs']") as HTMLInputElement, {
      target: { value: "64k" },
    });
    fireEvent.change(
      second.querySelector("input[name='jobs.1.distribution']") as HTMLInputElement,
      {
        target: { value: "zipf:1" },
      },
    );
    fireEvent.change(second.querySelector("input[name='jobs.1.randseed']") as HTMLInputElement, {
      target: { value: "42" },
    });
    // move the 64k job up, then back down
    fireEvent.click(screen.getByRole("button", { name: "move job 2 up" }));
    expect(
      (screen.getByTestId("job-0").querySelector("input[name='jobs.0.bs']") as HTMLInputElement)
        .value,
    ).toBe("64k");
    fireEvent.click(screen.getByRole("button", { name: "move job 1 down" }));
    expect(screen.getByTestId("duration-estimate").textContent).toContain("about");
    fireEvent.click(screen.getByTestId("submit-run"));
    const err = await screen.findByTestId("field-error-jobs.1.distribution");
    expect(err.textContent).toContain("zipf needs a theta");
    expect(screen.queryByTestId("field-error-jobs.0.distribution")).toBeNull();
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      workload: {
        jobs: [
          { name: "first", bs_bytes: 4096, direct: true },
          { name: "randread-64k", bs_bytes: 65536, random_distribution: "zipf:1", randseed: 42 },
        ],
      },
    });
  });

  it("sends a preset shortened by a factor for the server to shorten, with the estimate", async () => {
    setToken("tok");
    const spec = {
      passes: 1,
      discard_passes: 0,
      shortened_by: null,
      jobs: [{ name: "rr", rw: "randread", bs_bytes: 4096, size_bytes: 1 << 26, runtime_s: 60 }],
    };
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({
        body: {
          items: [{ id: "w1", name: "quick", description: "", spec, builtin: true }],
          total: 1,
        },
      }),
      "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
    });
    renderAt(<NewRun />);
    await offered("quick");
    const estimate = () => screen.getByTestId("duration-estimate").textContent ?? "";
    // 60 s load + 2 × 30 s idle (the host's meter) + 2 s + 1 s overhead
    expect(estimate()).toContain("about 2 min 3 s");
    fireEvent.change(screen.getByTestId("shorten-select"), { target: { value: "0.1" } });
    expect(estimate()).toContain("(shortened ×0.1)");
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      workload_id: "w1",
      workload: null,
      shorten: 0.1,
    });
  });

  it("clones a run from ?from=: its jobs, host, target and name prefilled, its shortening kept", async () => {
    setToken("tok");
    const job = {
      name: "cdm-seq",
      rw: "read",
      bs_bytes: 1 << 20,
      size_bytes: 1 << 30,
      offset_bytes: 0,
      runtime_s: 5,
      time_based: true,
      ramp_time_s: 0,
      rwmixread: 50,
      numjobs: 1,
      iodepth: 8,
      ioengine: "libaio",
      direct: true,
      invalidate: true,
      readahead: "default",
      end_fsync: false,
      io_size_bytes: null,
      bssplit: null,
      rate_iops: 100,
      random_distribution: "random",
      fsync_every: 0,
      sync: false,
      randseed: 7,
      loops: 2,
    };
    const calls = stubApi({
      "GET /api/v1/agents": () => ({ body: { items: [agent], total: 1 } }),
      "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/runs/r-old": () => ({
        body: {
          id: "r-old",
          name: "nvme seq",
          agent_id: "a1",
          target_path: "/srv/bench",
          workload_id: null,
          workload: { jobs: [job], passes: 1, discard_passes: 0, shortened_by: 0.1 },
          environment_id: null,
          meter: null,
          idle_s: 5,
          status: "succeeded",
        },
      }),
      "POST /api/v1/runs": () => ({ status: 201, body: { id: "r-new" } }),
    });
    renderAt(<NewRun />, { path: "/new-run?from=r-old" });
    await waitFor(() =>
      expect(screen.getByTestId("clone-note").textContent).toContain("A re-run of “nvme seq”"),
    );
    expect(screen.getByTestId("kept-shortened").textContent).toContain("×0.1");
    expect(
      (screen.getByRole("textbox", { name: /Name \(optional\)/ }) as HTMLInputElement).value,
    ).toBe("re-run of nvme seq");
    fireEvent.click(screen.getByTestId("submit-run"));
    await screen.findByTestId("run-page");
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      agent_id: "a1",
      target_path: "/srv/bench",
      name: "re-run of nvme seq",
      idle_s: 5,
      workload_id: null,
      workload: { shortened_by: 0.1, jobs: [job] },
    });
  });
});
