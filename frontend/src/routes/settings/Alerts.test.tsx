import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertRead, ChannelRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { Alerts, alertPath } from "./Alerts";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const me = (role: string) => () => ({
  body: { id: "u", email: "a@b", display_name: "a", teams: [{ id: "t1", name: "lab", role }] },
});

const CHANNEL: ChannelRead = {
  id: "c1",
  team_id: "t1",
  name: "chat",
  kind: "apprise",
  url: "slack://hooks.slack.com/…",
  events: ["regression", "agent_offline"],
  agent_offline_min: 30,
  enabled: true,
  created_by: "u",
  created_at: "2026-12-06T01:00:00Z",
};

const ALERT: AlertRead = {
  id: "a1",
  team_id: "t1",
  kind: "run_failed",
  title: "Run failed: nightly on /srv/bench",
  text: "engine exited 1",
  link: "http://iowatt.example:8000/runs/r1",
  details: {},
  created_at: "2026-12-06T02:00:00Z",
  deliveries: [
    {
      id: "d1",
      channel_id: "c1",
      channel_name: "chat",
      status: "sent",
      attempts: 1,
      next_attempt_at: "2026-12-06T02:00:00Z",
      last_error: null,
      response_status: null,
      sent_at: "2026-12-06T02:00:01Z",
    },
    {
      id: "d2",
      channel_id: "c2",
      channel_name: "ops hook",
      status: "pending",
      attempts: 2,
      next_attempt_at: "2099-01-01T00:00:00Z",
      last_error: "HTTP 503: busy",
      response_status: 503,
      sent_at: null,
    },
  ],
};

describe("Settings → Alerts", () => {
  it("links an alert into the app, wherever the server's public URL is", () => {
    expect(alertPath("https://iowatt.example/runs/r1?x=1")).toBe("/runs/r1?x=1");
    expect(alertPath("not a url")).toBe("/");
  });

  it("lists channels and the delivery log; an admin adds a webhook and sees its key once", async () => {
    setToken("t");
    let attempt = 0;
    const calls = stubApi({
      "GET /api/v1/auth/me": me("admin"),
      "GET /api/v1/alert-channels": () => ({ body: { items: [CHANNEL], total: 1 } }),
      "GET /api/v1/alerts": () => ({ body: { items: [ALERT], total: 1 } }),
      "POST /api/v1/alert-channels": () => {
        attempt += 1;
        return attempt === 1
          ? {
              status: 422,
              body: {
                code: "validation_error",
                message: "url: resolves to a loopback address",
                detail: [
                  {
                    field: "url",
                    message: "'localhost' resolves to a loopback, private or link-local address",
                  },
                ],
              },
            }
          : {
              status: 201,
              body: {
                ...CHANNEL,
                id: "c2",
                kind: "webhook",
                name: "ops hook",
                secret: "k".repeat(64),
              },
            };
      },
    });
    renderAt(<Alerts />);
    const row = await screen.findByTestId("channel-row");
    expect(row.textContent).toContain("slack://hooks.slack.com/…");
    expect(row.textContent).toContain("agents offline (after 30 min)");
    const log = await screen.findByTestId("alert-row");
    expect(within(log).getByRole("link").getAttribute("href")).toBe("/runs/r1");
    expect(log.textContent).toContain("chat: sent");
    expect(log.textContent).toContain("ops hook: pending after 2 attempts");
    expect(log.textContent).toContain("HTTP 503: busy");

    fireEvent.click(await screen.findByTestId("new-channel"));
    const form = screen.getByTestId("channel-form");
    fireEvent.change(within(form).getByRole("textbox", { name: /Name/ }), {
      target: { value: "ops hook" },
    });
    fireEvent.change(within(form).getByRole("textbox", { name: /URL/ }), {
      target: { value: "http://localhost/hook" },
    });
    fireEvent.click(within(form).getByRole("checkbox", { name: /agents offline/ }));
    fireEvent.click(screen.getByTestId("submit-channel"));
    expect((await screen.findByTestId("field-error-url")).textContent).toContain("loopback");
    fireEvent.change(within(form).getByRole("textbox", { name: /URL/ }), {
      target: { value: "https://ops.example/hook" },
    });
    fireEvent.click(screen.getByTestId("submit-channel"));
    expect((await screen.findByTestId("secret-value")).textContent).toBe("k".repeat(64));
    const posts = calls.filter((c) => c.method === "POST");
    expect(posts[1]?.body).toEqual({
      team_id: "t1",
      name: "ops hook",
      kind: "webhook",
      url: "https://ops.example/hook",
      events: ["regression", "run_failed", "run_expired", "agent_offline"],
      agent_offline_min: 10,
      enabled: true,
    });
  });

  it("pages through the alerts 50 at a time and filters by kind, both in the URL", async () => {
    setToken("t");
    const asked: URLSearchParams[] = [];
    stubApi({
      "GET /api/v1/auth/me": me("member"),
      "GET /api/v1/alert-channels": () => ({ body: { items: [], total: 0 } }),
      "GET /api/v1/alerts": (req) => {
        const q = new URL(req.url).searchParams;
        asked.push(q);
        const total = q.get("kind") === "agent_offline" ? 3 : 120;
        const offset = Number(q.get("offset") ?? 0);
        const n = Math.max(0, Math.min(50, total - offset));
        const items = Array.from({ length: n }, (_, i) => ({
          ...ALERT,
          id: `a${offset + i}`,
          title: `alert ${offset + i}`,
        }));
        return { body: { items, total } };
      },
    });
    renderAt(<Alerts />, { path: "/?offset=50" });
    const count = await screen.findByTestId("alerts-count");
    await waitFor(() => expect(count.textContent).toContain("51–100 of 120"));
    expect(asked.at(-1)?.get("limit")).toBe("50");
    expect(screen.getAllByTestId("alert-row")).toHaveLength(50);
    fireEvent.click(screen.getByTestId("alerts-next"));
    await waitFor(() => expect(count.textContent).toContain("101–120 of 120"));
    expect(asked.at(-1)?.get("offset")).toBe("100");
    expect((screen.getByTestId("alerts-next") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("alerts-prev"));
    await waitFor(() => expect(count.textContent).toContain("51–100"));
    // a kind starts at its own first page
    fireEvent.change(screen.getByTestId("alerts-kind"), { target: { value: "agent_offline" } });
    await waitFor(() =>
      expect(screen.getByTestId("alerts-count").textContent).toContain("1–3 of 3 of this kind"),
    );
    expect(asked.at(-1)?.get("kind")).toBe("agent_offline");
    expect(asked.at(-1)?.has("offset")).toBe(false);
    expect((screen.getByTestId("alerts-prev") as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows a member the channels without the buttons that change them", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": me("member"),
      "GET /api/v1/alert-channels": () => ({ body: { items: [CHANNEL], total: 1 } }),
      "GET /api/v1/alerts": () => ({ body: { items: [], total: 0 } }),
    });
    renderAt(<Alerts />);
    const row = await screen.findByTestId("channel-row");
    await waitFor(() => expect(screen.getByText("No alert yet.")).toBeTruthy());
    expect(within(row).queryByTestId("channel-test")).toBeNull();
    expect(screen.queryByTestId("new-channel")).toBeNull();
  });
});
