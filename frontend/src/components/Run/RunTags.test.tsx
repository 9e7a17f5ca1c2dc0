import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import type { Role } from "../../lib/role";
import { renderAt, stubApi } from "../../test/render";
import { RunTags } from "./RunTags";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const RUN = { id: "r1", team_id: "t1", tags: ["baseline"] } as unknown as RunRead;

function stub(role: Role) {
  setToken("t");
  return stubApi({
    "GET /api/v1/auth/me": () => ({
      body: { id: "u", email: "e@x", display_name: "E", teams: [{ id: "t1", name: "lab", role }] },
    }),
    "GET /api/v1/tags": () => ({ body: { items: [{ tag: "nvme", runs: 2 }] } }),
    "PUT /api/v1/runs/r1/tags": () => ({ body: { ...RUN, tags: ["baseline", "nvme"] } }),
  });
}

describe("run tags", () => {
  it("a member adds a tag with Enter and removes one with ×", async () => {
    const calls = stub("member");
    renderAt(<RunTags run={RUN} />);
    const box = await screen.findByTestId("tag-input", {}, { timeout: 10_000 });
    fireEvent.change(box, { target: { value: " nvme " } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() =>
      expect(calls.filter((c) => c.method === "PUT").map((c) => c.body)).toEqual([
        { tags: ["baseline", "nvme"] },
      ]),
    );
    fireEvent.click(screen.getByRole("button", { name: "Remove tag baseline" }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === "PUT").map((c) => c.body)).toContainEqual({
        tags: [],
      }),
    );
  }, 30_000);

  it("refuses a malformed tag before asking the server", async () => {
    const calls = stub("member");
    renderAt(<RunTags run={RUN} />);
    const box = await screen.findByTestId("tag-input", {}, { timeout: 10_000 });
    fireEvent.change(box, { target: { value: "a;b" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect((await screen.findByTestId("tag-error")).textContent).toContain("letters, digits");
    expect(calls.filter((c) => c.method === "PUT")).toEqual([]);
  }, 30_000);

  it("a viewer sees the chips, nothing to edit them with", async () => {
    const calls = stub("viewer");
    renderAt(<RunTags run={RUN} />);
    expect(await screen.findByText("baseline")).toBeTruthy();
    await waitFor(() => expect(calls.map((c) => c.path)).toContain("/api/v1/auth/me"));
    await new Promise((r) => setTimeout(r, 300)); // /auth/me answered: still no editor
    expect(screen.queryByTestId("tag-input")).toBeNull();
    expect(screen.queryByTestId("tag-remove")).toBeNull();
  }, 30_000);
});
