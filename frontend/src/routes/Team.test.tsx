import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../lib/auth";
import type { Role } from "../lib/role";
import { renderAt, stubApi } from "../test/render";
import { Team } from "./Team";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const ME = (role: Role) => ({
  body: {
    id: "u1",
    email: "ada@example.com",
    display_name: "Ada",
    teams: [{ id: "t1", name: "storage lab", role }],
  },
});
const TEAM = (role: Role) => ({
  body: {
    id: "t1",
    name: "storage lab",
    created_at: "2026-11-01T00:00:00Z",
    member_count: 2,
    role,
  },
});
const MEMBERS = (myRole: Role) => ({
  body: [
    {
      user_id: "u1",
      email: "ada@example.com",
      display_name: "Ada",
      role: myRole,
      joined_at: "2026-11-01T00:00:00Z",
    },
    {
      user_id: "u2",
      email: "bob@example.com",
      display_name: "Bob",
      role: "viewer",
      joined_at: "2026-11-20T00:00:00Z",
    },
  ],
});
const INVITATION = {
  id: "i1",
  team_id: "t1",
  email: "cy@example.com",
  role: "member",
  state: "pending",
  invited_by: "ada@example.com",
  created_at: "2026-11-22T00:00:00Z",
  expires_at: "2099-11-29T00:00:00Z",
  accepted_at: null,
  revoked_at: null as string | null,
};

describe("team page", () => {
  it("shows a viewer the members only: no role selects, no remove, no admin tabs", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ME("viewer"),
      "GET /api/v1/teams/t1": () => TEAM("viewer"),
      "GET /api/v1/teams/t1/members": () => MEMBERS("viewer"),
    });
    renderAt(<Team />, { path: "/team?tab=audit" });
    const rows = await screen.findAllByTestId("member-row");
    expect(rows).toHaveLength(2);
    expect(screen.queryByTestId("member-role")).toBeNull();
    expect(screen.queryByTestId("remove-member")).toBeNull();
    expect(screen.queryByTestId("rename-team")).toBeNull();
    // ?tab=audit falls back to members for a non-admin
    expect(screen.queryByTestId("tab-audit")).toBeNull();
    expect(screen.queryByTestId("tab-invitations")).toBeNull();
    expect(screen.queryByTestId("audit")).toBeNull();
    // the viewer's own row offers Leave
    expect(within(rows[0] as HTMLElement).getByTestId("leave-team")).toBeTruthy();
  });

  it("says the server's 409 plainly when an admin demotes the last admin", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/teams/t1": () => TEAM("admin"),
      "GET /api/v1/teams/t1/members": () => MEMBERS("admin"),
      "PATCH /api/v1/teams/t1/members/u1": () => ({
        status: 409,
        body: {
          error: "last_admin",
          message: "storage lab needs at least one admin: make someone else admin first",
        },
      }),
    });
    renderAt(<Team />, { path: "/team" });
    const selects = await screen.findAllByTestId("member-role");
    fireEvent.change(selects[0] as HTMLElement, { target: { value: "member" } });
    expect((await screen.findByTestId("role-error")).textContent).toContain(
      "needs at least one admin",
    );
    expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ role: "member" });
  });

  it("asks before leaving and shows the 409 last-admin answer in the dialog", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/teams/t1": () => TEAM("admin"),
      "GET /api/v1/teams/t1/members": () => MEMBERS("admin"),
      "DELETE /api/v1/teams/t1/members/u1": () => ({
        status: 409,
        body: { error: "last_admin", message: "the last admin cannot leave" },
      }),
    });
    renderAt(<Team />, { path: "/team" });
    fireEvent.click(await screen.findByTestId("leave-team"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(dialog.textContent).toContain("Leave “storage lab”?");
    expect(calls.some((c) => c.method === "DELETE")).toBe(false);
    fireEvent.click(within(dialog).getByTestId("confirm-action"));
    expect(await within(dialog).findByRole("alert")).toBeTruthy();
    expect(dialog.textContent).toContain("the last admin cannot leave");
  });

  it("invites: shows the link once with a copy button, lists it pending, revokes it", async () => {
    setToken("t");
    let invitations = [INVITATION];
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/teams/t1": () => TEAM("admin"),
      "GET /api/v1/teams/t1/invitations": () => ({
        body: { items: invitations, total: invitations.length },
      }),
      "POST /api/v1/teams/t1/invitations": () => {
        invitations = [
          { ...INVITATION, id: "i2", email: "dee@example.com", role: "viewer" },
          ...invitations,
        ];
        return {
          status: 201,
          body: {
            id: "i2",
            url: "http://x/invite/iwi_secret",
            expires_at: "2099-11-29T00:00:00Z",
            email: "dee@example.com",
            role: "viewer",
            mailed: false,
          },
        };
      },
      "DELETE /api/v1/teams/t1/invitations/i1": () => {
        invitations = invitations.map((i) =>
          i.id === "i1" ? { ...i, state: "revoked", revoked_at: "2026-11-22T01:00:00Z" } : i,
        );
        return { status: 204, body: null };
      },
    });
    renderAt(<Team />, { path: "/team?tab=invitations" });
    expect((await screen.findByTestId("invitation-row")).dataset.state).toBe("pending");

    fireEvent.click(screen.getByTestId("invite"));
    const dialog = screen.getByTestId("invite-dialog");
    // a malformed address is refused before any request
    fireEvent.change(within(dialog).getByRole("textbox", { name: /E-mail/ }), {
      target: { value: "dee" },
    });
    fireEvent.click(within(dialog).getByTestId("invite-dialog-submit"));
    expect(await within(dialog).findByTestId("field-error-email")).toBeTruthy();
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.change(within(dialog).getByRole("textbox", { name: /E-mail/ }), {
      target: { value: "dee@example.com" },
    });
    fireEvent.change(within(dialog).getByRole("combobox", { name: /Role/ }), {
      target: { value: "viewer" },
    });
    fireEvent.click(within(dialog).getByTestId("invite-dialog-submit"));
    expect((await screen.findByTestId("secret-value")).textContent).toBe(
      "http://x/invite/iwi_secret",
    );
    expect(screen.getByTestId("once-secret").textContent).toContain("dee@example.com (viewer)");
    expect(within(screen.getByTestId("once-secret")).getByTestId("copy")).toBeTruthy();
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      email: "dee@example.com",
      role: "viewer",
    });
    await waitFor(() => expect(screen.getAllByTestId("invitation-row")).toHaveLength(2));
    // once: Done hides the link for good (the list never carries it)
    fireEvent.click(screen.getByTestId("secret-done"));
    expect(document.body.textContent).not.toContain("iwi_secret");

    const cy = screen
      .getAllByTestId("invitation-row")
      .find((r) => r.dataset.email === "cy@example.com") as HTMLElement;
    fireEvent.click(within(cy).getByTestId("revoke-invitation"));
    fireEvent.click(within(screen.getByTestId("confirm-dialog")).getByTestId("confirm-action"));
    await waitFor(() => {
      const row = screen
        .getAllByTestId("invitation-row")
        .find((r) => r.dataset.email === "cy@example.com");
      expect(row?.dataset.state).toBe("revoked");
    });
    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
      "/api/v1/teams/t1/invitations/i1",
    ]);
  });

  it("audit log: filters by action and pages through the server's total", async () => {
    setToken("t");
    const event = (n: number) => ({
      id: `e${n}`,
      team_id: "t1",
      at: "2026-11-22T00:00:00Z",
      actor_user_id: "u1",
      actor: "ada@example.com",
      action: "member.role_changed",
      target_kind: "user",
      target_id: "u2",
      details: { role: "member" },
    });
    const seen: string[] = [];
    stubApi({
      "GET /api/v1/auth/me": () => ME("admin"),
      "GET /api/v1/teams/t1": () => TEAM("admin"),
      "GET /api/v1/teams/t1/audit": (req) => {
        const q = new URL(req.url).searchParams;
        seen.push(`${q.get("action") ?? ""}@${q.get("offset")}`);
        const offset = Number(q.get("offset"));
        return {
          body: { items: [event(offset)], total: q.get("action") === "member." ? 120 : 1 },
        };
      },
    });
    renderAt(<Team />, { path: "/team?tab=audit" });
    const row = await screen.findByTestId("audit-row");
    expect(row.textContent).toContain("ada@example.com");
    expect(row.textContent).toContain("member.role_changed");
    expect(screen.getByTestId("audit-range").textContent).toBe("1–1 of 1");
    expect((screen.getByTestId("audit-next") as HTMLButtonElement).disabled).toBe(true);

    fireEvent.change(screen.getByTestId("audit-filter"), { target: { value: "member." } });
    await waitFor(() => expect(screen.getByTestId("audit-range").textContent).toBe("1–50 of 120"));
    fireEvent.click(screen.getByTestId("audit-next"));
    await waitFor(() =>
      expect(screen.getByTestId("audit-range").textContent).toBe("51–100 of 120"),
    );
    // the filter goes to the server (a prefix) and paging asks for the next 50
    expect(seen).toEqual(["@0", "member.@0", "member.@50"]);
  });
});
