import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import type { JobSummary } from "../../client/types";
import type { RunGroupRead } from "../../queries/runGroups";
import { PSYNC_JOB } from "../../test/fixtures";
import { clockText, GroupTable, signedNs } from "./GroupMembers";

const job = (iops: number, bw: number): JobSummary =>
  ({
    ...PSYNC_JOB,
    job_index: 0,
    read: null,
    write: PSYNC_JOB.read && { ...PSYNC_JOB.read, iops, bw_bytes: bw },
  }) as JobSummary;

function member(i: number, skew: number | null, missed: boolean) {
  return {
    run_id: `r${i}`,
    agent_id: `a${i}`,
    agent_name: `host-${i}`,
    target_path: `/srv/t${i}`,
    status: "succeeded" as const,
    error: null,
    ready_at: "2026-12-06T03:00:00Z",
    clock_offset_ns: i === 0 ? 1_500_000 : -200_000,
    clock_round_trip_ns: 400_000,
    start_skew_ns: skew,
    missed_start: missed,
    jobs: [job(1000 * (i + 1), 10e6 * (i + 1))],
    energy_j: 10 * (i + 1),
  };
}

function group(unsynchronized: boolean): RunGroupRead {
  return {
    id: "g1",
    team_id: "t1",
    name: "quick on 2 hosts",
    status: "succeeded",
    created_at: "2026-12-06T03:00:00Z",
    start_tolerance_ns: 5_000_000,
    prepare_timeout_s: 120,
    start_at: "2026-12-06T03:00:01Z",
    stop_reason: null,
    unsynchronized,
    max_start_skew_ns: unsynchronized ? 9_000_000 : 1_000_000,
    shared_store: "san-lun-7",
    members: [
      member(0, 1_000_000, false),
      member(1, unsynchronized ? -9_000_000 : 300_000, unsynchronized),
    ],
    combined: {
      members: 2,
      jobs: [job(3000, 30e6)],
      latency: "merged",
      energy_j: 30,
      load_w_mean: 19,
      energy_complete: true,
    },
  };
}

describe("GroupMembers", () => {
  it("formats signed skews and a clock's offset with its bound", () => {
    expect(signedNs(null)).toBe("—");
    expect(signedNs(-2_000_000)).toMatch(/^−2(\.0+)? ms$/);
    expect(clockText({ clock_offset_ns: 1_500_000, clock_round_trip_ns: 400_000 })).toMatch(
      /^\+1\.5 ms ± 200 µs$/,
    );
    expect(clockText({ clock_offset_ns: null, clock_round_trip_ns: null })).toBe("—");
  });

  it("shows every member with its skew, links the others and the combined row", () => {
    render(
      <MemoryRouter>
        <GroupTable group={group(false)} current="r0" />
      </MemoryRouter>,
    );
    const rows = screen.getAllByTestId("group-member");
    expect(rows).toHaveLength(2);
    const [first, second] = rows as [HTMLElement, HTMLElement];
    expect(within(first).queryByRole("link")).toBeNull(); // this run
    expect(within(second).getByRole("link", { name: "host-1" }).getAttribute("href")).toBe(
      "/runs/r1",
    );
    expect(within(second).getByTestId("member-skew").textContent).toMatch(/^\+300 µs$/);
    const combined = screen.getByTestId("group-combined");
    expect(within(combined).getByText("3k IOPS")).toBeTruthy();
    expect(combined.textContent).toMatch(/30(\.0)? J/);
    expect(screen.queryByTestId("group-unsynchronized")).toBeNull();
    expect(screen.getByTestId("group-members").textContent).toMatch(/shared store: san-lun-7/);
  });

  it("says a group is unsynchronized and which member missed the instant", () => {
    render(
      <MemoryRouter>
        <GroupTable group={group(true)} current="r0" />
      </MemoryRouter>,
    );
    expect(screen.getByTestId("group-unsynchronized")).toBeTruthy();
    const skews = screen.getAllByTestId("member-skew").map((c) => c.textContent);
    expect(skews[1]).toMatch(/^−9(\.0+)? ms \(missed\)$/);
  });

  it("a stopped group: each member's own status and why, and no combined figure", () => {
    const g = group(false);
    const lost = {
      ...member(0, null, false),
      status: "failed" as const,
      error: "lost: the agent stopped answering",
      jobs: [],
    };
    const cancelled = {
      ...member(1, 300_000, false),
      status: "cancelled" as const,
      error: "the group stopped: member host-0:/srv/t0 failed: lost",
    };
    render(
      <MemoryRouter>
        <GroupTable
          group={{
            ...g,
            status: "failed",
            stop_reason: "member host-0:/srv/t0 failed: lost",
            members: [lost, cancelled],
            combined: null,
          }}
          current="r1"
        />
      </MemoryRouter>,
    );
    const statuses = screen.getAllByTestId("member-status").map((c) => c.textContent);
    expect(statuses[0]).toBe("failedlost: the agent stopped answering");
    expect(statuses[1]).toContain("cancelledthe group stopped");
    expect(screen.queryByTestId("group-combined")).toBeNull();
    expect(screen.getByTestId("group-no-combined").textContent).toContain(
      "0 of 2 members succeeded",
    );
  });
});
