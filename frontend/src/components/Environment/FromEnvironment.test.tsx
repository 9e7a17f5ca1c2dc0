import { fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvironmentRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { FromEnvironment, type Protection, protectionOf } from "./FromEnvironment";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function env(over: Partial<EnvironmentRead>): EnvironmentRead {
  return {
    id: "e1",
    team_id: "t1",
    name: "rack 3",
    kind: "das",
    description: "",
    notes: "",
    region: null,
    grid_g_per_kwh: null,
    grid_source: null,
    pue: 1,
    electricity_price_per_kwh: null,
    currency: "EUR",
    topology: { raid: null, controller: null, fabric: null, nas: null, filesystem: null },
    protection: null,
    member_count: null,
    effective_g_per_kwh: 445,
    effective_source: "world",
    hourly_hours: 0,
    created_at: "2026-12-05T00:00:00Z",
    ...over,
  };
}

const raid10 = env({
  id: "e2",
  name: "array",
  protection: "raid10",
  member_count: 8,
  topology: {
    raid: {
      level: "raid10",
      implementation: "hardware",
      member_count: 8,
      hot_spares: 1,
      stripe_bytes: null,
      members: [],
    },
    controller: null,
    fabric: null,
    nas: null,
    filesystem: null,
  },
});

describe("protection from an environment", () => {
  it("counts the hot spares in the candidate's drives; no RAID level: nothing to take", () => {
    expect(protectionOf(raid10)).toEqual({ protection: "raid10", count: 9, hotSpares: 1 });
    expect(protectionOf(env({}))).toBeNull();
  });

  it("offers only environments with a RAID level and fills the form with the picked one", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/environments": () => ({ body: { items: [env({}), raid10], total: 2 } }),
    });
    let picked: Protection | null = null;
    renderAt(
      <FromEnvironment
        teamId="t1"
        onPick={(p) => {
          picked = p;
        }}
      />,
    );
    const select = (await screen.findByTestId("protection-from-environment")).querySelector(
      "select",
    ) as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual([
      "— its protection and drives —",
      "array: raid10, 9 drives",
    ]);
    fireEvent.change(select, { target: { value: "e2" } });
    expect(picked).toEqual({ protection: "raid10", count: 9, hotSpares: 1 });
  });
});
