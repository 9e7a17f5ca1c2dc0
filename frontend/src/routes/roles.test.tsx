import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { setToken } from "../lib/auth";
import type { Role } from "../lib/role";
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

function stubAs(role: Role) {
  stubApi({
    "GET /api/v1/auth/me": () => ({
      body: {
        id: "u1",
        email: "v@example.com",
        display_name: "Vi",
        teams: [{ id: "t1", name: "storage lab", role }],
      },
    }),
    "GET /api/v1/runs": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/campaigns": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/agents": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/workloads": () => ({ body: { items: [], total: 0 } }),
    "GET /api/v1/environments": () => ({ body: { items: [], total: 0 } }),
  });
}

describe("role-aware UI", () => {
  it("shows a viewer the runs but no New run, in the nav or on the page, and no campaign form", async () => {
    setToken("t");
    stubAs("viewer");
    renderApp("/runs");
    expect(await screen.findByText("No runs yet.", {}, { timeout: 10_000 })).toBeTruthy();
    // the switcher shows the role once /auth/me answered
    await waitFor(() =>
      expect(screen.getByTestId("team-switcher").textContent).toContain("storage lab · viewer"),
    );
    expect(screen.queryByRole("link", { name: "New run" })).toBeNull();
    expect(screen.queryByTestId("new-run")).toBeNull();
    expect(screen.getByRole("link", { name: "Team" })).toBeTruthy();
  });

  it("shows a member New run in the nav and on the runs page", async () => {
    setToken("t");
    stubAs("member");
    renderApp("/runs");
    expect(await screen.findByTestId("new-run", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getAllByRole("link", { name: "New run" })).toHaveLength(2);
  });

  it("hides New campaign from a viewer and shows it to a member", async () => {
    setToken("t");
    stubAs("viewer");
    const { unmount } = renderApp("/campaigns");
    expect(await screen.findByText("No campaigns yet.", {}, { timeout: 10_000 })).toBeTruthy();
    await screen.findByTestId("team-switcher");
    expect(screen.queryByTestId("new-campaign")).toBeNull();
    unmount();
    stubAs("member");
    renderApp("/campaigns");
    expect(await screen.findByTestId("new-campaign", {}, { timeout: 10_000 })).toBeTruthy();
  });

  it("tells a viewer who opens /runs/new why queuing needs another role", async () => {
    setToken("t");
    stubAs("viewer");
    const { unmount } = renderApp("/runs/new");
    const note = await screen.findByTestId("role-cannot-run", {}, { timeout: 10_000 });
    expect(note.textContent).toContain("needs the member role");
    // no dead control: the form's Queue run is disabled for them
    expect((screen.getByTestId("submit-run") as HTMLButtonElement).disabled).toBe(true);
    unmount();
    stubAs("member");
    renderApp("/runs/new");
    await screen.findByRole("heading", { name: "New run" }, { timeout: 10_000 });
    await screen.findByTestId("team-switcher");
    expect(screen.queryByTestId("role-cannot-run")).toBeNull();
    expect((screen.getByTestId("submit-run") as HTMLButtonElement).disabled).toBe(false);
  });
});
