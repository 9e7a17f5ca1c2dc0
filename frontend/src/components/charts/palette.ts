// Colours for series, distinguishable and readable on white: eight fixed ones, then hues spread
// by the golden angle, so 30 compared runs get 30 different colours (not the eight repeated).
const PALETTE = [
  "#2563eb",
  "#ea580c",
  "#16a34a",
  "#9333ea",
  "#dc2626",
  "#0891b2",
  "#ca8a04",
  "#db2777",
] as const;

export function colorAt(i: number): string {
  if (i < PALETTE.length) return PALETTE[i] ?? "#2563eb";
  const hue = Math.round((i * 137.508) % 360);
  const light = 32 + ((i * 7) % 3) * 8;
  return `hsl(${hue} 70% ${light}%)`;
}
