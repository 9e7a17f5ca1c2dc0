import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { JobSummary, RunRead } from "../../client/types";
import { PSYNC_JOB } from "../../test/fixtures";
import { renderAt, stubApi } from "../../test/render";
import { compareValues } from "../Table/SortableTable";
import { JOBS_PER_PAGE, JobsOverview } from "./JobsOverview";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

type SpecJob = NonNullable<RunRead["workload"]["jobs"]>[number];

/** A kernel-help-sized run: n jobs, job k at (k + 1) × 100 IOPS; the first ran 20 s, the rest 2 s. */
function bigRun(n: number, ioengine: SpecJob["ioengine"] = "psync", iodepth = 1): RunRead {
  const jobs: JobSummary[] = Array.from({ length: n }, (_, k) => ({
    ...PSYNC_JOB,
    job_index: k,
    name: `read-${4 << (k % 11)}k-${k}`,
    runtime_ns: k === 0 ? 20e9 : 2e9,
    read: PSYNC_JOB.read && {
      ...PSYNC_JOB.read,
      iops: (k + 1) * 100,
      clat_p99_ns: 5000 + k,
      lat_mean_ns: 1000 + k,
    },
  }));
  return {
    id: "r1",
    jobs,
    workload: {
      kind: "block",
      jobs: jobs.map((j) => ({ name: j.name, iodepth, ioengine }) as SpecJob),
    },
  } as unknown as RunRead;
}

function names(): string[] {
  return screen.getAllByTestId("job-row").map((r) => r.getAttribute("data-job") ?? "");
}

describe("JobsOverview", () => {
  it("shows a 110-job run as one page of rows, every detail closed, one latency unit", () => {
    stubApi({});
    renderAt(<JobsOverview run={bigRun(110)} series={undefined} shortByDesign={false} />);
    expect(screen.getAllByTestId("job-row")).toHaveLength(JOBS_PER_PAGE);
    expect(screen.queryAllByTestId("job-result")).toHaveLength(0);
    expect(screen.getByTestId("jobs-table-pager").textContent).toContain("1–25 of 110");
    // p99 of 5,000..5,109 ns: µs for the whole column, not ns beside µs
    const head = screen.getByTestId("jobs-table").querySelector("thead")?.textContent ?? "";
    expect(head).toContain("p99 (µs)");
    // the short jobs are marked in their rows, the 20 s one is not
    const rows = screen.getAllByTestId("job-row");
    expect(within(rows[0] as HTMLElement).queryByTestId("job-validity")).toBeNull();
    expect(within(rows[1] as HTMLElement).getByTestId("job-validity").textContent).toContain(
      "under 10 s",
    );
    fireEvent.click(screen.getByTestId("jobs-table-next"));
    expect(names()[0]).toBe(`read-${4 << (25 % 11)}k-25`);
  });

  it("sorts by a column (IOPS: highest first) and opens a job's detail on demand", () => {
    stubApi({});
    renderAt(<JobsOverview run={bigRun(30)} series={undefined} shortByDesign={true} />);
    fireEvent.click(screen.getByTestId("sort-iops"));
    expect(names()[0]).toBe(`read-${4 << (29 % 11)}k-29`);
    fireEvent.click(screen.getByTestId("sort-iops"));
    expect(names()[0]).toBe("read-4k-0");
    const first = screen.getAllByTestId("job-row")[0] as HTMLElement;
    expect(within(first).queryByTestId("job-validity")).toBeNull();
    const second = screen.getAllByTestId("job-row")[1] as HTMLElement;
    expect(within(second).getByTestId("job-validity").textContent).toBe("short by design");
    fireEvent.click(within(first).getByTestId("job-toggle"));
    expect(screen.getAllByTestId("job-result")).toHaveLength(1);
    expect(screen.getByTestId("job-result").getAttribute("data-job")).toBe("read-4k-0");
  });

  it("opens a small run's jobs at once, and marks iodepth on a synchronous engine", () => {
    stubApi({});
    renderAt(<JobsOverview run={bigRun(3, "psync", 8)} series={undefined} shortByDesign={false} />);
    expect(screen.getAllByTestId("job-result")).toHaveLength(3);
    expect(screen.getAllByTestId("job-depth-capped")).toHaveLength(3);
    expect(screen.getAllByTestId("job-depth-capped")[0]?.getAttribute("title")).toContain(
      "capped at 1",
    );
  });

  it("no depth mark on an asynchronous engine", () => {
    stubApi({});
    renderAt(
      <JobsOverview run={bigRun(2, "io_uring", 32)} series={undefined} shortByDesign={false} />,
    );
    expect(screen.queryAllByTestId("job-depth-capped")).toHaveLength(0);
  });

  it("an imported job whose file states no runtime: no short mark, ran —", () => {
    stubApi({});
    const run = bigRun(2);
    const jobs = run.jobs.map((j) => ({ ...j, runtime_ns: 0 }));
    const imported = {
      ...run,
      jobs,
      origin: { kind: "imported", label: "imported from Bonnie++" },
    };
    renderAt(<JobsOverview run={imported as RunRead} series={undefined} shortByDesign={false} />);
    expect(screen.queryAllByTestId("job-validity")).toHaveLength(0);
    const cells = screen.getAllByTestId("job-row").map((r) => r.lastElementChild?.textContent);
    expect(cells).toEqual(["—", "—"]);
    // measured here, 0 ns is short
    renderAt(
      <JobsOverview run={{ ...run, jobs } as RunRead} series={undefined} shortByDesign={false} />,
    );
    expect(screen.getAllByTestId("job-validity")).toHaveLength(2);
  });
});

describe("compareValues", () => {
  it("orders numbers as numbers, names naturally and empty cells last", () => {
    expect([10, 9, 100].sort(compareValues)).toEqual([9, 10, 100]);
    expect(["read-16k", "read-4k", "read-128k"].sort(compareValues)).toEqual([
      "read-4k",
      "read-16k",
      "read-128k",
    ]);
    expect([null, 3, 1].sort(compareValues)).toEqual([1, 3, null]);
  });
});
