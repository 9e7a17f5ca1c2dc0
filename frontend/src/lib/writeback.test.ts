import { describe, expect, it } from "vitest";
import { limitText, type PageCache, pageCacheFacts, writebackRows } from "./writeback";

const MIB = 1024 * 1024;

const PC: PageCache = {
  dirty_ratio_pct: 20,
  dirty_background_ratio_pct: 10,
  dirty_bytes: 0,
  dirty_background_bytes: 256 * MIB,
  dirty_expire_ns: 30e9,
  dirty_writeback_ns: 5e9,
  mem_total_bytes: 8 * 1024 * MIB,
  device_name: "nvme0n1",
  read_ahead_bytes: 128 * 1024,
  scheduler: "none",
  write_cache: "write back",
  sampled: true,
};

describe("the page cache of a run", () => {
  it("says which of ratio and bytes rules the limit", () => {
    expect(limitText(20, 0)).toBe("20 % of dirtyable memory");
    expect(limitText(20, 256 * MIB)).toBe("256 MiB");
    expect(limitText(null, null)).toBe("—");
    const facts = Object.fromEntries(pageCacheFacts(PC).map(([k, v]) => [k, v]));
    expect(facts["Dirty limit"]).toBe("20 % of dirtyable memory");
    expect(facts["Background write-back from"]).toBe("256 MiB");
    expect(facts["Read-ahead"]).toBe("128 KiB");
    expect(facts["Write cache"]).toBe("write back");
  });

  it("puts memory in MiB and throughput on one time axis", () => {
    const rows = writebackRows(
      {
        points: [
          {
            t_s: 0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            dirty_threshold_bytes: 4096 * MIB,
            background_threshold_bytes: null,
          },
          {
            t_s: 2,
            dirty_bytes: 512 * MIB,
            writeback_bytes: 64 * MIB,
            dirty_threshold_bytes: 4096 * MIB,
            background_threshold_bytes: 2048 * MIB,
          },
        ],
      },
      [{ t_s: 1, mbps: 2000 }],
    );
    expect(rows.map((r) => r.t_s)).toEqual([0, 1, 2]);
    expect(rows[2]).toMatchObject({
      dirty_mib: 512,
      writeback_mib: 64,
      limit_mib: 4096,
      background_mib: 2048,
    });
    expect(rows[0]?.background_mib).toBeUndefined();
    expect(rows[1]).toEqual({ t_s: 1, mbps: 2000 });
  });
});
