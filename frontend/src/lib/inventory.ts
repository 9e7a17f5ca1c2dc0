// The agent's host inventory as the server serves it: AgentRead.inventory, the generated
// `Inventory` (src/client/types.ts). A host that reported none reads as an empty inventory.
import type { AgentRead, Inventory } from "../client/types";

const EMPTY: Inventory = {
  hostname: null,
  os: null,
  cpu: null,
  mem_bytes: null,
  virtualization: null,
  block_devices: [],
  mounts: [],
  topology: null,
  policy: null,
  capabilities: {
    workload_kinds: [],
    tpch_dbms: [],
    multi_target: false,
    protocol: null,
    engine_version: null,
    engine_features: null,
  },
};

export function inventoryOf(agent: AgentRead): Inventory {
  return agent.inventory ?? EMPTY;
}
