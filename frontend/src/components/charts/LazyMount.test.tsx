import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// An IntersectionObserver that never reports: every chart stays below the fold.
class NeverIntersecting {
  observe() {}
  disconnect() {}
  unobserve() {}
  takeRecords() {
    return [];
  }
}

let printMatches = false;
const printListeners: ((e: { matches: boolean }) => void)[] = [];

async function fresh() {
  vi.resetModules(); // LazyMount keeps "mount everything" for the page's life: a new page per test
  return (await import("./LazyMount")).LazyMount;
}

function charts(LazyMount: Awaited<ReturnType<typeof fresh>>) {
  return render(
    <div>
      {[1, 2, 3].map((i) => (
        <LazyMount key={i} minHeight={300}>
          <div data-testid="chart">chart {i}</div>
        </LazyMount>
      ))}
    </div>,
  );
}

describe("LazyMount", () => {
  beforeEach(() => {
    printMatches = false;
    printListeners.length = 0;
    vi.stubGlobal("IntersectionObserver", NeverIntersecting);
    vi.stubGlobal("matchMedia", (q: string) => ({
      matches: q === "print" && printMatches,
      addEventListener: (_: string, f: (e: { matches: boolean }) => void) => printListeners.push(f),
    }));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    window.history.replaceState(null, "", "/");
  });

  it("keeps charts out of view as placeholders of their height", async () => {
    charts(await fresh());
    expect(screen.queryAllByTestId("chart")).toHaveLength(0);
    const holders = screen.getAllByTestId("lazy-chart");
    expect(holders).toHaveLength(3);
    expect(holders[0]?.style.minHeight).toBe("300px");
  });

  it("mounts every chart before printing", async () => {
    charts(await fresh());
    act(() => {
      window.dispatchEvent(new Event("beforeprint"));
    });
    // synchronously: the print layout is taken right after the event
    expect(screen.getAllByTestId("chart")).toHaveLength(3);
    expect(screen.queryAllByTestId("lazy-chart")).toHaveLength(0);
  });

  it("mounts every chart when print media starts to match (a screenshot tool's emulateMedia)", async () => {
    charts(await fresh());
    expect(printListeners.length).toBeGreaterThan(0);
    act(() => {
      for (const f of printListeners) f({ matches: true });
    });
    expect(screen.getAllByTestId("chart")).toHaveLength(3);
  });

  it("mounts every chart up front with render=all in the URL", async () => {
    window.history.replaceState(null, "", "/compare?runs=a,b&render=all");
    charts(await fresh());
    expect(screen.getAllByTestId("chart")).toHaveLength(3);
    expect(screen.queryAllByTestId("lazy-chart")).toHaveLength(0);
  });

  it("mounts every chart up front when the page is laid out for print", async () => {
    printMatches = true;
    charts(await fresh());
    expect(screen.getAllByTestId("chart")).toHaveLength(3);
  });
});
