import { useQuery } from "@tanstack/react-query";
import type { WorkloadRead } from "../../client/types";
import { type FileFacts, kindOf, postmarkFactsAt, specOf } from "../../lib/fileWorkload";
import { workloadFactsQuery } from "../../queries/workloads";

/**
 * The facts of a file workload at `factor` × its saved scale: PostMark's from its settings (the
 * engine's rule: files × mean size), vdbench's from the engine through the server (its scale
 * rounds files and sizes with minimums that only the engine knows), the stored ones at factor 1.
 * `factor` null: not a valid scale (nothing asked).
 */
export function useFileFacts(
  workload: WorkloadRead | undefined,
  factor: number | null,
): { facts: (FileFacts & { transactions?: number }) | null; pending: boolean; error: unknown } {
  const spec = workload ? specOf(workload) : undefined;
  const kind = kindOf(spec);
  const stored = spec?.facts ?? null;
  const ask = kind === "vdbench" && factor !== null && !(factor === 1 && stored);
  const q = useQuery({
    ...workloadFactsQuery(workload?.spec ?? ({} as WorkloadRead["spec"]), factor ?? 1),
    enabled: !!workload && ask,
  });
  if (!spec || factor === null || kind === "block")
    return { facts: null, pending: false, error: null };
  if (kind === "postmark" && spec.postmark)
    return { facts: postmarkFactsAt(spec.postmark, factor), pending: false, error: null };
  if (!ask) return { facts: stored, pending: false, error: null };
  return { facts: (q.data as FileFacts | undefined) ?? null, pending: q.isPending, error: q.error };
}
