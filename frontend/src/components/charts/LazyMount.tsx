import { type ReactNode, useEffect, useRef, useState } from "react";

/**
 * Mounts its children once they come near the viewport (and keeps them): a page with 30 runs
 * draws the charts a reader sees first and the rest as they scroll into view, instead of
 * every chart before the first paint. The placeholder holds the chart's height so the page
 * does not jump. Without IntersectionObserver (tests, old browsers) it mounts at once.
 */
export function LazyMount({
  minHeight,
  children,
  margin = "150px",
}: {
  minHeight: number;
  children: ReactNode;
  margin?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [shown, setShown] = useState(() => typeof IntersectionObserver === "undefined");
  useEffect(() => {
    if (shown || !ref.current) return;
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setShown(true);
      },
      { rootMargin: margin },
    );
    io.observe(ref.current);
    return () => io.disconnect();
  }, [shown, margin]);
  if (shown) return <>{children}</>;
  return <div ref={ref} className="lazy-chart" style={{ minHeight }} data-testid="lazy-chart" />;
}
