import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { MemoryRouter, Route, Routes } from "react-router-dom";

/** A query client as renderAt makes one: a test that asks for queries again (a poll) passes it. */
export function testQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry: false } } });
}

/** Renders `element` at `path` inside a router and a fresh query client (or `client`); `/runs/:id`
 * etc. work. */
export function renderAt(
  element: ReactElement,
  { path = "/", route = "*", client }: { path?: string; route?: string; client?: QueryClient } = {},
) {
  const qc = client ?? testQueryClient();
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path={route} element={element} />
          <Route path="/runs/:id" element={<p data-testid="run-page">run page</p>} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

type Handler = (req: Request) => { status?: number; body: unknown } | undefined;

/** Stubs fetch with a router over "METHOD /path" keys; records every request. */
export function stubApi(routes: Record<string, Handler>) {
  const calls: { method: string; path: string; body: unknown }[] = [];
  const fetchStub = async (input: RequestInfo | URL) => {
    const req = input instanceof Request ? input : new Request(input);
    const url = new URL(req.url);
    const key = `${req.method} ${url.pathname}`;
    const text = req.method === "GET" ? "" : await req.clone().text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text; // CSV and other text bodies are recorded as sent
    }
    calls.push({ method: req.method, path: url.pathname, body });
    const res = routes[key]?.(req);
    if (!res)
      return new Response(JSON.stringify({ error: "not_found", message: key }), { status: 404 });
    const status = res.status ?? 200;
    if (status === 204) return new Response(null, { status });
    return new Response(JSON.stringify(res.body), {
      status,
      headers: { "Content-Type": "application/json" },
    });
  };
  globalThis.fetch = fetchStub as typeof fetch;
  return calls;
}
