import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { useMayDelete } from "../../lib/role";
import { renderAt, stubApi } from "../../test/render";
import { DeleteButton } from "./DeleteButton";
import { TeamDeleteButton } from "./TeamDelete";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function me(role: "viewer" | "member" | "admin") {
  return () => ({
    body: { id: "u1", email: "a@b", display_name: "A", teams: [{ id: "t1", name: "lab", role }] },
  });
}

function Probe({ createdBy }: { createdBy?: string | null }) {
  return <span data-testid="may">{String(useMayDelete("t1", createdBy))}</span>;
}

describe("who sees Delete", () => {
  it.each([
    ["admin", "someone else", "true"],
    ["member", "u1", "true"],
    ["member", "someone else", "false"],
    ["member", undefined, "false"], // no creator recorded (devices, environments): admins only
    ["viewer", "u1", "false"],
  ] as const)("%s, made by %s: %s", async (role, createdBy, want) => {
    setToken("t");
    stubApi({ "GET /api/v1/auth/me": me(role) });
    renderAt(<Probe createdBy={createdBy} />);
    await waitFor(() => expect(screen.getByTestId("may").textContent).toBe(want));
  });
});

describe("DeleteButton", () => {
  it("shows what uses the object after a 409 and deletes anyway with force", async () => {
    const forced: boolean[] = [];
    let done = 0;
    renderAt(
      <DeleteButton
        label="Delete"
        title="Delete it?"
        testId="del"
        forceLabel="Delete anyway"
        onDelete={async (force) => {
          forced.push(force);
          if (!force) {
            const { ApiError } = await import("../../lib/errors");
            throw new ApiError(409, { error: "environment_in_use", message: "used by 2 runs" });
          }
        }}
        onDone={() => {
          done += 1;
        }}
      >
        <p>body</p>
      </DeleteButton>,
    );
    fireEvent.click(screen.getByTestId("del"));
    fireEvent.click(screen.getByTestId("confirm-action"));
    expect((await screen.findByTestId("delete-in-use")).textContent).toContain("used by 2 runs");
    expect(screen.getByTestId("confirm-action").textContent).toBe("Delete anyway");
    fireEvent.click(screen.getByTestId("confirm-action"));
    await waitFor(() => expect(done).toBe(1));
    expect(forced).toEqual([false, true]);
  });
});

describe("TeamDeleteButton", () => {
  it("sends the typed name only once it matches", async () => {
    setToken("t");
    const calls = stubApi({ "DELETE /api/v1/teams/t1": () => ({ status: 204, body: null }) });
    renderAt(<TeamDeleteButton teamId="t1" teamName="lab" />);
    fireEvent.click(screen.getByTestId("delete-team"));
    const confirm = screen.getByTestId("delete-team-confirm") as HTMLButtonElement;
    fireEvent.change(screen.getByTestId("delete-team-name"), { target: { value: "Lab" } });
    expect(confirm.disabled).toBe(true);
    fireEvent.change(screen.getByTestId("delete-team-name"), { target: { value: "lab" } });
    expect(confirm.disabled).toBe(false);
    fireEvent.click(confirm);
    await waitFor(() => expect(calls.some((c) => c.method === "DELETE")).toBe(true));
    expect(calls.find((c) => c.method === "DELETE")?.body).toEqual({ confirm_name: "lab" });
  });
});
