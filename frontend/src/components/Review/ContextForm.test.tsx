import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { ContextForm } from "./ContextForm";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const fill = (id: string, value: string) =>
  fireEvent.change(document.getElementById(id) as HTMLElement, { target: { value } });

const env = {
  id: "e1",
  team_id: "t1",
  name: "Lab A",
  electricity_price_per_kwh: "0.21",
  currency: "EUR",
  effective_g_per_kwh: 380,
  pue: 1.4,
};

describe("review context form", () => {
  it("takes tariff, grid and PUE from the environment unless typed, and sends the weights", async () => {
    setToken("t");
    let created = "";
    const calls = stubApi({
      "GET /api/v1/environments": () => ({ body: { items: [env], total: 1 } }),
      "POST /api/v1/reviews": () => ({ status: 201, body: { id: "r9" } }),
    });
    renderAt(
      <ContextForm
        teamId="t1"
        onDone={(r) => {
          created = r.id;
        }}
      />,
    );
    await screen.findByText("Lab A");
    fill("f-name", "Archive tier");
    fill("f-currency", "eur");
    fill("f-environment", "e1");
    // the environment's figures are named where an empty field takes them
    expect(screen.getByText(/Lab A's price \(0.21\)/)).toBeTruthy();
    fill("f-grid", "250");
    fill("f-w-usable_capacity", "2");
    fireEvent.click(screen.getByTestId("submit-review"));
    await waitFor(() => expect(created).toBe("r9"));
    const body = calls.find((c) => c.method === "POST")?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      team_id: "t1",
      name: "Archive tier",
      currency: "EUR",
      environment_id: "e1",
      tariff_per_kwh: null,
      grid_g_per_kwh: "250",
      pue: null,
      weights: { tco: "1", performance: "1", co2e_lifetime: "1", usable_capacity: "2" },
    });
  });

  it("shows the server's 422 beside the currency", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/reviews": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid input",
          detail: [{ field: "currency", message: "not an ISO 4217 currency: XXY" }],
        },
      }),
    });
    renderAt(<ContextForm teamId="t1" onDone={() => {}} />);
    fill("f-name", "x");
    fill("f-currency", "XXY");
    fireEvent.click(screen.getByTestId("submit-review"));
    expect((await screen.findByTestId("field-error-currency")).textContent).toContain("ISO 4217");
  });
});
