import { describe, expect, it } from "vitest";
import type { DetectionRead, HistoryPoint } from "../client/types";
import {
  annotations,
  clampLeftOut,
  formatMetric,
  historyRows,
  linkedRow,
  niceCeil,
  previousGood,
  valueTop,
} from "./history";

const point = (i: number, value: number, extra: Partial<HistoryPoint> = {}): HistoryPoint => ({
  run_id: `r${i}`,
  at: new Date(Date.UTC(2026, 10, 1, i)).toISOString(),
  value,
  low: null,
  high: null,
  runs: 1,
  excluded: [],
  segment: "a",
  ...extra,
});

describe("history rows", () => {
  const pts = [
    point(0, 100),
    point(1, 101),
    point(2, 300, { excluded: [{ flag: "cache_resident", message: "fits in RAM" }] }),
    point(3, 99, { segment: "b" }),
    point(4, 98, { segment: "b" }),
  ];
  const rows = historyRows(pts);

  it("keeps a run left out off the line, with its flags", () => {
    expect(rows[2]).toMatchObject({ y: null, left_out: 300, flags: ["cache_resident"] });
    expect(rows[1]).toMatchObject({ y: 101, left_out: null, band: null });
  });

  it("compares with the previous valid run on the same host facts only", () => {
    expect(previousGood(rows, 2)?.run_id).toBe("r1");
    expect(previousGood(rows, 3)).toBeNull(); // a new segment: nothing before it compares
    expect(previousGood(rows, 4)?.run_id).toBe("r3");
  });

  it("places host changes and changes found, leaving dismissed ones out", () => {
    const d = (id: string, run: string, status: DetectionRead["status"]) =>
      ({
        id,
        run_id: run,
        at: pts[4]?.at,
        change_pct: -12.5,
        direction: "regression",
        status,
      }) as DetectionRead;
    const notes = annotations(
      rows,
      [{ run_id: "r3", at: pts[3]?.at ?? "", changes: { kernel: ["6.1", "6.8"] } }],
      [d("d1", "r4", "open"), d("d2", "r4", "dismissed")],
    );
    expect(notes).toEqual([
      { i: 3, kind: "host", label: "kernel 6.1 → 6.8" },
      { i: 4, kind: "change", label: "-12.5 % regression" },
    ]);
  });

  it("picks the run a link names, or the bucket holding a change found at it", () => {
    expect(linkedRow(rows, "r3", [])?.run_id).toBe("r3");
    expect(linkedRow(rows, null, [])).toBeNull();
    expect(linkedRow(rows, "gone", [])).toBeNull();
    // downsampled: run r9 is inside the bucket that starts at r3; its change says when it ran
    const change = { id: "d9", run_id: "r9", at: pts[3]?.at } as DetectionRead;
    expect(linkedRow(rows, "r9", [change])?.run_id).toBe("r3");
  });

  it("draws a downsampled bucket as its mean with its range", () => {
    const [r] = historyRows([point(0, 100, { low: 90, high: 110, runs: 5 })]);
    expect(r).toMatchObject({ y: 100, band: [90, 110], runs: 5 });
  });

  it("formats each metric in its unit", () => {
    expect(formatMetric("read_lat_mean_ns", 1500)).toBe("1.5 µs");
    expect(formatMetric("read_bw_bytes", 5_430_000)).toBe("5.43 MB/s");
    expect(formatMetric("write_iops", null)).toBe("–");
  });
});

describe("the value axis", () => {
  it("rounds its top up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect([
      niceCeil(23_000),
      niceCeil(20_000),
      niceCeil(2.6),
      niceCeil(0.004),
      niceCeil(0),
    ]).toEqual([25_000, 20_000, 5, 0.005, 1]);
  });

  it("follows the valid runs and puts a run left out far above them on the top edge", () => {
    const rows = historyRows([
      point(0, 20_000),
      point(1, 20_400, { low: 19_000, high: 21_000, runs: 4 }),
      point(2, 50_000, { excluded: [{ flag: "cache_resident", message: "fits in RAM" }] }),
      point(3, 19_000, { excluded: [{ flag: "short_run", message: "2 s" }] }),
    ]);
    const top = valueTop(rows);
    expect(top).toBe(25_000); // 21,000 (the band's high) × 1.15, rounded up
    const shown = clampLeftOut(rows, top);
    expect(shown[2]).toMatchObject({ left_out: 50_000, left_out_shown: 25_000, off: true });
    expect(shown[3]).toMatchObject({ left_out: 19_000, left_out_shown: 19_000, off: false });
    expect(
      valueTop(historyRows([point(0, 5, { excluded: [{ flag: "imported", message: "" }] })])),
    ).toBeNull();
  });
});
