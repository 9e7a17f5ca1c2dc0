import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRead } from "../../client/types";
import { setToken } from "../../lib/auth";
import { renderAt, stubApi } from "../../test/render";
import { RunHistoryButton } from "./RunHistoryButton";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const RUN = { id: "r1", team_id: "t1", status: "succeeded" } as unknown as RunRead;
const ME = {
  id: "u1",
  email: "a@b",
  display_name: "A",
  teams: [{ id: "t1", name: "lab", role: "member" }],
};
const SERIES = { id: "s1", name: "nightly on nvme0n1", run_count: 40 };

describe("a run's place in its history", () => {
  it("links to its series' history with the run picked", async () => {
    setToken("t");
    stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/series": () => ({ body: { items: [SERIES], total: 1 } }),
    });
    renderAt(<RunHistoryButton run={RUN} />);
    const link = await screen.findByTestId("run-history");
    expect(link.getAttribute("href")).toBe("/series/s1?run=r1");
  });

  it("makes the series of a run that is in none (stored before series existed)", async () => {
    setToken("t");
    const calls = stubApi({
      "GET /api/v1/auth/me": () => ({ body: ME }),
      "GET /api/v1/series": () => ({ body: { items: [], total: 0 } }),
      "POST /api/v1/series": () => ({ status: 201, body: SERIES }),
    });
    renderAt(<RunHistoryButton run={RUN} />);
    fireEvent.click(await screen.findByTestId("track-run"));
    await waitFor(() =>
      expect(calls.find((c) => c.method === "POST")?.body).toEqual({ run_id: "r1" }),
    );
  });
});
