import { describe, expect, it } from "vitest";
import { ApiError } from "./lib/errors";
import { makeQueryClient, retryDelayMs } from "./queryClient";

const shed = (detail: unknown) =>
  new ApiError(503, { error: "overloaded", message: "the server is busy", detail });

describe("retryDelayMs", () => {
  it("waits what a busy server asked for", () => {
    const e = shed({ lane: "bulk", reason: "queue_full", retry_after_s: 10 });
    expect(e.retryAfterS).toBe(10);
    expect(retryDelayMs(0, e)).toBe(10_000);
    expect(retryDelayMs(1, e)).toBe(10_000);
  });
  it("caps a server's wait at a minute", () => {
    expect(retryDelayMs(0, shed({ retry_after_s: 3600 }))).toBe(60_000);
  });
  it("backs off as react-query does otherwise", () => {
    for (const e of [
      shed(null),
      shed({ retry_after_s: "10" }),
      shed({ retry_after_s: -1 }),
      new Error("x"),
    ]) {
      expect(retryDelayMs(0, e)).toBe(1000);
      expect(retryDelayMs(1, e)).toBe(2000);
      expect(retryDelayMs(9, e)).toBe(30_000);
    }
  });
  it("is the query client's delay", () => {
    expect(makeQueryClient().getDefaultOptions().queries?.retryDelay).toBe(retryDelayMs);
  });
});
