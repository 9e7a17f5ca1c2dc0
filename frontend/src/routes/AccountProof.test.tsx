import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { clearToken, getToken, setToken } from "../lib/auth";
import { stubApi } from "../test/render";

// Who owns an e-mail (docs/adr/0026): the reset, verification, SSO link and admin pages.

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
  clearToken();
  sessionStorage.clear();
  window.history.replaceState(null, "", "/");
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

const ME = {
  id: "u1",
  email: "ceo@bigcorp.example",
  display_name: "CEO",
  teams: [],
  password_set: true,
  email_verified: false,
  is_instance_admin: false,
  can_create_teams: false,
};
const SESSION = { access_token: "new-session", token_type: "bearer", expires_at: null, user: ME };

describe("password reset", () => {
  it("asks for a mail and shows the server's answer, the same for any address", async () => {
    const calls = stubApi({
      "POST /api/v1/auth/password-reset": () => ({
        status: 202,
        body: { message: "if an account uses this address, a link is on its way" },
      }),
    });
    renderApp("/reset-password");
    const form = await screen.findByTestId("reset-request");
    fireEvent.change(within(form).getByRole("textbox"), {
      target: { value: "ceo@bigcorp.example" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Mail me a link" }));
    expect((await screen.findByTestId("reset-sent")).textContent).toContain("If an account uses");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ email: "ceo@bigcorp.example" });
  });

  it("says to ask an administrator when the server sends no mail", async () => {
    stubApi({
      "POST /api/v1/auth/password-reset": () => ({
        status: 404,
        body: {
          error: "mail_not_configured",
          message: "this server sends no mail: ask an instance administrator for a reset link",
        },
      }),
    });
    renderApp("/reset-password");
    const form = await screen.findByTestId("reset-request");
    fireEvent.change(within(form).getByRole("textbox"), { target: { value: "a@b.example" } });
    fireEvent.click(within(form).getByRole("button", { name: "Mail me a link" }));
    const alert = await screen.findByTestId("form-error");
    expect(alert.textContent).toContain("instance administrator");
    expect(alert.dataset.noMail).toBe("true");
  });

  it("with a link's token: checks the pair, saves, signs in and forgets the fragment", async () => {
    window.history.replaceState(null, "", "/reset-password#token=iwp_secret");
    const calls = stubApi({
      "POST /api/v1/auth/password-reset/confirm": () => ({ body: SESSION }),
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    renderApp("/reset-password");
    await screen.findByTestId("reset-choose");
    await waitFor(() => expect(window.location.hash).toBe(""));
    fireEvent.change(byId("f-password"), { target: { value: "short" } });
    fireEvent.click(screen.getByTestId("reset-save"));
    expect((await screen.findByTestId("field-error-password")).textContent).toContain("at least 8");
    fireEvent.change(byId("f-password"), { target: { value: "a new password" } });
    fireEvent.change(byId("f-confirm"), { target: { value: "another one" } });
    fireEvent.click(screen.getByTestId("reset-save"));
    expect((await screen.findByTestId("field-error-confirm")).textContent).toContain("differ");
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.change(byId("f-confirm"), { target: { value: "a new password" } });
    fireEvent.click(screen.getByTestId("reset-save"));
    await waitFor(() => expect(getToken()).toBe("new-session"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      token: "iwp_secret",
      password: "a new password",
    });
  });

  it("a used or expired link says so and offers a new one", async () => {
    window.history.replaceState(null, "", "/reset-password#token=iwp_used");
    stubApi({
      "POST /api/v1/auth/password-reset/confirm": () => ({
        status: 410,
        body: { error: "account_token_gone", message: "this link is unknown, used, expired" },
      }),
    });
    renderApp("/reset-password");
    await screen.findByTestId("reset-choose");
    fireEvent.change(byId("f-password"), { target: { value: "12345678" } });
    fireEvent.change(byId("f-confirm"), { target: { value: "12345678" } });
    fireEvent.click(screen.getByTestId("reset-save"));
    const alert = await screen.findByTestId("form-error");
    expect(within(alert).getByRole("link", { name: "Ask for a new link" })).toBeTruthy();
  });
});

describe("e-mail verification", () => {
  it("not signed in: keeps the token in the tab and asks to sign in first", async () => {
    window.history.replaceState(null, "", "/verify-email#token=iwp_v");
    stubApi({});
    renderApp("/verify-email");
    expect(await screen.findByTestId("verify-sign-in")).toBeTruthy();
    expect(sessionStorage.getItem("iowatt.verify-email-token")).toBe("iwp_v");
  });

  it("signed in as the account: confirms it", async () => {
    sessionStorage.setItem("iowatt.verify-email-token", "iwp_v");
    setToken("s");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "POST /api/v1/auth/email-verification/confirm": () => ({ status: 204, body: null }),
    });
    renderApp("/verify-email");
    expect((await screen.findByTestId("verify-done")).textContent).toContain("ceo@bigcorp.example");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ token: "iwp_v" });
    expect(sessionStorage.getItem("iowatt.verify-email-token")).toBeNull();
  });

  it("signed in as another account: says whose link it is", async () => {
    window.history.replaceState(null, "", "/verify-email#token=iwp_v");
    setToken("s");
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "POST /api/v1/auth/email-verification/confirm": () => ({
        status: 403,
        body: { error: "wrong_account", message: "this link verifies another account's address" },
      }),
    });
    renderApp("/verify-email");
    const failed = await screen.findByTestId("verify-failed");
    expect(failed.dataset.code).toBe("wrong_account");
    expect(failed.textContent).toContain("signed in as ceo@bigcorp.example");
  });
});

describe("single sign-on meets an unproven account", () => {
  it("asks for the account's password, links, signs in", async () => {
    window.history.replaceState(
      null,
      "",
      "/login/oidc#link=link-code-123&email=ceo%40bigcorp.example",
    );
    const calls = stubApi({
      "POST /api/v1/auth/oidc/link": () => ({ body: SESSION }),
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    renderApp("/login/oidc");
    const form = await screen.findByTestId("oidc-link");
    expect(form.textContent).toContain("ceo@bigcorp.example");
    expect(within(form).getByRole("link", { name: "Take it back" }).getAttribute("href")).toBe(
      "/reset-password",
    );
    fireEvent.change(within(form).getByLabelText("Password of the iowatt account"), {
      target: { value: "owner's password" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Link and sign in" }));
    await waitFor(() => expect(getToken()).toBe("new-session"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      code: "link-code-123",
      password: "owner's password",
    });
  });

  it("a wrong password says how to take the address back", async () => {
    window.history.replaceState(
      null,
      "",
      "/login/oidc#link=link-code-123&email=ceo%40bigcorp.example",
    );
    stubApi({
      "POST /api/v1/auth/oidc/link": () => ({
        status: 401,
        body: { error: "bad_credentials", message: "that is not this account's password" },
      }),
    });
    renderApp("/login/oidc");
    const form = await screen.findByTestId("oidc-link");
    fireEvent.change(within(form).getByLabelText("Password of the iowatt account"), {
      target: { value: "guess" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Link and sign in" }));
    expect((await screen.findByTestId("oidc-link-error")).dataset.code).toBe("bad_credentials");
    expect(getToken()).toBeNull();
  });
});

describe("instance administrator's users page", () => {
  it("lists accounts and issues a reset link shown once", async () => {
    setToken("s");
    const admin = {
      ...ME,
      id: "a",
      email: "boss@x.example",
      is_instance_admin: true,
      email_verified: true,
    };
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: admin }),
      "GET /api/v1/admin/users": () => ({
        body: {
          items: [
            {
              id: "u1",
              email: "ceo@bigcorp.example",
              display_name: "CEO",
              is_active: true,
              is_instance_admin: false,
              email_verified: false,
              password_set: true,
              sso_linked: false,
              team_count: 1,
              created_at: "2026-12-01T00:00:00Z",
            },
          ],
          total: 1,
        },
      }),
      "POST /api/v1/admin/users/u1/reset-link": () => ({
        status: 201,
        body: {
          url: "https://iowatt.example/reset-password#token=iwp_x",
          expires_at: "2026-12-06T00:00:00Z",
        },
      }),
    });
    renderApp("/admin/users");
    const row = await screen.findByTestId("user-row");
    expect(row.textContent).toContain("not verified");
    fireEvent.click(within(row).getByTestId("issue-reset-link"));
    const dialog = await screen.findByTestId("confirm-dialog");
    fireEvent.click(within(dialog).getByRole("button", { name: "Issue link" }));
    expect((await screen.findByTestId("secret-value")).textContent).toBe(
      "https://iowatt.example/reset-password#token=iwp_x",
    );
    expect(calls.filter((c) => c.method === "POST").map((c) => c.path)).toEqual([
      "/api/v1/admin/users/u1/reset-link",
    ]);
    // the settings menu offers the page to instance administrators
    expect(screen.getByRole("link", { name: "Users (instance)" })).toBeTruthy();
  });
});
