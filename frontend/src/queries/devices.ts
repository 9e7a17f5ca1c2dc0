import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { DeviceUpdate } from "../client/types";
import { keys } from "./keys";

/** The devices of one team (the switcher's, lib/role useListTeam) or, without one, of all. */
export const devicesQuery = (teamId?: string) =>
  queryOptions({
    queryKey: keys.devices.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/devices", { params: { query: teamId ? { team_id: teamId } : {} } }),
      ),
    staleTime: 30_000,
  });

export async function updateDevice(id: string, body: DeviceUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/devices/{device_id}", { params: { path: { device_id: id } }, body }),
  );
}
