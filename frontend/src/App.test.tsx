import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { App } from "./App";
import { getToken, setToken } from "./lib/auth";
import { stubApi } from "./test/render";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

// The pages these tests reach are lazy chunks: their first import (vite transforms the module
// and everything it imports) took more than findBy's 1 s window on a loaded machine, and "drops
// the token on any 401" timed out waiting for the login form. Imported once before the tests,
// with a budget for a stuck import, not a slow one; the tests then wait only for the app.
beforeAll(async () => {
  await import("./routes/Runs");
}, 60_000);

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

describe("session handling", () => {
  it("sends a visitor without a token to the login page", async () => {
    stubApi({});
    renderApp("/runs");
    expect(await screen.findByTestId("login-form")).toBeTruthy();
  });

  it("drops the token and returns to login on any 401", async () => {
    setToken("expired");
    stubApi({
      "GET /api/v1/runs": () => ({
        status: 401,
        body: { error: "unauthorized", message: "token expired" },
      }),
    });
    renderApp("/runs");
    expect(await screen.findByTestId("login-form")).toBeTruthy();
    expect(getToken()).toBeNull();
  });

  it("logs in, stores the token and goes to the page asked for", async () => {
    const calls = stubApi({
      "POST /api/v1/auth/login": () => ({
        body: { access_token: "fresh", token_type: "bearer", expires_at: null, user: {} },
      }),
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    });
    renderApp("/runs");
    await screen.findByTestId("login-form");
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: "a@b.c" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "pw" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByText("No runs yet.")).toBeTruthy();
    expect(getToken()).toBe("fresh");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      email: "a@b.c",
      password: "pw",
    });
  });

  it("shows the server's 422 field messages, not its generic one", async () => {
    stubApi({
      "POST /api/v1/auth/login": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "invalid request",
          detail: [{ field: "body.email", message: "value is not a valid email address" }],
        },
      }),
    });
    renderApp("/runs");
    await screen.findByTestId("login-form");
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: "a@b.c" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "pw" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    const alert = await screen.findByTestId("login-error");
    expect(alert.textContent).toBe("value is not a valid email address");
    expect(getToken()).toBeNull();
  });

  it("logs out on the server first, then drops the local token", async () => {
    setToken("session-1");
    const seen: (string | null)[] = [];
    const calls = stubApi({
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/auth/logout": (req) => {
        seen.push(req.headers.get("Authorization"));
        // The token is still there while the server ends the session.
        seen.push(getToken());
        return { status: 204, body: null };
      },
    });
    renderApp("/runs");
    await screen.findByText("No runs yet.");
    fireEvent.click(screen.getByTestId("logout"));
    expect(await screen.findByTestId("login-form")).toBeTruthy();
    expect(seen).toEqual(["Bearer session-1", "session-1"]);
    expect(calls.filter((c) => c.method === "POST").map((c) => c.path)).toEqual([
      "/api/v1/auth/logout",
    ]);
    expect(getToken()).toBeNull();
  });

  it("still logs out of this browser when the server refuses the logout", async () => {
    setToken("api-token");
    stubApi({
      "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/auth/logout": () => ({
        status: 400,
        body: { error: "not_a_session", message: "revoke API tokens instead" },
      }),
    });
    renderApp("/runs");
    await screen.findByText("No runs yet.");
    fireEvent.click(screen.getByTestId("logout"));
    expect(await screen.findByTestId("login-form")).toBeTruthy();
    expect(getToken()).toBeNull();
  });
});
