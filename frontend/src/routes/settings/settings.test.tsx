import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { Devices } from "./Devices";
import { Environments } from "./Environments";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const ENV = {
  id: "e1",
  team_id: "t1",
  name: "lab",
  kind: "local",
  description: "",
  region: "DE",
  grid_g_per_kwh: null,
  grid_source: null,
  pue: 1.4,
  electricity_price_per_kwh: 0.31,
  currency: "EUR",
  effective_g_per_kwh: 380,
  effective_source: "Ember 2023 (DE)",
  hourly_hours: 0,
  created_at: "2026-11-21T10:00:00Z",
};

const GRIDS = [
  { region: "DE", name: "Germany", g_per_kwh: 380, year: 2023, source: "Ember" },
  { region: "FR", name: "France", g_per_kwh: 56, year: 2023, source: "Ember" },
];

describe("Environments", () => {
  it("creates an environment with a region, shown with its intensity, source and year", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/environments": () => ({ body: { items: [ENV], total: 1 } }),
      "GET /api/v1/carbon/grid-intensities": () => ({ body: GRIDS }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "a@b",
          display_name: "a",
          teams: [{ id: "t1", name: "x", role: "admin" }],
        },
      }),
      "POST /api/v1/environments": () => ({
        status: 201,
        body: { ...ENV, id: "e2", name: "paris" },
      }),
    });
    renderAt(<Environments />);
    expect((await screen.findByTestId("effective-intensity")).textContent).toContain(
      "380 gCO2e/kWh",
    );
    fireEvent.click(await screen.findByTestId("new-environment"));
    const form = screen.getByTestId("environment-form");
    // role queries are slow on a loaded machine: more than the default second
    await within(form).findByRole(
      "option",
      { name: /FR — France \(56 gCO2e\/kWh, Ember 2023\)/ },
      { timeout: 10_000 },
    );
    fireEvent.change(within(form).getByRole("textbox", { name: /Name/ }), {
      target: { value: "paris" },
    });
    fireEvent.change(within(form).getByTestId("region-select"), { target: { value: "FR" } });
    expect(form.textContent).toContain("56 gCO2e/kWh · Ember, 2023");
    fireEvent.change(within(form).getByRole("textbox", { name: /PUE/ }), {
      target: { value: "1,2" },
    });
    fireEvent.click(within(form).getByTestId("save-environment"));
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({
      team_id: "t1",
      name: "paris",
      region: "FR",
      pue: 1.2,
      grid_g_per_kwh: null,
    });
  });

  it("uploads an hourly CSV and shows the server's line errors", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/environments": () => ({ body: { items: [ENV], total: 1 } }),
      "GET /api/v1/carbon/grid-intensities": () => ({ body: GRIDS }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "a@b",
          display_name: "a",
          teams: [{ id: "t1", name: "x", role: "member" }],
        },
      }),
      "PUT /api/v1/environments/e1/grid-intensity": () => ({
        status: 422,
        body: {
          error: "invalid",
          message: "invalid input",
          detail: [{ field: "body.line.3", message: "g_per_kwh must be between 0 and 2000" }],
        },
      }),
    });
    renderAt(<Environments />);
    await screen.findByTestId("environment-row");
    fireEvent.click(await screen.findByRole("button", { name: "Edit" }));
    const file = new File(
      ["hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,300\n2026-01-01T01:00:00Z,9999\n"],
      "grid.csv",
      {
        type: "text/csv",
      },
    );
    fireEvent.change(screen.getByTestId("grid-file"), { target: { files: [file] } });
    expect((await screen.findByTestId("grid-upload-result")).textContent).toBe(
      "line 3: g_per_kwh must be between 0 and 2000",
    );
  });
});

describe("Devices", () => {
  it("shows the embodied default with its source and sends an override", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/devices": () => ({
        body: {
          items: [
            {
              id: "d1",
              team_id: "t1",
              agent_id: "a1",
              key: "block:sda",
              name: "sda",
              kind: "block",
              media: "hdd",
              capacity_bytes: 4e12,
              embodied_kg: 20,
              embodied_source: "Tannu & Nair 2023",
              embodied_is_default: true,
              lifetime_years: 5,
              facts: {},
              created_at: "2026-11-21T10:00:00Z",
            },
          ],
          total: 1,
        },
      }),
      "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "a@b",
          display_name: "a",
          teams: [{ id: "t1", name: "x", role: "member" }],
        },
      }),
      "GET /api/v1/carbon/embodied-defaults": () => ({
        body: [
          {
            media: "hdd",
            kg_per_drive: 20,
            kg_per_gb: null,
            low: 10,
            high: 30,
            source: "Tannu & Nair 2023",
          },
        ],
      }),
      "PATCH /api/v1/devices/d1": () => ({ body: {} }),
    });
    renderAt(<Devices />);
    const cell = await screen.findByTestId("device-embodied");
    expect(cell.textContent).toBe("20 kgCO2edefault: Tannu & Nair 2023");
    fireEvent.click(await screen.findByRole("button", { name: "Edit" }));
    const form = screen.getByTestId("device-form");
    await waitFor(() => expect(form.textContent).toContain("default: 20 kgCO2e per drive"));
    fireEvent.change(within(form).getByRole("textbox", { name: /Embodied carbon override/ }), {
      target: { value: "35" },
    });
    fireEvent.change(within(form).getByRole("textbox", { name: /Source of the override/ }), {
      target: { value: "vendor PCF" },
    });
    fireEvent.click(within(form).getByTestId("save-device"));
    await waitFor(() =>
      expect(
        calls.some((c) => c.method === "PATCH"),
        form.textContent ?? "",
      ).toBe(true),
    );
    expect(calls.find((c) => c.method === "PATCH")?.body).toMatchObject({
      media: "hdd",
      embodied_kg: 35,
      embodied_source: "vendor PCF",
      lifetime_years: 5,
      capacity_bytes: 4e12,
    });
  });
});
