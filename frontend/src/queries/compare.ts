import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { CompareState } from "../lib/compareState";
import { ApiError } from "../lib/errors";
import { keys } from "./keys";

/** The server's query for a compare state (chart choices stay in the browser). */
function compareParams(
  s: Pick<
    CompareState,
    "runs" | "baseline" | "groupBy" | "fingerprint" | "force" | "env" | "targets"
  >,
) {
  return {
    runs: s.runs.join(","),
    baseline: s.baseline,
    group_by: s.groupBy,
    fingerprint: s.fingerprint,
    force: s.force,
    env: s.env.length > 0 ? s.env : undefined,
    targets: s.targets && s.targets.length > 0 ? s.targets : undefined,
  };
}

export const compareQuery = (
  s: Pick<
    CompareState,
    "runs" | "baseline" | "groupBy" | "fingerprint" | "force" | "env" | "targets"
  >,
) =>
  queryOptions({
    queryKey: keys.compare.table(compareParams(s)),
    queryFn: async () => {
      // The route also answers text/csv (format=csv); without it the answer is JSON.
      const res = await api.GET("/api/v1/compare", { params: { query: compareParams(s) } });
      const data = unwrap(res);
      if (typeof data === "string") throw new ApiError(res.response.status, "expected JSON");
      return data;
    },
    enabled: s.runs.length >= 2,
  });

/** The same comparison as CSV text (format=csv), for the download button. */
export async function compareCsv(
  s: Pick<
    CompareState,
    "runs" | "baseline" | "groupBy" | "fingerprint" | "force" | "env" | "targets"
  >,
): Promise<string> {
  const res = await api.GET("/api/v1/compare", {
    params: { query: { ...compareParams(s), format: "csv" } },
    parseAs: "text",
  });
  if (res.error !== undefined || typeof res.data !== "string") {
    throw new ApiError(res.response.status, res.error);
  }
  return res.data;
}

/** `env`: the compare page's environment filter (FIELD:VALUE), so the curves show the same runs. */
export const latencyQuery = (
  runs: string[],
  job: string,
  groupBy: CompareState["groupBy"],
  env: string[] = [],
) =>
  queryOptions({
    queryKey: keys.compare.latency(runs, job, groupBy, env),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/compare/latency", {
          params: {
            query: {
              runs: runs.join(","),
              job,
              group_by: groupBy,
              env: env.length ? env : undefined,
            },
          },
        }),
      ),
    enabled: runs.length >= 1 && job !== "",
    staleTime: 60_000,
  });
