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

  it("draws its label twice, white in the fill's part and dark in the track's, cut at the same share", () => {
    const { rerender } = render(<ProgressBar percent={35.6} label="run" />);
    const bar = screen.getByRole("progressbar", { name: "run" });
    const parts = [...bar.querySelectorAll<HTMLElement>(".progress-part")];
    expect(parts.map((p) => p.textContent)).toEqual(["35.6 %", "35.6 %"]);
    const [fill, track] = parts as [HTMLElement, HTMLElement];
    // the fill's part ends where the track's begins: the fill's edge
    expect([fill.style.left, fill.style.width]).toEqual(["0px", "35.6%"]);
    expect([track.style.left, track.style.right]).toEqual(["35.6%", "0px"]);
    expect(fill.querySelector(".progress-label")?.className).toContain("progress-label-on-fill");
    expect(track.querySelector(".progress-label")?.className).not.toContain("on-fill");
    // the track's copy sits where the whole bar's label would: shifted back by the fill's width
    expect(track.querySelector<HTMLElement>(".progress-label")?.style.left).toBe("-35.6cqw");
    // a screen reader hears the share once, from the bar itself
    expect(bar.getAttribute("aria-valuetext")).toBe("35.6 %");
    expect(parts.map((p) => p.getAttribute("aria-hidden"))).toEqual(["true", "true"]);
    // empty or full: one copy only
    rerender(<ProgressBar percent={0} label="run" />);
    expect(bar.querySelectorAll(".progress-label-on-fill")).toHaveLength(0);
    rerender(<ProgressBar percent={100} label="run" />);
    expect(bar.querySelectorAll(".progress-label")).toHaveLength(1);
    expect(bar.querySelectorAll(".progress-label-on-fill")).toHaveLength(1);
  });

  it("gives every digit WCAG AA contrast (4.5:1) on the fill's colours and on the track", () => {
    const styles = readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), "../../styles.css"),
      "utf8",
    );
    const rule = (sel: string) => styles.match(new RegExp(`\\${sel} \\{[^}]*\\}`))?.[0] ?? "";
    const hexes = (css: string) => css.match(/#[0-9a-f]{6}\b/gi) ?? [];
    const onFill = /color: (#[0-9a-f]{6})/i.exec(rule(".progress-label-on-fill"))?.[1];
    const onTrack = /color: (#[0-9a-f]{6})/i.exec(rule(".progress-label"))?.[1];
    const fills = hexes(/background: [^;]*/.exec(rule(".progress-fill"))?.[0] ?? "");
    const track = /background: (#[0-9a-f]{6})/i.exec(rule(".progress"))?.[1];
    expect(fills.length).toBeGreaterThan(0);
    for (const f of fills) expect(contrast(onFill ?? "", f)).toBeGreaterThanOrEqual(4.5);
    expect(contrast(onTrack ?? "", track ?? "")).toBeGreaterThanOrEqual(4.5);
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

/** WCAG 2's contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const linear = (i: number) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(1) + 0.7152 * linear(3) + 0.0722 * linear(5);
  };
  const [la, lb] = [lum(a), lum(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}
