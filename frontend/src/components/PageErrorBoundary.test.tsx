import { fireEvent, render, screen } from "@testing-library/react";
import { lazy, Suspense } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isChunkLoadError, PageErrorBoundary } from "./PageErrorBoundary";

// React reports every error a boundary catches (console.error, and in development a window
// "error" event that jsdom prints): expected here, kept quiet
let quiet: ReturnType<typeof vi.spyOn>;
const hush = (e: ErrorEvent) => e.preventDefault();
beforeEach(() => {
  quiet = vi.spyOn(console, "error").mockImplementation(() => {});
  window.addEventListener("error", hush);
});
afterEach(() => {
  quiet.mockRestore();
  window.removeEventListener("error", hush);
});

const CHUNK =
  "Failed to fetch dynamically imported module: http://127.0.0.1:8000/assets/Dashboard-Bx1.js";

function Boom({ message }: { message: string }): never {
  throw new Error(message);
}

describe("isChunkLoadError", () => {
  it("knows the browsers' and Vite's words for a module that did not arrive", () => {
    expect(isChunkLoadError(new TypeError(CHUNK))).toBe(true);
    expect(isChunkLoadError(new TypeError("error loading dynamically imported module: x"))).toBe(
      true,
    );
    expect(isChunkLoadError(new TypeError("Importing a module script failed."))).toBe(true);
    expect(isChunkLoadError(new Error("Unable to preload CSS for /assets/Runs-1.css"))).toBe(true);
    expect(isChunkLoadError(new TypeError("Cannot read properties of undefined"))).toBe(false);
    expect(isChunkLoadError("a string")).toBe(false);
    expect(isChunkLoadError(null)).toBe(false);
  });
});

describe("PageErrorBoundary", () => {
  it("says a lazy page's chunk failed to load and offers a reload, not a blank page", async () => {
    const Page = lazy(() => Promise.reject(new TypeError(CHUNK)));
    const reload = vi.fn();
    render(
      <PageErrorBoundary onReload={reload}>
        <Suspense fallback={<p>Loading…</p>}>
          <Page />
        </Suspense>
      </PageErrorBoundary>,
    );
    const box = await screen.findByTestId("page-error");
    expect(box.getAttribute("data-kind")).toBe("load");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe(
      "This page could not be loaded",
    );
    expect(screen.getByRole("alert").textContent).toMatch(/updated since this tab was opened/);
    expect(screen.getByTestId("page-error-detail").textContent).toBe(CHUNK);
    fireEvent.click(screen.getByRole("button", { name: "Reload" }));
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it("says a page failed to draw, with the error in its details", () => {
    render(
      <PageErrorBoundary onReload={() => {}}>
        <Boom message="x is undefined" />
      </PageErrorBoundary>,
    );
    expect(screen.getByTestId("page-error").getAttribute("data-kind")).toBe("render");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe(
      "This page could not be shown",
    );
    expect(screen.getByTestId("page-error-detail").textContent).toBe("x is undefined");
    expect(screen.getByRole("button", { name: "Reload" })).toBeTruthy();
  });

  it("clears the error when the route changes, and not before", () => {
    const { rerender } = render(
      <PageErrorBoundary resetKey="/runs">
        <Boom message="broken" />
      </PageErrorBoundary>,
    );
    expect(screen.getByTestId("page-error")).toBeTruthy();
    rerender(
      <PageErrorBoundary resetKey="/runs">
        <p>fine</p>
      </PageErrorBoundary>,
    );
    expect(screen.getByTestId("page-error")).toBeTruthy();
    rerender(
      <PageErrorBoundary resetKey="/agents">
        <p>fine</p>
      </PageErrorBoundary>,
    );
    expect(screen.queryByTestId("page-error")).toBeNull();
    expect(screen.getByText("fine")).toBeTruthy();
  });
});
