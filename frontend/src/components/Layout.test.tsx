import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it } from "vitest";
import { stubApi } from "../test/render";
import { Layout } from "./Layout";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

function renderLayout() {
  stubApi({});
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter initialEntries={["/"]}>
        <Routes>
          <Route element={<Layout />}>
            <Route index element={<h1>home</h1>} />
            <Route path="runs" element={<h1>runs page</h1>} />
          </Route>
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe("Layout's menu (phones, below 768 px)", () => {
  it("opens and closes the menu, which names what it controls, and closes it on navigation", async () => {
    renderLayout();
    const toggle = screen.getByTestId("menu-toggle");
    expect(toggle.getAttribute("aria-controls")).toBe("app-menu");
    expect(document.getElementById("app-menu")?.contains(screen.getByTestId("logout"))).toBe(true);
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(document.querySelector(".topbar")?.classList.contains("menu-open")).toBe(true);
    fireEvent.click(screen.getByRole("link", { name: "Runs" }));
    expect(await screen.findByText("runs page")).toBeTruthy();
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
  });
  it("closes on Escape and offers a skip link to the content", () => {
    renderLayout();
    const toggle = screen.getByTestId("menu-toggle");
    fireEvent.click(toggle);
    fireEvent.keyDown(toggle, { key: "Escape" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(screen.getByRole("link", { name: "Skip to content" }).getAttribute("href")).toBe(
      "#main",
    );
    expect(screen.getByRole("navigation", { name: "Main" })).toBeTruthy();
  });
});
