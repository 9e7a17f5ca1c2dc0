import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { getCurrentTeamId } from "../../lib/role";
import { renderAt, stubApi } from "../../test/render";
import { TeamSwitcher } from "./TeamSwitcher";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

describe("team switcher", () => {
  it("switches the current team, and New team… creates one, selects it and opens its page", async () => {
    setToken("t");
    let teams = [
      { id: "t1", name: "storage lab", role: "viewer" },
      { id: "t2", name: "procurement", role: "admin" },
    ];
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({
        body: { id: "u", email: "u@x", display_name: "u", teams, can_create_teams: true },
      }),
      "POST /api/v1/teams": () => {
        teams = [...teams, { id: "t3", name: "nas tests", role: "admin" }];
        return {
          status: 201,
          body: {
            id: "t3",
            name: "nas tests",
            created_at: "2026-11-22T00:00:00Z",
            member_count: 1,
            role: "admin",
          },
        };
      },
    });
    renderAt(<TeamSwitcher />);
    const select = (await screen.findByTestId("team-switcher")) as HTMLSelectElement;
    // two teams: each, "All my teams" and "New team…"
    await waitFor(() => expect(select.options).toHaveLength(4));
    expect(select.options[2]?.textContent).toBe("All my teams");
    expect(select.value).toBe("t1");
    expect(select.options[0]?.textContent).toBe("storage lab · viewer");
    fireEvent.change(select, { target: { value: "t2" } });
    expect(getCurrentTeamId()).toBe("t2");
    expect(select.value).toBe("t2");
    // All my teams: the lists show every team; the team picked last stays for creating
    fireEvent.change(select, { target: { value: "__all__" } });
    await waitFor(() => expect(select.value).toBe("__all__"));
    expect(getCurrentTeamId()).toBe("t2");
    expect(screen.getByTitle(/new things are created in procurement/)).toBeTruthy();
    fireEvent.change(select, { target: { value: "t2" } });
    await waitFor(() => expect(select.value).toBe("t2"));

    fireEvent.change(select, { target: { value: "__new__" } });
    const dialog = screen.getByTestId("new-team-dialog");
    fireEvent.click(within(dialog).getByTestId("new-team-dialog-submit"));
    expect(await within(dialog).findByTestId("field-error-name")).toBeTruthy();
    expect(calls.some((c) => c.method === "POST")).toBe(false);
    fireEvent.change(within(dialog).getByRole("textbox", { name: /Name/ }), {
      target: { value: "nas tests" },
    });
    fireEvent.click(within(dialog).getByTestId("new-team-dialog-submit"));
    await waitFor(() => expect(getCurrentTeamId()).toBe("t3"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "nas tests" });
    await waitFor(() =>
      expect((screen.getByTestId("team-switcher") as HTMLSelectElement).value).toBe("t3"),
    );
    expect(screen.queryByTestId("new-team-dialog")).toBeNull();
  });

  it("shows the server's 409 for a taken name in the dialog", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({
        body: { id: "u", email: "u@x", display_name: "u", teams: [], can_create_teams: true },
      }),
      "POST /api/v1/teams": () => ({
        status: 409,
        body: { error: "team_name_taken", message: "a team named lab exists: choose another name" },
      }),
    });
    renderAt(<TeamSwitcher />);
    // no team yet: the header offers to create one
    fireEvent.click(await screen.findByTestId("new-team"));
    const dialog = screen.getByTestId("new-team-dialog");
    fireEvent.change(within(dialog).getByRole("textbox", { name: /Name/ }), {
      target: { value: "lab" },
    });
    fireEvent.click(within(dialog).getByTestId("new-team-dialog-submit"));
    expect((await within(dialog).findByTestId("form-error")).textContent).toContain(
      "a team named lab exists",
    );
  });

  it("offers no New team… to a user the server does not let create teams", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({
        body: {
          id: "u",
          email: "u@x",
          display_name: "u",
          teams: [{ id: "t1", name: "storage lab", role: "admin" }],
          can_create_teams: false,
        },
      }),
    });
    renderAt(<TeamSwitcher />);
    const select = (await screen.findByTestId("team-switcher")) as HTMLSelectElement;
    await waitFor(() => expect(select.options).toHaveLength(1));
    expect(select.options[0]?.textContent).toBe("storage lab · admin");
    expect(screen.queryByTestId("new-team")).toBeNull();
  });
});
