import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { Account } from "./Account";

// Settings → Account (issue 30): the password and e-mail forms and the sessions list.

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const ME = {
  id: "u1",
  email: "ana@example.test",
  display_name: "Ana",
  teams: [],
  password_set: true,
  email_verified: true,
  is_instance_admin: false,
  can_create_teams: false,
};
const token = (id: string, kind: string, current = false) => ({
  id,
  name: kind === "session" ? "browser session" : "ci",
  kind,
  scope: "write",
  created_at: "2026-12-01T10:00:00Z",
  expires_at: null,
  last_used_at: null,
  revoked_at: null,
  current,
});

function input(form: HTMLElement, selector: string): HTMLElement {
  const el = form.querySelector<HTMLElement>(selector);
  if (!el) throw new Error(`no ${selector}`);
  return el;
}

describe("Account", () => {
  it("changes the password with the current one and says how many sessions ended", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/auth/tokens": () => ({
        body: {
          items: [token("s1", "session", true), token("s2", "session"), token("p1", "personal")],
          total: 3,
        },
      }),
      "POST /api/v1/auth/password": () => ({ body: { sessions_revoked: 1 } }),
    });
    renderAt(<Account />);
    const form = await screen.findByTestId("password-form");
    expect(await screen.findAllByTestId("session-row")).toHaveLength(2);
    expect(screen.getByTestId("session-current")).toBeTruthy();
    fireEvent.change(within(form).getByLabelText("Current password"), {
      target: { value: "old one" },
    });
    fireEvent.change(input(form, "#f-password"), {
      target: { value: "new password" },
    });
    fireEvent.change(input(form, "#f-confirm"), {
      target: { value: "other" },
    });
    fireEvent.click(within(form).getByTestId("change-password"));
    expect((await screen.findByTestId("field-error-confirm")).textContent).toContain("differ");
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.change(input(form, "#f-confirm"), {
      target: { value: "new password" },
    });
    fireEvent.click(within(form).getByTestId("change-password"));
    expect((await screen.findByTestId("password-changed")).textContent).toContain(
      "1 other browser session",
    );
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      current_password: "old one",
      new_password: "new password",
    });
  });

  it("shows the server's refusal of an address on the e-mail field", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/auth/tokens": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/auth/email": () => ({
        status: 422,
        body: {
          error: "validation_error",
          message: "email: is not an e-mail address",
          detail: [{ field: "email", message: "is not an e-mail address" }],
        },
      }),
    });
    renderAt(<Account />);
    const form = await screen.findByTestId("email-form");
    fireEvent.change(within(form).getByLabelText("New e-mail"), { target: { value: "nope" } });
    fireEvent.change(within(form).getByLabelText("Current password"), { target: { value: "pw" } });
    fireEvent.click(within(form).getByTestId("change-email"));
    await waitFor(() =>
      expect(screen.getByTestId("field-error-email").textContent).toContain("e-mail"),
    );
  });
});
