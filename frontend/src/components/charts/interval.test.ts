import { describe, expect, it } from "vitest";
import { intervalText, NO_INTERVAL, tooltipValue } from "./interval";

describe("a figure's interval in a chart's tooltip (issue 25)", () => {
  it("gives the 95 % interval of a mean of repeats from its error bar's distances", () => {
    expect(intervalText(500, [20, 30], "MB/s", 3)).toBe("95 % CI 480 – 530 MB/s (n = 3)");
    expect(tooltipValue(500, "MB/s", [20, 30], 3)).toBe(
      "500 MB/s · 95 % CI 480 – 530 MB/s (n = 3)",
    );
  });

  it("says a figure without repeats has no interval, rather than drawing none silently", () => {
    expect(intervalText(500, undefined, "MB/s")).toBe(NO_INTERVAL);
    expect(tooltipValue(7, "s", null)).toBe(`7 s · ${NO_INTERVAL}`);
    expect(tooltipValue(null, "s", [1, 1])).toBe("—");
  });
});
