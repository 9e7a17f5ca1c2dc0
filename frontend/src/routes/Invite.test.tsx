import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { getToken, setToken } from "../lib/auth";
import { getCurrentTeamId } from "../lib/role";
import { stubApi } from "../test/render";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function renderApp(path: string) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter initialEntries={[path]}>
        <App />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`no #${id}`);
  return el;
}

const PREVIEW = {
  team_id: "t1",
  team_name: "storage lab",
  inviter: "Ada Admin",
  email: "vi@example.com",
  role: "viewer",
  state: "pending",
  expires_at: "2099-11-29T00:00:00Z",
};

const USER = {
  id: "u9",
  email: "vi@example.com",
  display_name: "Vi",
  teams: [{ id: "t1", name: "storage lab", role: "viewer" }],
};

describe("accept an invitation", () => {
  it("shows team, role and inviter without login, then joins, signs in and lands on the runs", async () => {
    const calls = stubApi({
      "GET /api/v1/invitations/iwi_ok": () => ({ body: PREVIEW }),
      "POST /api/v1/invitations/iwi_ok/accept": () => ({
        body: { access_token: "session-vi", token_type: "bearer", expires_at: null, user: USER },
      }),
      "GET /api/v1/auth/me": () => ({ body: USER }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    renderApp("/invite/iwi_ok");
    const summary = await screen.findByTestId("invite-summary");
    expect(summary.textContent).toContain("Ada Admin invites vi@example.com");
    expect(summary.textContent).toContain("storage lab");
    expect(screen.getByTestId("invite-role").textContent).toBe("viewer");
    expect(screen.queryByTestId("login-form")).toBeNull();

    // client-side checks first: name, 8+ characters, the same password twice
    fireEvent.click(screen.getByTestId("accept-invite"));
    expect(await screen.findByTestId("field-error-name")).toBeTruthy();
    expect(screen.getByTestId("field-error-password").textContent).toContain("8");
    fireEvent.change(byId("f-name"), { target: { value: "Vi" } });
    fireEvent.change(byId("f-password"), { target: { value: "long enough" } });
    fireEvent.change(byId("f-confirm"), { target: { value: "different" } });
    fireEvent.click(screen.getByTestId("accept-invite"));
    expect((await screen.findByTestId("field-error-confirm")).textContent).toContain("differ");
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    fireEvent.change(byId("f-confirm"), {
      target: { value: "long enough" },
    });
    fireEvent.click(screen.getByTestId("accept-invite"));
    // the runs page loads lazily: slow on a loaded machine
    expect(await screen.findByText("No runs yet.", {}, { timeout: 10_000 })).toBeTruthy();
    expect(getToken()).toBe("session-vi");
    expect(getCurrentTeamId()).toBe("t1");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      display_name: "Vi",
      password: "long enough",
    });
    // a viewer: no New run anywhere
    expect(screen.queryByTestId("new-run")).toBeNull();
  });

  it.each([
    ["iwi_revoked", 410, "invitation_revoked", "Invitation revoked"],
    ["iwi_used", 410, "invitation_used", "Invitation already used"],
    ["iwi_expired", 410, "invitation_expired", "Invitation expired"],
    ["iwi_nope", 404, "invitation_not_found", "Invitation link not valid"],
  ])("a %s link gets a page saying so, never the login page", async (tok, status, code, title) => {
    stubApi({
      [`GET /api/v1/invitations/${tok}`]: () => ({
        status,
        body: {
          error: code,
          message: "this invitation was revoked on 2026-11-22 01:00 UTC: ask a team admin",
          detail: { state: "revoked" },
        },
      }),
    });
    renderApp(`/invite/${tok}`);
    const gone = await screen.findByTestId("invite-gone");
    expect(gone.dataset.code).toBe(code);
    expect(gone.querySelector("h2")?.textContent).toBe(title);
    expect(gone.textContent).toContain("ask a team admin");
    expect(screen.queryByTestId("login-form")).toBeNull();
    expect(screen.queryByTestId("invite-form")).toBeNull();
  });

  it("an existing account signs in first; signed in as it, one click joins with its token", async () => {
    const calls = stubApi({
      "GET /api/v1/invitations/iwi_ok": () => ({ body: PREVIEW }),
      "GET /api/v1/auth/me": () => ({ body: { ...USER, teams: [] } }),
      "POST /api/v1/invitations/iwi_ok/accept": () => ({
        body: { access_token: "session-2", token_type: "bearer", expires_at: null, user: USER },
      }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    const { unmount } = renderApp("/invite/iwi_ok");
    const link = await screen.findByRole("link", { name: "Sign in" });
    expect(link.getAttribute("href")).toBe(`/login?next=${encodeURIComponent("/invite/iwi_ok")}`);
    // the preview never says whether the address has an account: both ways are offered
    expect(screen.getByTestId("invite-form")).toBeTruthy();
    unmount();

    setToken("session-1");
    renderApp("/invite/iwi_ok");
    fireEvent.click(await screen.findByTestId("accept-invite"));
    // the runs page loads lazily: slow on a loaded machine
    expect(await screen.findByText("No runs yet.", {}, { timeout: 10_000 })).toBeTruthy();
    const post = calls.find((c) => c.method === "POST");
    expect(post?.body).toEqual({});
    expect(getToken()).toBe("session-2");
  });
});
