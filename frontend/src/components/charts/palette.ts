// Colours for series, safe for colour-blind readers: Okabe and Ito's palette (Color Universal
// Design, 2008) without its yellow, which is unreadable on white, in an order that never puts red
// beside green. Past those seven, hues spread by the golden angle, so 30 compared runs get 30
// different colours (none repeats); lines also get a dash pattern per round of seven, so two
// series of similar hue still differ in a line chart and in the key.
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

export function colorAt(i: number): string {
  if (i < PALETTE.length) return PALETTE[i] ?? "#0072B2";
  const hue = Math.round((i * 137.508) % 360);
  const light = 30 + ((i * 7) % 3) * 8;
  return `hsl(${hue} 65% ${light}%)`;
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
