// The agent's host inventory arrives as free-form JSON (AgentRead.inventory); this reads the
// fields the UI shows, tolerating hosts that report less (see agent/src/iowatt_agent/schemas.py).

interface BlockDeviceFacts {
  name: string;
  model: string | null;
  size_bytes: number | null;
  rotational: boolean | null;
  interface: string | null;
  scheduler: string | null;
  firmware: string | null;
}

interface MountFacts {
  mountpoint: string;
  source: string;
  fstype: string;
  options: string;
}

interface HostFacts {
  kernel: string | null;
  distro: string | null;
  cpuModel: string | null;
  cpuCores: number | null;
  memBytes: number | null;
  virtualization: string | null;
  blockDevices: BlockDeviceFacts[];
  mounts: MountFacts[];
}

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === "boolean" ? v : null);

export function readInventory(inv: unknown): HostFacts {
  const i = obj(inv);
  const os = obj(i.os);
  const cpu = obj(i.cpu);
  const devices = Array.isArray(i.block_devices) ? i.block_devices : [];
  const mounts = Array.isArray(i.mounts) ? i.mounts : [];
  return {
    kernel: str(os.kernel),
    distro: str(os.distro),
    cpuModel: str(cpu.model),
    cpuCores: num(cpu.cores),
    memBytes: num(i.mem_bytes),
    virtualization: str(i.virtualization),
    blockDevices: devices.map((d) => {
      const o = obj(d);
      return {
        name: str(o.name) ?? "?",
        model: str(o.model),
        size_bytes: num(o.size_bytes),
        rotational: bool(o.rotational),
        interface: str(o.interface),
        scheduler: str(o.scheduler),
        firmware: str(o.firmware),
      };
    }),
    mounts: mounts.map((m) => {
      const o = obj(m);
      return {
        mountpoint: str(o.mountpoint) ?? "?",
        source: str(o.source) ?? "",
        fstype: str(o.fstype) ?? "",
        options: str(o.options) ?? "",
      };
    }),
  };
}
