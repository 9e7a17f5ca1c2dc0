import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { ApiError } from "../lib/errors";
import { keys } from "./keys";

/** The server's named views (backend/views): which exist and which can show these runs. */
export const viewCatalogQuery = (runs: string[]) =>
  queryOptions({
    queryKey: keys.views.catalog(runs),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/views", {
          params: { query: runs.length ? { runs: runs.join(",") } : {} },
        }),
      ),
    staleTime: 60_000,
  });

type S = components["schemas"];
export type ViewName = S["ViewInfo"]["name"];
export type ViewTable = S["ViewTable"];
export type ViewChart = S["ViewChart"];
export type ViewColumn = S["ViewColumn"];
/** A run a view shows; `origin`: an imported or published run's (its label is also in `label`). */
export type ViewRun = S["ViewRun"];

export interface ViewParams {
  view: ViewName;
  runs: string[];
  baseline?: string;
}

function viewQuery(p: ViewParams) {
  return {
    view: p.view,
    runs: p.runs.join(","),
    ...(p.baseline ? { baseline: p.baseline } : {}),
  };
}

export const viewTableQuery = (p: ViewParams) =>
  queryOptions({
    queryKey: keys.views.table(viewQuery(p)),
    queryFn: async () => {
      const res = await api.GET("/api/v1/views/table", { params: { query: viewQuery(p) } });
      const data = unwrap(res);
      if (typeof data === "string") throw new ApiError(res.response.status, "expected JSON");
      return data;
    },
    enabled: p.runs.length >= 1,
    staleTime: 60_000,
  });

/** The same view as CSV (format=csv): the same columns as the page. */
export async function viewCsv(p: ViewParams): Promise<string> {
  const res = await api.GET("/api/v1/views/table", {
    params: { query: { ...viewQuery(p), format: "csv" } },
    parseAs: "text",
  });
  if (res.error !== undefined || typeof res.data !== "string") {
    throw new ApiError(res.response.status, res.error);
  }
  return res.data;
}
