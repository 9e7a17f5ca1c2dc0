import { act, render } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Ago, nextAgoChangeMs } from "./Ago";

afterEach(() => {
  vi.useRealTimers();
});

describe("Ago", () => {
  it("knows when its text changes next: each second, minute, then hour", () => {
    const t0 = Date.parse("2026-12-07T10:00:00Z");
    const at = (ms: number) => nextAgoChangeMs("2026-12-07T10:00:00Z", t0 + ms);
    expect(at(1_300)).toBe(700);
    expect(at(61_000)).toBe(59_000);
    expect(at(3_600_000 + 5_000)).toBe(3_595_000);
    expect(at(-30_500)).toBe(500); // in the future ("in 30 s")
  });

  it("stays true on a page that is not drawn again", () => {
    vi.useFakeTimers({ now: Date.parse("2026-12-07T10:00:58Z") });
    const { container } = render(<Ago iso="2026-12-07T10:00:00Z" />);
    expect(container.textContent).toBe("58 s ago");
    act(() => vi.advanceTimersByTime(1_100));
    expect(container.textContent).toBe("59 s ago");
    act(() => vi.advanceTimersByTime(1_000));
    expect(container.textContent).toBe("1 min ago");
    act(() => vi.advanceTimersByTime(60_000));
    expect(container.textContent).toBe("2 min ago");
  });
});
