// Procurement reviews (docs/contracts.md § 7): the only module that calls the
// review routes. Money arrives as decimal strings in the review's currency and is shown as sent.
import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { ApiError } from "../lib/errors";

type S = components["schemas"];
export type ReviewRead = S["ReviewRead"];
export type ReviewSummary = S["ReviewSummary"];
export type ReviewCreate = S["ReviewCreate"];
export type ReviewUpdate = S["ReviewUpdate"];
export type CandidateRead = S["CandidateRead"];
export type CandidateCreate = S["CandidateCreate"];
export type CandidateUpdate = S["CandidateUpdate"];
export type ReviewCommentRead = S["ReviewCommentRead"];
export type SensitivityRow = S["SensitivityRow"];
export type PowerIn = S["PowerIn"];
export type Criterion = keyof NonNullable<ReviewCreate["weights"]>;

/** The criteria a review may weigh, in the order the form lists them. */
export const CRITERIA: readonly { key: Criterion; label: string; better: "higher" | "lower" }[] = [
  { key: "tco", label: "TCO", better: "lower" },
  { key: "performance", label: "Performance", better: "higher" },
  { key: "co2e_lifetime", label: "Lifetime CO2e", better: "lower" },
  { key: "cost_per_iops_set", label: "Cost per IOPS (set)", better: "lower" },
  { key: "cost_per_gb_usable", label: "Cost per usable GB", better: "lower" },
  { key: "energy", label: "Energy per year", better: "lower" },
  { key: "usable_capacity", label: "Usable capacity", better: "higher" },
];

export const reviewKeys = {
  all: () => ["reviews"] as const,
  list: (teamId?: string) => ["reviews", "list", teamId ?? "all"] as const,
  detail: (id: string) => ["reviews", "detail", id] as const,
  comments: (id: string) => ["reviews", "comments", id] as const,
};

/** The reviews of one team (the switcher's) or, without one, of all the user's teams. */
export const reviewsQuery = (teamId?: string) =>
  queryOptions({
    queryKey: reviewKeys.list(teamId),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/v1/reviews", {
          params: { query: { ...(teamId ? { team_id: teamId } : {}), limit: 500 } },
        }),
      ),
  });

export const reviewQuery = (id: string) =>
  queryOptions({
    queryKey: reviewKeys.detail(id),
    queryFn: async (): Promise<ReviewRead> => {
      const r = unwrap(
        await api.GET("/api/v1/reviews/{review_id}", { params: { path: { review_id: id } } }),
      );
      // the route also answers CSV (format=csv); without it the body is the JSON review
      if (typeof r === "string")
        throw new ApiError(500, { message: "expected the review as JSON" });
      return r;
    },
  });

/** Comments asked per page; the server answers at most 200 (GET /reviews/{id}/comments). */
export const REVIEW_COMMENTS_PAGE = 50;

/** The discussion, oldest first, a page at a time: the next page starts after what is loaded. */
export const reviewCommentsQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: reviewKeys.comments(id),
    initialPageParam: 0,
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET("/api/v1/reviews/{review_id}/comments", {
          params: {
            path: { review_id: id },
            query: { limit: REVIEW_COMMENTS_PAGE, offset: pageParam },
          },
        }),
      ),
    getNextPageParam: (last, pages) => {
      const loaded = pages.reduce((n, p) => n + p.items.length, 0);
      return last.items.length > 0 && loaded < last.total ? loaded : undefined;
    },
  });

export async function createReview(body: ReviewCreate) {
  return unwrap(await api.POST("/api/v1/reviews", { body }));
}

export async function updateReview(id: string, body: ReviewUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/reviews/{review_id}", { params: { path: { review_id: id } }, body }),
  );
}

export async function addCandidate(id: string, body: CandidateCreate) {
  return unwrap(
    await api.POST("/api/v1/reviews/{review_id}/candidates", {
      params: { path: { review_id: id } },
      body,
    }),
  );
}

export async function updateCandidate(id: string, candidateId: string, body: CandidateUpdate) {
  return unwrap(
    await api.PATCH("/api/v1/reviews/{review_id}/candidates/{candidate_id}", {
      params: { path: { review_id: id, candidate_id: candidateId } },
      body,
    }),
  );
}

export async function removeCandidate(id: string, candidateId: string) {
  const r = await api.DELETE("/api/v1/reviews/{review_id}/candidates/{candidate_id}", {
    params: { path: { review_id: id, candidate_id: candidateId } },
  });
  if (!r.response.ok) throw new ApiError(r.response.status, r.error);
}

export async function decideReview(id: string, body: { candidate_id: string; reason: string }) {
  return unwrap(
    await api.POST("/api/v1/reviews/{review_id}/decision", {
      params: { path: { review_id: id } },
      body,
    }),
  );
}

/** A new undecided version (version + 1) of a decided review, with its context and candidates. */
export async function newReviewVersion(id: string) {
  return unwrap(
    await api.POST("/api/v1/reviews/{review_id}/versions", {
      params: { path: { review_id: id } },
    }),
  );
}

export async function addReviewComment(id: string, body: string) {
  return unwrap(
    await api.POST("/api/v1/reviews/{review_id}/comments", {
      params: { path: { review_id: id } },
      body: { body },
    }),
  );
}

/** The server's CSV (one row per candidate), as text. */
export async function reviewCsv(id: string): Promise<string> {
  const r = await api.GET("/api/v1/reviews/{review_id}", {
    params: { path: { review_id: id }, query: { format: "csv" } },
    parseAs: "text",
  });
  if (r.error !== undefined || typeof r.data !== "string") {
    throw new ApiError(r.response.status, r.error);
  }
  return r.data;
}

/** The printable report (Chromium on the server; 503 pdf_unavailable without it). */
export async function reviewPdf(id: string): Promise<Blob> {
  const r = await api.GET("/api/v1/reviews/{review_id}/pdf", {
    params: { path: { review_id: id } },
    parseAs: "blob",
  });
  if (r.error !== undefined || !(r.data instanceof Blob)) {
    throw new ApiError(r.response.status, r.error);
  }
  return r.data;
}
