import { type ReactNode, useEffect, useRef, useState } from "react";
import { flushSync } from "react-dom";

// Every lazy chart at once, from the moment one of these is seen until the page is reloaded:
// printing (`beforeprint`, or print media matching: Chromium's print preview and a screenshot
// tool's `emulateMedia({ media: "print" })`) and a URL with `render=all` (a full-page screenshot
// never scrolls, so charts below the first screen would stay grey placeholders).
let mountAll = false;
const waiting = new Set<() => void>();

/** The URL flag for screenshot tools: `/compare?runs=…&render=all` mounts every chart up front. */
export const RENDER_ALL_PARAM = "render";

function asked(): boolean {
  if (typeof window === "undefined") return false;
  if (new URLSearchParams(window.location.search).get(RENDER_ALL_PARAM) === "all") return true;
  return typeof window.matchMedia === "function" && window.matchMedia("print").matches;
}

/** Mount every lazy chart now, synchronously (the print layout is taken right after
 * `beforeprint`), and every one mounted later. */
export function mountAllLazy(): void {
  if (mountAll) return;
  mountAll = true;
  const pending = [...waiting];
  waiting.clear();
  flushSync(() => {
    for (const show of pending) show();
  });
}

let listening = false;
function listen(): void {
  if (listening || typeof window === "undefined") return;
  listening = true;
  window.addEventListener("beforeprint", mountAllLazy);
  if (typeof window.matchMedia === "function") {
    window.matchMedia("print").addEventListener?.("change", (e) => {
      if (e.matches) mountAllLazy();
    });
  }
}

/**
 * Mounts its children once they come near the viewport (and keeps them): a page with 30 runs
 * draws the charts a reader sees first and the rest as they scroll into view, instead of
 * every chart before the first paint. The placeholder holds the chart's height so the page
 * does not jump. Without IntersectionObserver (tests, old browsers) it mounts at once; when
 * printing or asked by the URL (`render=all`) every chart mounts (see mountAllLazy).
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
  const [shown, setShown] = useState(() => {
    if (!mountAll && asked()) mountAll = true;
    return mountAll || typeof IntersectionObserver === "undefined";
  });
  useEffect(() => {
    listen();
    if (shown || !ref.current) return;
    if (mountAll) {
      setShown(true);
      return;
    }
    const show = () => setShown(true);
    waiting.add(show);
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setShown(true);
      },
      { rootMargin: margin },
    );
    io.observe(ref.current);
    return () => {
      io.disconnect();
      waiting.delete(show);
    };
  }, [shown, margin]);
  if (shown) return <>{children}</>;
  return <div ref={ref} className="lazy-chart" style={{ minHeight }} data-testid="lazy-chart" />;
}
