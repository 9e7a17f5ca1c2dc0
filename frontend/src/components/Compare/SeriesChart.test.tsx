import { fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { CompareRead } from "../../client/types";
import { renderAt, stubApi } from "../../test/render";
import { SeriesChart } from "./CompareCharts";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** n runs of one job, each with two per-second samples. */
function setup(n: number) {
  const ids = Array.from({ length: n }, (_, i) => `r${String(i).padStart(2, "0")}`);
  const routes = Object.fromEntries(
    ids.map((id) => [
      `GET /api/v1/runs/${id}/series`,
      () => ({
        body: {
          run_id: id,
          jobs: [
            {
              job_index: 0,
              name: "rr",
              points: [1, 2].map((t) => ({
                t_s: t,
                read_iops: 100,
                read_bw_bytes: 409_600,
                write_iops: 0,
                write_bw_bytes: 0,
                read_clat_p99_ns: null,
                write_clat_p99_ns: null,
              })),
            },
          ],
        },
      }),
    ]),
  );
  const calls = stubApi(routes);
  const data = {
    group_by: "none",
    runs: ids.map((id) => ({ id, name: `run ${id}`, status: "succeeded" })),
    columns: ids.map((id) => ({ key: id, label: id, run_ids: [id], is_baseline: false })),
  } as unknown as CompareRead;
  return { data, calls };
}

describe("SeriesChart", () => {
  it("says it shows 12 of 30 runs and draws all 30 on request (issue 25: it cut silently)", async () => {
    const { data, calls } = setup(30);
    renderAt(<SeriesChart data={data} job="rr" metric="iops" />);
    const shown = await screen.findByTestId("series-shown", {}, { timeout: 5000 });
    expect(shown.textContent).toContain("showing 12 of 30 runs");
    expect(calls.filter((c) => c.path.endsWith("/series"))).toHaveLength(12);
    fireEvent.click(screen.getByTestId("series-show-all"));
    await screen.findByText("showing 30 of 30 runs", { exact: false }, { timeout: 5000 });
    expect(calls.filter((c) => c.path.endsWith("/series"))).toHaveLength(30);
  });

  it("shows every run without a note when there are 12 or fewer", async () => {
    const { data } = setup(3);
    renderAt(<SeriesChart data={data} job="rr" metric="iops" />);
    await screen.findByTestId("series-chart", {}, { timeout: 5000 });
    expect(screen.queryByTestId("series-shown")).toBeNull();
  });
});
