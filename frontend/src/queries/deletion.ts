// Deleting things and exporting a team (ADR 0021). Each call answers 204 or throws the
// server's error (403 naming the role, 409 saying what is in the way, 422 naming the field).
import { api, unwrap } from "../client";

async function ok(r: { error?: unknown; response: Response }) {
  if (!r.response.ok) unwrap({ ...r, data: undefined });
}

export async function deleteRun(id: string) {
  await ok(await api.DELETE("/api/v1/runs/{run_id}", { params: { path: { run_id: id } } }));
}

export async function deleteCampaign(id: string, keepRuns = false) {
  await ok(
    await api.DELETE("/api/v1/campaigns/{campaign_id}", {
      params: { path: { campaign_id: id }, query: { keep_runs: keepRuns } },
    }),
  );
}

export async function deleteDevice(id: string, force = false) {
  await ok(
    await api.DELETE("/api/v1/devices/{device_id}", {
      params: { path: { device_id: id }, query: { force } },
    }),
  );
}

export async function deleteEnvironment(id: string, force = false) {
  await ok(
    await api.DELETE("/api/v1/environments/{environment_id}", {
      params: { path: { environment_id: id }, query: { force } },
    }),
  );
}

export async function deleteWorkload(id: string) {
  await ok(
    await api.DELETE("/api/v1/workloads/{workload_id}", {
      params: { path: { workload_id: id } },
    }),
  );
}

export async function deleteTeam(id: string, confirmName: string) {
  await ok(
    await api.DELETE("/api/v1/teams/{team_id}", {
      params: { path: { team_id: id } },
      body: { confirm_name: confirmName },
    }),
  );
}

export async function deleteAccount(body: { password?: string; confirm_email?: string }) {
  await ok(await api.DELETE("/api/v1/auth/me", { body }));
}

/** The team's zip (JSON and CSV), handed to the browser as a download. */
export async function exportTeam(id: string): Promise<{ blob: Blob; filename: string }> {
  const r = await api.POST("/api/v1/teams/{team_id}/export", {
    params: { path: { team_id: id } },
    parseAs: "blob",
  });
  if (!r.response.ok) unwrap({ ...r, data: undefined });
  const cd = r.response.headers.get("Content-Disposition") ?? "";
  const filename = /filename="([^"]+)"/.exec(cd)?.[1] ?? "iowatt-team-export.zip";
  return { blob: r.data as unknown as Blob, filename };
}
