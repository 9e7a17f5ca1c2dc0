import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { TokenRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { Tokens } from "./Tokens";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const CI: TokenRead = {
  id: "k1",
  name: "nightly CI",
  kind: "personal",
  scope: "write",
  created_at: "2026-11-01T10:00:00Z",
  expires_at: "2099-01-01T00:00:00Z",
  last_used_at: "2026-11-22T09:00:00Z",
  revoked_at: null,
  current: false,
};

describe("API tokens", () => {
  it("lists tokens without secrets, creates one shown once, and revokes after confirming", async () => {
    setToken("t");
    let tokens: TokenRead[] = [CI];
    const calls = stubApi({
      // As the server: only usable tokens unless include_inactive=true.
      "GET /api/v1/auth/tokens": (req) => {
        const all = new URL(req.url).searchParams.get("include_inactive") === "true";
        const items = tokens.filter((t) => all || !t.revoked_at);
        return { body: { items, total: items.length } };
      },
      "POST /api/v1/auth/tokens": () => {
        tokens = [
          ...tokens,
          { ...CI, id: "k2", name: "grafana", scope: "read", last_used_at: null },
        ];
        return {
          status: 201,
          body: {
            id: "k2",
            name: "grafana",
            scope: "read",
            token: "iwt_fresh",
            expires_at: CI.expires_at,
          },
        };
      },
      "DELETE /api/v1/auth/tokens/k1": () => {
        tokens = tokens.map((t) =>
          t.id === "k1" ? { ...t, revoked_at: "2026-11-22T12:00:00Z" } : t,
        );
        return { status: 204, body: null };
      },
    });
    renderAt(<Tokens />);
    const first = await screen.findByTestId("token-row");
    expect(first.textContent).toContain("nightly CI");
    expect(first.textContent).toContain("personal");
    expect(first.textContent).toContain("write");
    expect(first.dataset.state).toBe("active");

    // A name is required (client-side).
    fireEvent.click(screen.getByTestId("create-token"));
    expect((await screen.findByTestId("field-error-name")).dataset.source).toBe("client");
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), {
      target: { value: "grafana" },
    });
    fireEvent.change(screen.getByRole("combobox", { name: /Expires after/ }), {
      target: { value: String(30 * 86_400) },
    });
    // the scope's meaning is said under its select
    fireEvent.change(screen.getByRole("combobox", { name: /Scope/ }), {
      target: { value: "read" },
    });
    expect(screen.getByText(/read only: GET requests/)).toBeTruthy();
    fireEvent.click(screen.getByTestId("create-token"));
    expect((await screen.findByTestId("secret-value")).textContent).toBe("iwt_fresh");
    expect(screen.getByTestId("once-secret").textContent).toContain("(read)");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      name: "grafana",
      scope: "read",
      ttl_s: 30 * 86_400,
    });
    await waitFor(() => expect(screen.getAllByTestId("token-row")).toHaveLength(2));
    for (const row of screen.getAllByTestId("token-row"))
      expect(row.textContent).not.toContain("iwt_fresh");
    fireEvent.click(screen.getByTestId("secret-done"));
    expect(document.body.textContent).not.toContain("iwt_fresh");

    const row = screen.getAllByTestId("token-row")[0] as HTMLElement;
    fireEvent.click(within(row).getByTestId("revoke-token"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(dialog.textContent).toContain("Revoke “nightly CI”?");
    fireEvent.click(within(dialog).getByTestId("confirm-action"));
    // Gone from the list of usable tokens; shown as revoked when asked for.
    await waitFor(() => expect(screen.getAllByTestId("token-row")).toHaveLength(1));
    expect(screen.getByTestId("token-row").textContent).toContain("grafana");
    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
      "/api/v1/auth/tokens/k1",
    ]);
    fireEvent.click(screen.getByTestId("show-inactive"));
    await waitFor(() => expect(screen.getAllByTestId("token-row")).toHaveLength(2));
    const revoked = screen
      .getAllByTestId("token-row")
      .find((r) => r.textContent?.includes("nightly CI"));
    expect(revoked?.dataset.state).toBe("revoked");
    expect(within(revoked as HTMLElement).queryByTestId("revoke-token")).toBeNull();
  });

  it("marks this browser's session and warns that revoking it signs you out", async () => {
    setToken("t");
    const session: TokenRead = { ...CI, id: "s1", name: "browser", kind: "session", current: true };
    const calls = stubApi({
      "GET /api/v1/auth/tokens": () => ({ body: { items: [session, CI], total: 2 } }),
      "DELETE /api/v1/auth/tokens/s1": () => ({ status: 204, body: null }),
    });
    renderAt(<Tokens />);
    await waitFor(() => expect(screen.getAllByTestId("token-row")).toHaveLength(2));
    const [mine, ci] = screen.getAllByTestId("token-row") as HTMLElement[];
    expect(within(mine as HTMLElement).getByTestId("token-current").textContent).toBe(
      "this browser",
    );
    expect(within(ci as HTMLElement).queryByTestId("token-current")).toBeNull();
    // another token's dialog says nothing of signing out
    fireEvent.click(within(ci as HTMLElement).getByTestId("revoke-token"));
    expect(screen.queryByTestId("revoke-signs-out")).toBeNull();
    fireEvent.click(within(screen.getByTestId("confirm-dialog")).getByText("Cancel"));
    fireEvent.click(within(mine as HTMLElement).getByTestId("revoke-token"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("revoke-signs-out").textContent).toContain("signs you out");
    expect(within(dialog).getByTestId("confirm-action").textContent).toBe("Revoke and sign out");
    fireEvent.click(within(dialog).getByTestId("confirm-action"));
    await waitFor(() => expect(localStorage.getItem("iowatt.token")).toBeNull());
    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
      "/api/v1/auth/tokens/s1",
    ]);
  });

  it("shows the server's 422 on the field it names", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/tokens": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/auth/tokens": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid request",
          detail: [{ field: "ttl_s", message: "must be at most 63244800" }],
        },
      }),
    });
    renderAt(<Tokens />);
    await screen.findByText("No tokens.");
    fireEvent.change(screen.getByRole("textbox", { name: /Name/ }), { target: { value: "x" } });
    fireEvent.click(screen.getByTestId("create-token"));
    const err = await screen.findByTestId("field-error-ttl");
    expect(err.textContent).toContain("at most");
    expect(err.dataset.source).toBe("server");
  });
});
