// Colours for series, safe for colour-blind readers: Okabe and Ito's palette (Color Universal
// Design, 2008) without its yellow, which is unreadable on white, in an order that never puts red
// beside green. Past those seven, the same seven hues again, darker, then lighter, and so on (no
// new hue: a red and a green never appear, whatever the count), so 30 compared runs get 30
// different colours; lines also get a dash pattern per round of seven.
const PALETTE = [
  "#0072B2", // blue
  "#E69F00", // orange
  "#009E73", // bluish green
  "#CC79A7", // reddish purple
  "#56B4E9", // sky blue
  "#D55E00", // vermilion
  "#000000", // black
] as const;

export const PALETTE_SIZE = PALETTE.length;

/** Each round's shift of the palette: toward black (< 0) or white (> 0), by that share. */
const ROUNDS = [0, -0.4, 0.45, 0.7, -0.55, 0.25, -0.2] as const;

const GREYS = [0, 0.3, 0.55, 0.2, 0.65, 0.42, 0.1] as const;

function mix(hex: string, by: number): string {
  const to = by < 0 ? 0 : 255;
  const f = Math.abs(by);
  const channel = (k: number) => {
    const v = Number.parseInt(hex.slice(k, k + 2), 16);
    return Math.round(v + (to - v) * f)
      .toString(16)
      .padStart(2, "0");
  };
  return `#${channel(1)}${channel(3)}${channel(5)}`;
}

export function colorAt(i: number): string {
  const base = PALETTE[i % PALETTE.length] ?? "#0072B2";
  const round = Math.floor(i / PALETTE.length);
  const by = ROUNDS[round % ROUNDS.length] ?? 0;
  // black has no darker shade: its rounds are greys
  if (base === "#000000") return mix(base, GREYS[round % GREYS.length] ?? 0);
  return mix(base, by);
}

/** Dash patterns by round of the palette: solid, dashed, dotted, dash-dot. */
const DASHES = [undefined, "8 4", "2 3", "10 3 2 3"] as const;

/** The line's dash pattern for series `i` (undefined: solid). */
export function dashAt(i: number): string | undefined {
  return DASHES[Math.floor(i / PALETTE.length) % DASHES.length];
}

/** A write curve is dashed; past the palette's seven colours each round has its own pattern. */
export function lineDash(dashed: boolean | undefined, color: number): string | undefined {
  return dashed ? "5 3" : dashAt(color);
}
