import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { ApiError } from "../lib/errors";
import { keys } from "./keys";

type S = components["schemas"];
export type ShareLinkCreate = S["ShareLinkCreate"];
export type ShareLinkRead = S["ShareLinkRead"];
export type SharedView = S["SharedView"];
export type ComparisonTarget = S["ComparisonTarget"];

/** A new share link; its URL is in this answer only (the server keeps a hash). */
export async function createShareLink(body: ShareLinkCreate) {
  return unwrap(await api.POST("/api/v1/share-links", { body }));
}

export const shareLinksQuery = (teamId: string) =>
  queryOptions({
    queryKey: keys.sharing.links(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/share-links", {
          params: { query: { team_id: teamId, limit: 200 } },
        }),
      ),
    enabled: teamId !== "",
  });

export async function revokeShareLink(id: string) {
  const r = await api.DELETE("/api/v1/share-links/{share_link_id}", {
    params: { path: { share_link_id: id } },
  });
  if (!r.response.ok) throw new ApiError(r.response.status, r.error);
}

/** The frozen view behind a link, read without login (404 revoked/unknown, 410 expired). */
export const sharedViewQuery = (token: string) =>
  queryOptions({
    queryKey: keys.sharing.shared(token),
    queryFn: async () =>
      unwrap(await api.GET("/api/v1/shared/{token}", { params: { path: { token } } })),
    retry: false,
    refetchOnWindowFocus: false,
  });

/** What the shared page shows, as the server's CSV or JSON download. */
export async function sharedExport(token: string, format: "csv" | "json"): Promise<string> {
  const res =
    format === "csv"
      ? await api.GET("/api/v1/shared/{token}/export.csv", {
          params: { path: { token } },
          parseAs: "text",
        })
      : await api.GET("/api/v1/shared/{token}/export.json", {
          params: { path: { token } },
          parseAs: "text",
        });
  if (res.error !== undefined || typeof res.data !== "string") {
    throw new ApiError(res.response.status, res.error);
  }
  return res.data;
}
