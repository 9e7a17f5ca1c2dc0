import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { CandidateForm } from "./CandidateForm";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const fill = (id: string, value: string) =>
  fireEvent.change(document.getElementById(id) as HTMLElement, { target: { value } });

describe("candidate form", () => {
  it("sends published figures with their reference, capacity in decimal bytes", async () => {
    setToken("t");
    let done = false;
    const calls = stubApi({
      "POST /api/v1/reviews/r1/candidates": () => ({ status: 201, body: { id: "c1" } }),
    });
    renderAt(
      <CandidateForm
        reviewId="r1"
        teamId="t1"
        onDone={() => {
          done = true;
        }}
      />,
    );
    fill("f-name", "ENT 15K R1");
    fill("f-model", "ENT 15K");
    fill("f-capacity", "600 GB");
    fill("f-price", "595");
    fill("f-count", "2");
    fill("f-protection", "raid1");
    fill("f-metric", "rps");
    fill("f-perf_value", "1250");
    fill("f-reference", "seed 001 Table 3");
    fill("f-idle_w", "5.5");
    fill("f-load_w", "9.5");
    fill("f-power_reference", "datasheet");
    fireEvent.click(screen.getByTestId("submit-candidate"));
    await waitFor(() => expect(done).toBe(true));
    const body = calls.find((c) => c.method === "POST")?.body as Record<string, unknown>;
    expect(body.device).toMatchObject({
      model: "ENT 15K",
      capacity_bytes: 600_000_000_000,
      unit_price: "595",
    });
    expect(body.count).toBe(2);
    expect(body.protection).toBe("raid1");
    expect(body.performance).toEqual({
      source: "published",
      metric: "rps",
      value: "1250",
      reference: "seed 001 Table 3",
      mb_s: null,
    });
    expect(body.power).toMatchObject({ idle_w: "5.5", load_w: "9.5", per: "drive" });
  });

  it("puts the server's 422 beside the field it names (RAID 10 of 3 drives: count)", async () => {
    setToken("t");
    stubApi({
      "POST /api/v1/reviews/r1/candidates": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid input",
          detail: [
            { field: "count", message: "raid10 needs an even number of drives, at least 4" },
          ],
        },
      }),
    });
    renderAt(<CandidateForm reviewId="r1" teamId="t1" onDone={() => {}} />);
    fill("f-name", "bad");
    fill("f-model", "x");
    fill("f-capacity", "1 TB");
    fill("f-price", "100");
    fill("f-count", "3");
    fill("f-protection", "raid10");
    fill("f-perf_value", "100");
    fill("f-reference", "r");
    fireEvent.click(screen.getByTestId("submit-candidate"));
    expect((await screen.findByTestId("field-error-count")).textContent).toContain("even number");
  });

  it("a capacity it cannot read is refused before sending", async () => {
    setToken("t");
    const calls = stubApi({});
    renderAt(<CandidateForm reviewId="r1" teamId="t1" onDone={() => {}} />);
    fill("f-capacity", "big");
    fireEvent.click(screen.getByTestId("submit-candidate"));
    expect((await screen.findByTestId("field-error-capacity")).textContent).toContain("600 GB");
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);
  });

  it("links a succeeded run of the team from the picker", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/runs": () => ({
        body: {
          items: [
            {
              id: "11111111-1111-1111-1111-111111111111",
              name: "rand4k on nvme",
              device_name: "nvme0n1",
              target_path: "/mnt",
            },
          ],
          total: 1,
        },
      }),
      "POST /api/v1/reviews/r1/candidates": () => ({ status: 201, body: { id: "c1" } }),
    });
    renderAt(<CandidateForm reviewId="r1" teamId="t1" onDone={() => {}} />);
    fill("f-source", "run");
    await screen.findByText(/rand4k on nvme/);
    fill("f-run", "11111111-1111-1111-1111-111111111111");
    fill("f-name", "nvme");
    fill("f-model", "nvme");
    fill("f-capacity", "1 TB");
    fill("f-price", "100");
    fill("f-count", "1");
    fill("f-protection", "jbod");
    fireEvent.click(screen.getByTestId("submit-candidate"));
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    const get = calls.find((c) => c.method === "GET" && c.path === "/api/v1/runs");
    expect(get).toBeTruthy();
    const body = calls.find((c) => c.method === "POST")?.body as Record<string, unknown>;
    expect(body.performance).toEqual({
      source: "run",
      run_id: "11111111-1111-1111-1111-111111111111",
      job_index: 0,
      metric: "iops",
    });
    expect(body.power).toBeNull();
  });
});
