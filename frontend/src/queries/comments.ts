import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { keys } from "./keys";

export type CommentRead = components["schemas"]["CommentRead"];
export type CommentTargetKind = CommentRead["target_kind"];
export type CommentFormat = CommentRead["body_format"];

/** A comparison's thread is keyed by its run ids, sorted (the server's canonical key). */
export function comparisonKey(runIds: string[]): string {
  return [...new Set(runIds.map((r) => r.toLowerCase()))].sort().join(",");
}

export const commentsQuery = (kind: CommentTargetKind, key: string) =>
  queryOptions({
    queryKey: keys.comments.thread(kind, key),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/comments", {
          params: { query: { target_kind: kind, target_key: key, limit: 500 } },
        }),
      ),
  });

export async function createComment(body: {
  target_kind: CommentTargetKind;
  target_key: string;
  body: string;
  body_format: CommentFormat;
}) {
  return unwrap(await api.POST("/api/v1/comments", { body }));
}

export async function updateComment(
  id: string,
  body: { body: string; body_format: CommentFormat },
) {
  return unwrap(
    await api.PATCH("/api/v1/comments/{comment_id}", {
      params: { path: { comment_id: id } },
      body,
    }),
  );
}

export async function deleteComment(id: string) {
  const r = await api.DELETE("/api/v1/comments/{comment_id}", {
    params: { path: { comment_id: id } },
  });
  if (!r.response.ok) unwrap(r);
}
