import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ProgressBar, progressLabel } from "./ProgressBar";

describe("ProgressBar", () => {
  it("scales its fill (the compositor animates a transform alone), clamped to 0-100 %", () => {
    const { rerender } = render(<ProgressBar percent={40} label="run" />);
    const bar = screen.getByRole("progressbar", { name: "run" });
    const fill = bar.querySelector<HTMLElement>(".progress-fill");
    expect(fill?.style.transform).toBe("scaleX(0.4)");
    // a width would lay the page out again in every frame of its transition (styles.css)
    expect(fill?.style.width).toBe("");
    expect(bar.getAttribute("aria-valuenow")).toBe("40");
    rerender(<ProgressBar percent={140} label="run" />);
    expect(fill?.style.transform).toBe("scaleX(1)");
    expect(bar.textContent).toContain("100");
  });

  it("labels the share with one decimal, rounded down: never 100.0 % before the end", () => {
    expect([6.34, 81.55, 0, 99.96, 100].map(progressLabel)).toEqual([
      "6.3 %",
      "81.5 %",
      "0.0 %",
      "99.9 %",
      "100.0 %",
    ]);
  });

  it("is not animated: a transition at each poll drew ~36 frames for a move of a pixel or two", () => {
    const styles = readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), "../../styles.css"),
      "utf8",
    );
    const fill = styles.match(/\.progress-fill \{[^}]*\}/)?.[0];
    expect(fill).toContain("transform-origin: left");
    expect(fill).not.toContain("transition");
  });
});
