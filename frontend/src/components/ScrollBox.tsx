import type { ReactNode } from "react";

/** A wide table's box: it scrolls sideways inside the page (never widening it, on a phone too)
 * and takes the focus, so a keyboard can scroll it (axe-core: scrollable-region-focusable). */
export function ScrollBox({
  label,
  className = "",
  testId,
  children,
}: {
  label: string;
  className?: string;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <section
      className={`table-scroll ${className}`.trim()}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached with Tab to scroll it
      tabIndex={0}
      aria-label={label}
      data-testid={testId}
    >
      {children}
    </section>
  );
}
