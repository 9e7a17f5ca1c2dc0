import { describe, expect, it } from "vitest";
import { colorAt, dashAt, lineDash, PALETTE_SIZE } from "./palette";

/** Red-green confusion: a colour whose hue is red (<20° or >340°) or green (90°–150°). */
function hueOf(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255) as [
    number,
    number,
    number,
  ];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max === min) return -1; // grey or black: no hue
  const d = max - min;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

describe("the chart palette", () => {
  it("gives 30 series 30 different colours", () => {
    const colours = Array.from({ length: 30 }, (_, i) => colorAt(i));
    expect(new Set(colours).size).toBe(30);
  });

  it("never puts a red beside a green, at 30 series either", () => {
    const hues = Array.from({ length: 30 }, (_, i) => hueOf(colorAt(i)));
    const red = (h: number) => h >= 0 && (h < 15 || h > 345);
    const green = (h: number) => h >= 90 && h <= 150;
    for (let i = 1; i < hues.length; i += 1) {
      const [a, b] = [hues[i - 1] ?? -1, hues[i] ?? -1];
      expect((red(a) && green(b)) || (green(a) && red(b))).toBe(false);
    }
    expect(hues.some(green)).toBe(false); // Okabe and Ito's bluish green is at 164°
    expect(hues.some(red)).toBe(false); // and its vermilion at 26°
  });

  it("draws each round of the palette with its own dash, writes dashed", () => {
    expect(dashAt(0)).toBeUndefined();
    expect(dashAt(PALETTE_SIZE)).not.toBe(dashAt(0));
    expect(dashAt(2 * PALETTE_SIZE)).not.toBe(dashAt(PALETTE_SIZE));
    expect(lineDash(true, 0)).toBe("5 3");
  });
});
