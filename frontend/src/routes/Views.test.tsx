import { screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../lib/auth";
import { renderAt, stubApi } from "../test/render";
import { ViewPage, withoutOrigin } from "./Views";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

describe("Named view page", () => {
  it("disables Download CSV while the page shows a deleted run's error", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/views/table": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "runs: not found in your teams: r1",
          detail: [{ field: "runs", message: "not found in your teams: r1" }],
        },
      }),
    });
    renderAt(<ViewPage />, { path: "/views/cdm?runs=r1,r2", route: "/views/:view" });
    await screen.findByText(/no longer exists/);
    expect((screen.getByTestId("view-csv") as HTMLButtonElement).disabled).toBe(true);
  });
});

describe("a view's run label beside its origin badge", () => {
  it("drops the origin the server appended to the label (the badge says it), version or not", () => {
    const origin = {
      kind: "imported" as const,
      tool: "CrystalDiskMark",
      version: "8.0.4",
      format: "crystaldiskmark",
      file_name: null,
      sha256: null,
      reference: null,
      label: "imported from CrystalDiskMark",
    };
    const label = "sdb on lab-7 (imported from CrystalDiskMark 8)";
    expect(withoutOrigin({ label, origin })).toBe("sdb on lab-7");
    expect(withoutOrigin({ label: "sdb on lab-7 (shortened ×0.1)", origin: null })).toBe(
      "sdb on lab-7 (shortened ×0.1)",
    );
  });
});
