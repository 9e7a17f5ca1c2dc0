// Colours for series, distinguishable and readable on white.
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
  return PALETTE[i % PALETTE.length] ?? "#2563eb";
}
