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

describe("NewRun", () => {
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
    await screen.findByRole("option", { name: "local (box)" });
    expect(screen.queryByRole("option", { name: /gone/ })).toBeNull();

    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /Block size/ }), {
      target: { value: "0" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));

    const err = await screen.findByTestId("field-error-bs");
    expect(err.textContent).toBe("must be greater than 0");
    expect(err.dataset.source).toBe("server");
    const post = calls.find((c) => c.method === "POST");
    expect(post?.body).toMatchObject({
      agent_id: "a1",
      target_path: "/srv/bench",
      destructive: false,
      workload_id: null,
      workload: {
        jobs: [{ rw: "randread", bs_bytes: 0, size_bytes: 64 * 1024 * 1024, runtime_s: 5 }],
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
    await screen.findByRole("option", { name: "local (box)" });
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /Block size/ }), {
      target: { value: "lots" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-bs")).dataset.source).toBe("client");
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
    await screen.findByRole("option", { name: "local (box)" });
    fireEvent.click(screen.getByTestId("mode-custom"));
    fireEvent.change(screen.getByRole("textbox", { name: /I\/O size/ }), {
      target: { value: "many" },
    });
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-iosize")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    fireEvent.change(screen.getByRole("textbox", { name: /I\/O size/ }), {
      target: { value: "16m" },
    });
    fireEvent.click(screen.getByRole("checkbox", { name: /End fsync/ }));
    fireEvent.click(screen.getByTestId("submit-run"));
    expect((await screen.findByTestId("field-error-iosize")).dataset.source).toBe("server");
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
    await screen.findByRole("option", { name: "lab (local, 380 gCO2e/kWh)" });
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
});
