import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { clearToken, getToken } from "../lib/auth";
import { stubApi } from "../test/render";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
  clearToken();
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

const OFFERED = {
  enabled: true,
  display_name: "Acme SSO",
  login_url: "/api/v1/auth/oidc/login",
};

describe("sign-in with OpenID Connect", () => {
  it("shows the provider's button on the login page when the server offers it", async () => {
    stubApi({ "GET /api/v1/auth/oidc": () => ({ body: OFFERED }) });
    renderApp("/login");
    const button = await screen.findByTestId("oidc-login");
    expect(button.textContent).toBe("Sign in with Acme SSO");
    // a page load to the server's route, not a fetch
    expect(button.getAttribute("href")).toBe("/api/v1/auth/oidc/login");
  });

  it("shows no button when it is not configured", async () => {
    stubApi({
      "GET /api/v1/auth/oidc": () => ({
        body: { enabled: false, display_name: null, login_url: null },
      }),
    });
    renderApp("/login");
    await screen.findByTestId("login-form");
    await new Promise((r) => setTimeout(r, 20)); // the config query has answered
    expect(screen.queryByTestId("oidc-login")).toBeNull();
  });

  it("trades the fragment's one-time code for a session, then clears the fragment", async () => {
    window.history.replaceState(null, "", "/login/oidc#code=one-time-code-123");
    const calls = stubApi({
      "POST /api/v1/auth/oidc/session": () => ({
        body: { access_token: "sso-token", token_type: "bearer", expires_at: null, user: {} },
      }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    renderApp("/login/oidc");
    await screen.findByTestId("oidc-callback");
    await waitFor(() => getToken() === "sso-token");
    expect(calls.filter((c) => c.method === "POST")).toEqual([
      { method: "POST", path: "/api/v1/auth/oidc/session", body: { code: "one-time-code-123" } },
    ]);
    expect(window.location.hash).toBe("");
  });

  it("says why a sign-in was refused, with the way back to the login page", async () => {
    window.history.replaceState(
      null,
      "",
      "/login/oidc#error=email_unverified&message=the+provider+has+not+verified+bob%40example.test",
    );
    stubApi({});
    renderApp("/login/oidc");
    const refused = await screen.findByTestId("oidc-refused");
    expect(refused.dataset.code).toBe("email_unverified");
    expect(refused.textContent).toContain("Your e-mail address is not verified");
    expect(refused.textContent).toContain("the provider has not verified bob@example.test");
    expect(screen.getByRole("link", { name: "Back to sign in" }).getAttribute("href")).toBe(
      "/login",
    );
    expect(getToken()).toBeNull();
  });

  it("shows the server's answer when the code is used or expired", async () => {
    window.history.replaceState(null, "", "/login/oidc#code=used-code-456");
    stubApi({
      "POST /api/v1/auth/oidc/session": () => ({
        status: 401,
        body: { error: "bad_oidc_code", message: "this sign-in code is unknown, used or older" },
      }),
    });
    renderApp("/login/oidc");
    const refused = await screen.findByTestId("oidc-refused");
    expect(refused.dataset.code).toBe("bad_oidc_code");
    expect(refused.textContent).toContain("this sign-in code is unknown, used or older");
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
