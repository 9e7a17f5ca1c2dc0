import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { CommentBody, CommentThread } from "./CommentThread";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const XSS =
  'look <img src=x onerror="alert(1)"> <script>alert(2)</script> **fast** [x](javascript:alert(3))';

function me(role: "viewer" | "member" | "admin", id = "u1") {
  return {
    body: { id, email: "a@b", display_name: "A", teams: [{ id: "t1", name: "lab", role }] },
  };
}

function comment(over: Record<string, unknown> = {}) {
  return {
    id: "c1",
    team_id: "t1",
    target_kind: "run",
    target_key: "r1",
    author_id: "u1",
    author_name: "Ada",
    body: "hello",
    body_format: "text",
    created_at: "2026-11-21T10:00:00Z",
    edited_at: null,
    ...over,
  };
}

describe("CommentBody", () => {
  it("shows an XSS attempt in Markdown as text: no element, no handler, no script URL", () => {
    const { container } = renderAt(<CommentBody body={XSS} format="markdown" />);
    expect(container.querySelector("img, script, iframe")).toBeNull();
    expect(container.querySelector("[onerror]")).toBeNull();
    expect(container.querySelector("a")?.getAttribute("href") ?? "").not.toContain("javascript");
    expect(container.querySelector("strong")?.textContent).toBe("fast"); // Markdown still renders
    const text = screen.getByTestId("comment-body").textContent ?? "";
    expect(text).toContain('<img src=x onerror="alert(1)">');
    expect(text).toContain("<script>alert(2)</script>");
  });

  it("keeps plain text as text", () => {
    const { container } = renderAt(<CommentBody body={"**not bold**\n<b>x</b>"} format="text" />);
    expect(container.querySelector("strong, b")).toBeNull();
    expect(screen.getByTestId("comment-body").textContent).toBe("**not bold**\n<b>x</b>");
  });
});

describe("CommentThread", () => {
  it("members post; authors edit and delete their own", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => me("member"),
      "GET /api/v1/comments": () => ({ body: { items: [comment()], total: 1 } }),
      "POST /api/v1/comments": () => ({ status: 201, body: comment({ id: "c2" }) }),
    });
    renderAt(<CommentThread kind="run" targetKey="r1" teamIds={["t1"]} />);
    expect((await screen.findByTestId("comment-body")).textContent).toBe("hello");
    expect(await screen.findByTestId("comment-delete")).toBeTruthy();
    fireEvent.change(screen.getByTestId("comment-input"), { target: { value: "**ok**" } });
    fireEvent.change(screen.getByTestId("comment-format"), { target: { value: "markdown" } });
    fireEvent.click(screen.getByTestId("comment-submit"));
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      target_kind: "run",
      target_key: "r1",
      body: "**ok**",
      body_format: "markdown",
    });
  });

  it("viewers read without a form; others' comments show no edit or delete", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => me("viewer", "u2"),
      "GET /api/v1/comments": () => ({
        body: {
          items: [comment(), comment({ id: "c3", author_id: null, author_name: "deleted user" })],
          total: 2,
        },
      }),
    });
    renderAt(<CommentThread kind="run" targetKey="r1" teamIds={["t1"]} />);
    expect((await screen.findAllByTestId("comment")).length).toBe(2);
    expect(screen.getByText("deleted user")).toBeTruthy();
    await waitFor(() => expect(screen.queryByTestId("comment-input")).toBeNull());
    expect(screen.queryByTestId("comment-delete")).toBeNull();
    expect(screen.queryByText("Edit")).toBeNull();
  });
});
