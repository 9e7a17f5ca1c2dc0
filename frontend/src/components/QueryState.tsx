import { errorMessage } from "../lib/errors";

/** Loading and error placeholders shared by pages. */
export function QueryState({ isPending, error }: { isPending: boolean; error: unknown }) {
  if (error) {
    return (
      <div className="alert alert-error" role="alert">
        {errorMessage(error)}
      </div>
    );
  }
  if (isPending) return <p className="muted">Loading…</p>;
  return null;
}
