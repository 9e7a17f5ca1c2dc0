import { Link } from "react-router-dom";
import { ApiError } from "../lib/errors";

/** A link saved before some of its runs were deleted (or left with their team): the server names
 * the missing ones (422 runs: "not found in your teams: …"); offer the rest instead of a dead end. */
export function GoneRuns({
  error,
  runs,
  href = (rest) => `/compare?runs=${rest.join(",")}`,
  min = 2,
}: {
  error: unknown;
  runs: readonly string[];
  /** where the remaining runs open (the compare page by default) */
  href?: (rest: readonly string[]) => string;
  /** the fewest runs the page takes (a comparison 2, a named view 1) */
  min?: number;
}) {
  const gone = new Set(
    error instanceof ApiError
      ? error.fieldErrors
          .filter((f) => f.field === "runs" && f.message.startsWith("not found in your teams: "))
          .flatMap((f) => f.message.slice("not found in your teams: ".length).split(", "))
      : [],
  );
  if (gone.size === 0) return null;
  const rest = runs.filter((r) => !gone.has(r));
  return (
    <p className="muted" data-testid="compare-gone">
      {gone.size === 1
        ? "One of these runs no longer exists"
        : `${gone.size} of these runs no longer exist`}{" "}
      (deleted, or in a team you are not in).{" "}
      {rest.length >= min ? (
        <Link to={href(rest)}>
          Open the other {rest.length === 1 ? "run" : `${rest.length} runs`}
        </Link>
      ) : (
        <Link to="/runs">Pick runs on the runs page</Link>
      )}
      .
    </p>
  );
}
