import { cleanup, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { EnergyRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { powerChartData } from "../../lib/energy";
import type { WorkloadKind } from "../../lib/fileWorkload";
import { NO_ENERGY, OK_ENERGY, POWER_SERIES } from "../../test/fixtures";
import { renderAt, stubApi } from "../../test/render";
import { EnergyPanel } from "./EnergyPanel";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function show(energy: EnergyRead, kind?: WorkloadKind) {
  setToken("t");
  const calls = stubApi({ "GET /api/v1/runs/r1/power": () => ({ body: POWER_SERIES }) });
  renderAt(<EnergyPanel runId="r1" energy={energy} kind={kind} />);
  return calls;
}

describe("EnergyPanel", () => {
  it("explains how to add a meter when the run had none, and asks for no power series", () => {
    const calls = show(NO_ENERGY);
    expect(screen.getByTestId("energy-none").textContent).toContain("No meter");
    expect(screen.getByTestId("energy-panel").textContent).toContain("meters set");
    expect(screen.queryByTestId("tier-badge")).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it("tells an uploaded run's reader how an upload carries power, and a viewer nothing", () => {
    setToken("t");
    stubApi({});
    const { unmount } = renderAt(<EnergyPanel runId="r1" energy={NO_ENERGY} source="import" />);
    const hint = screen.getByTestId("energy-hint").textContent ?? "";
    expect(hint).toContain("The upload carried no power samples");
    expect(hint).toContain("Uploads from CI");
    expect(hint).not.toContain("meters set");
    unmount();
    renderAt(<EnergyPanel runId="r1" energy={NO_ENERGY} canAct={false} />);
    expect(screen.getByTestId("energy-none").textContent).toContain("No meter");
    expect(screen.queryByTestId("energy-hint")).toBeNull();
  });

  it("says an imported or published run's file carries no power, with no upload or meter hint", () => {
    setToken("t");
    stubApi({});
    const imported = { kind: "imported", label: "imported from fio 3.33" };
    const { unmount } = renderAt(
      <EnergyPanel runId="r1" energy={NO_ENERGY} source="import" origin={imported} />,
    );
    expect(screen.getByTestId("energy-none").textContent).toBe(
      "No energy figures: imported from fio 3.33: the file holds no power samples, and nothing was measured here.",
    );
    expect(screen.queryByTestId("energy-hint")).toBeNull();
    unmount();
    const published = { kind: "published", label: "published by Samsung: not measured here" };
    renderAt(<EnergyPanel runId="r1" energy={NO_ENERGY} source="import" origin={published} />);
    expect(screen.getByTestId("energy-none").textContent).toBe(
      "No energy figures: published figures state no power.",
    );
  });

  it("shows the reason when the meter gave no data", () => {
    show({
      ...NO_ENERGY,
      status: "no_meter_data",
      reason: "shelly://plug-1: connection refused",
      tier: "plug",
      tier_label: "smart plug (informative)",
      source: "shelly://plug-1",
    });
    expect(screen.getByTestId("energy-no-data").textContent).toContain("connection refused");
    expect(screen.getByTestId("tier-badge").textContent).toBe("smart plug (informative)");
  });

  it("says computing while the server integrates", () => {
    show({
      ...NO_ENERGY,
      status: "pending",
      reason: "being computed",
      tier: "bmc",
      tier_label: "BMC",
    });
    expect(screen.getByTestId("energy-pending").textContent).toContain("energy: computing…");
  });

  it("says energy is unavailable with the server's reason once it failed", () => {
    show({
      ...NO_ENERGY,
      status: "failed",
      reason: "not computed within 15 minutes of the upload",
      tier: "bmc",
      tier_label: "BMC",
    });
    expect(screen.getByTestId("energy-panel").dataset.status).toBe("failed");
    expect(screen.getByTestId("energy-failed").textContent).toContain(
      "energy unavailable: not computed within 15 minutes of the upload",
    );
    expect(screen.queryByTestId("energy-figures")).toBeNull();
  });

  it("says read/write operations, not IOPS or I/Os, for a file run (PostMark, vdbench)", () => {
    for (const kind of ["postmark", "vdbench"] as const) {
      cleanup();
      show(OK_ENERGY, kind);
      const perMio = screen.getByTestId("energy-per-mio").textContent ?? "";
      const perWatt = screen.getByTestId("energy-per-watt").textContent ?? "";
      expect(perMio).toContain("Energy per million read/write operations");
      expect(perMio).toContain("45.6 J/M ops");
      expect(perWatt).toContain("Read/write op/s per watt");
      expect(perWatt).toContain("1.23k op/s/W");
      const text = screen.getByTestId("energy-panel").textContent ?? "";
      expect(text).not.toContain("IOPS");
      expect(text).not.toContain("I/Os");
    }
  });

  it("shows figures with units, ± uncertainty, carbon basis and flags in words", async () => {
    const calls = show(OK_ENERGY);
    const panel = screen.getByTestId("energy-panel");
    expect(screen.getByTestId("energy-total").textContent).toContain("3.963 ± 0.012 kJ");
    expect(panel.textContent).toContain("264 W");
    expect(panel.textContent).toContain("200 W");
    expect(panel.textContent).toContain("123 J/GB");
    expect(panel.textContent).toContain("45.6 J/M I/Os");
    expect(panel.textContent).toContain("1.23k IOPS/W");
    expect(panel.textContent).toContain("12.3 MB/s/W");
    expect(screen.getByTestId("energy-co2").textContent).toContain("0.586 gCO2e");
    const basis = screen.getByTestId("energy-carbon-basis").textContent ?? "";
    expect(basis).toContain("380 gCO2e/kWh");
    expect(basis).toContain("Ember 2023 (DE)");
    expect(basis).toContain("annual average");
    expect(basis).toContain("PUE 1.4");
    const flags = screen.getByTestId("energy-flags").textContent ?? "";
    expect(flags).toContain("cover only 90.0 %");
    expect(flags).toContain("Idle drift");
    expect(flags).toContain("Accuracy assumed");
    expect(screen.getByTestId("energy-dropped").textContent).toContain("2 negative");
    expect(screen.queryByTestId("estimate-banner")).toBeNull();
    expect(screen.getByTestId("tier-badge").textContent).toBe("BMC");
    await waitFor(() => expect(calls.map((c) => c.path)).toContain("/api/v1/runs/r1/power"));
    await screen.findByTestId("power-chart");
  });

  it("labels an estimate unmistakably", () => {
    show({
      ...OK_ENERGY,
      tier: "estimate",
      tier_label: "estimate (no meter)",
      estimated: true,
      flags: ["estimate"],
    });
    expect(screen.getByTestId("estimate-banner").textContent).toContain("ESTIMATE");
    expect(screen.getByTestId("tier-badge").textContent).toContain("ESTIMATE");
    expect(screen.getByTestId("energy-panel").className).toContain("energy-estimate");
  });
});

describe("powerChartData", () => {
  it("puts phases and throughput on the load-relative time axis", () => {
    const { rows, phases } = powerChartData(POWER_SERIES, [
      { t_s: 1, mbps: 100 },
      { t_s: 2, mbps: 110 },
    ]);
    expect(phases).toEqual([
      { name: "idle_before", x1: -30, x2: 0 },
      { name: "load", x1: 0, x2: 15 },
      { name: "idle_after", x1: 15, x2: 45 },
    ]);
    expect(rows.map((r) => r.t_s)).toEqual([-10, 0, 1, 2, 5, 10, 20]);
    expect(rows[0]?.w_band).toEqual([190, 270]);
    expect(rows[2]?.mbps).toBe(100);
    expect(rows[2]?.w_mean).toBeUndefined();
  });
});
