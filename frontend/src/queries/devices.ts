import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { DeviceUpdate } from "../client/types";
import { keys } from "./keys";

export const devicesQuery = () =>
  queryOptions({
    queryKey: keys.devices.all(),
    queryFn: async () => unwrap(await api.GET("/api/v1/devices")),
    staleTime: 30_000,
  });

export async function updateDevice(id: string, body: DeviceUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/devices/{device_id}", { params: { path: { device_id: id } }, body }),
  );
}
