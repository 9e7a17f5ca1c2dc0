import { describe, expect, it } from "vitest";
import { describeTopology, partsFor, topologyDraftOf, topologyOf } from "./topologyDraft";

describe("environment topology draft", () => {
  it("turns typed fields into base units and shows parts by kind", () => {
    const d = {
      ...topologyDraftOf(null),
      raidLevel: "raid10",
      memberCount: "4",
      memberModel: "PM1733",
      memberCapacityGb: "3840",
      transport: "sas",
      linkGbps: "12",
      nasProtocol: "nfs",
      fstype: "xfs",
      mountOptions: "rw,noatime",
    };
    const t = topologyOf(d, "das");
    expect(t.raid?.members?.[0]).toEqual({
      model: "PM1733",
      count: 4,
      capacity_bytes: 3_840_000_000_000,
      media: null,
    });
    expect(t.fabric?.link_speed_bps).toBe(12_000_000_000);
    expect(t.nas).toBeUndefined(); // a DAS has no NAS protocol: not sent
    expect(topologyOf(d, "nas").raid).toBeUndefined();
    expect(topologyOf(d, "nas").nas?.protocol).toBe("nfs");
    expect(partsFor("cloud")).toEqual({ raid: false, fabric: false, nas: false });
    expect(Number.isNaN(topologyOf({ ...d, linkGbps: "fast" }, "das").fabric?.link_speed_bps)).toBe(
      true,
    );
  });
  it("reads a topology back into the same draft and describes it", () => {
    const d = {
      ...topologyDraftOf(null),
      raidLevel: "raid1",
      memberCount: "2",
      memberModel: "loop",
      fstype: "btrfs",
    };
    const t = topologyOf(d, "local");
    const back = topologyDraftOf({ ...t, controller: null, fabric: null, nas: null } as never);
    expect(back.raidLevel).toBe("raid1");
    expect(back.memberCount).toBe("2");
    const rows = describeTopology({
      raid: { ...t.raid, implementation: "btrfs" } as never,
      controller: null,
      fabric: { transport: "fc", link_speed_bps: 32e9, links: 2 },
      nas: null,
      filesystem: { fstype: "btrfs", mount_options: "" },
    });
    expect(rows).toEqual([
      ["RAID", "raid1 · btrfs · 2 devices · 2 × loop"],
      ["Fabric", "fc 32 Gb/s × 2 links"],
      ["File system", "btrfs"],
    ]);
  });
});
