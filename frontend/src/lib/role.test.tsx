import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { stubApi } from "../test/render";
import { setToken } from "./auth";
import {
  can,
  getCurrentTeamId,
  NEEDS,
  pickTeam,
  setAllTeams,
  setCurrentTeamId,
  type TeamRole,
  teamsWhere,
  useCan,
  useCurrentTeam,
  useListTeam,
} from "./role";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const A: TeamRole = { id: "ta", name: "storage lab", role: "viewer" };
const B: TeamRole = { id: "tb", name: "procurement", role: "admin" };

describe("can", () => {
  it("orders viewer < member < admin and refuses without a role", () => {
    expect(can("viewer", "run.create")).toBe(false);
    expect(can("member", "run.create")).toBe(true);
    expect(can("admin", "run.create")).toBe(true);
    expect(can("member", "agent.manage")).toBe(false);
    expect(can("admin", "agent.manage")).toBe(true);
    expect(can(null, "run.create")).toBe(false);
    expect(can(undefined, "audit.read")).toBe(false);
    // nothing is open to a viewer but reading
    for (const action of Object.keys(NEEDS) as (keyof typeof NEEDS)[])
      expect(can("viewer", action)).toBe(false);
  });

  it("lists the teams where an action is allowed", () => {
    expect(teamsWhere([A, B], "agent.manage").map((t) => t.id)).toEqual(["tb"]);
    expect(teamsWhere([A, B], "run.create").map((t) => t.id)).toEqual(["tb"]);
  });
});

describe("current team", () => {
  it("is the stored team while the user is in it, else the first one", () => {
    expect(pickTeam([A, B], "tb")).toBe(B);
    expect(pickTeam([A, B], "gone")).toBe(A);
    expect(pickTeam([A, B], null)).toBe(A);
    expect(pickTeam([], "tb")).toBeNull();
  });

  it("persists in localStorage and re-renders the hook's users when switched", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({
        body: { id: "u", email: "u@x", display_name: "u", teams: [A, B] },
      }),
    });
    function Probe() {
      const { team } = useCurrentTeam();
      const allowed = useCan();
      return (
        <p data-testid="probe">
          {team?.name ?? "none"}|{String(allowed("run.create"))}|
          {String(allowed("agent.manage", "tb"))}|{String(allowed("agent.manage", "nope"))}
        </p>
      );
    }
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={qc}>
        <Probe />
      </QueryClientProvider>,
    );
    await waitFor(() =>
      expect(screen.getByTestId("probe").textContent).toBe("storage lab|false|true|false"),
    );
    setCurrentTeamId("tb");
    expect(getCurrentTeamId()).toBe("tb");
    await waitFor(() =>
      expect(screen.getByTestId("probe").textContent).toBe("procurement|true|true|false"),
    );
  });
});

describe("list team (useListTeam)", () => {
  function Probe() {
    const { teamId, all, ready, teamName } = useListTeam();
    return (
      <p data-testid="list">
        {String(ready)}|{teamId ?? "-"}|{String(all)}|{teamName("tb")}|{teamName("x")}
      </p>
    );
  }
  const mount = (teams: TeamRole[]) => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: { id: "u", email: "u@x", display_name: "u", teams } }),
    });
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    return render(
      <QueryClientProvider client={qc}>
        <Probe />
      </QueryClientProvider>,
    );
  };
  const text = () => screen.getByTestId("list").textContent;

  it("is the current team until All my teams is picked, which keeps it for creating", async () => {
    mount([A, B]);
    expect(text()).toBe("false|-|false|another team|another team"); // before /auth/me: not ready
    await waitFor(() => expect(text()).toBe("true|ta|false|procurement|another team"));
    act(() => setCurrentTeamId("tb"));
    await waitFor(() => expect(text()).toBe("true|tb|false|procurement|another team"));
    act(() => setAllTeams());
    await waitFor(() => expect(text()).toBe("true|-|true|procurement|another team"));
    expect(getCurrentTeamId()).toBe("tb"); // new things still go to the team picked last
    act(() => setCurrentTeamId("ta")); // picking a team leaves All my teams
    await waitFor(() => expect(text()).toBe("true|ta|false|procurement|another team"));
  });

  it("ignores All my teams for a user in one team (a stale choice)", async () => {
    setAllTeams();
    mount([A]);
    await waitFor(() => expect(text()).toBe("true|ta|false|another team|another team"));
  });
});
