// "Share" on a review's page: a read-only link to the review (decided: its frozen figures;
// undecided: the figures as they stand when the link is opened, labelled "not decided yet").
// For the review page's header (wired by V2 or the lead: <ShareReviewButton review={review} />).
import type { ReviewRead } from "../../queries/reviews";
import { ShareButton } from "./ShareButton";

export function ShareReviewButton({
  review,
  small = false,
}: {
  review: Pick<ReviewRead, "id" | "team_id" | "name" | "version" | "decision">;
  small?: boolean;
}) {
  return (
    <ShareButton
      teamId={review.team_id}
      share={{ kind: "review", target: review.id }}
      defaultTitle={`${review.name} (version ${review.version})`}
      small={small}
      warning={
        review.decision
          ? undefined
          : "This review is not decided yet: the link shows its figures as they stand when it is opened (said so on the page), and the decision once it is made."
      }
    />
  );
}
