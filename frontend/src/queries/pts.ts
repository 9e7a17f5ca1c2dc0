import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import { ApiError } from "../lib/errors";
import { keys } from "./keys";

/** A SNIA PTS run's report (GET /runs/{id}/pts): verdict, rounds, window and tables. */
export const ptsReportQuery = (id: string) =>
  queryOptions({
    queryKey: keys.runs.pts(id),
    queryFn: async () => {
      const report = unwrap(
        await api.GET("/api/v1/runs/{run_id}/pts", { params: { path: { run_id: id } } }),
      );
      // the route also answers CSV (format=csv); without it the body is the JSON report
      if (typeof report === "string")
        throw new ApiError(500, { message: "expected the report as JSON" });
      return report;
    },
    staleTime: Number.POSITIVE_INFINITY,
  });

/** The report's tables as the server's CSV, as text. */
export async function ptsCsv(id: string): Promise<string> {
  const r = await api.GET("/api/v1/runs/{run_id}/pts", {
    params: { path: { run_id: id }, query: { format: "csv" } },
    parseAs: "text",
  });
  if (r.error !== undefined || typeof r.data !== "string") {
    throw new ApiError(r.response.status, r.error);
  }
  return r.data;
}
