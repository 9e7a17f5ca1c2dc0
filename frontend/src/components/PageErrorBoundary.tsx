import { Component, type ReactNode } from "react";

/** Whether `error` is a lazily loaded part of the app (a route's chunk, or a module or style sheet
 * it imports) that did not arrive: the network failed, or the server was upgraded while the tab
 * stayed open and the old build's files are gone. The wording is the browser's or Vite's own:
 * Chromium and Firefox "…dynamically imported module…", Safari "Importing a module script failed",
 * Vite's preload "Unable to preload CSS for …". */
export function isChunkLoadError(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return /dynamically imported module|importing a module script failed|unable to preload css|chunkloaderror/i.test(
    text,
  );
}

type Props = {
  children: ReactNode;
  /** A new value (the route's path) clears a shown error: the next page gets its own chance. */
  resetKey?: string;
  /** What Reload does (tests): the browser's reload. */
  onReload?: () => void;
};
type State = { error: unknown };

/** Catches what a page throws while loading or drawing and says so, with a Reload button, instead
 * of leaving the page blank. A chunk that failed to load stays failed for this document (React
 * keeps the lazy import's outcome), so the way out is a reload, which also fetches the current
 * build after an upgrade. */
export class PageErrorBoundary extends Component<Props, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error ?? new Error("unknown error") };
  }

  componentDidUpdate(prev: Props) {
    if (this.state.error !== null && prev.resetKey !== this.props.resetKey) {
      this.setState({ error: null });
    }
  }

  render() {
    const { error } = this.state;
    if (error === null) return this.props.children;
    const chunk = isChunkLoadError(error);
    const detail = error instanceof Error ? error.message : String(error);
    return (
      <section
        className="page-error"
        data-testid="page-error"
        data-kind={chunk ? "load" : "render"}
      >
        <h1>{chunk ? "This page could not be loaded" : "This page could not be shown"}</h1>
        <div className="alert alert-error" role="alert">
          {chunk
            ? "Part of the app did not arrive: the network dropped, or iowatt was updated since this tab was opened. Reloading fetches the current version."
            : "Something went wrong while drawing this page. Reloading starts it again; if the error comes back, the details below help a bug report."}
        </div>
        <p>
          <button
            type="button"
            className="btn btn-primary"
            data-testid="page-error-reload"
            onClick={() => (this.props.onReload ?? (() => window.location.reload()))()}
          >
            Reload
          </button>
        </p>
        <details>
          <summary className="muted small">Details</summary>
          <pre className="small" data-testid="page-error-detail">
            {detail}
          </pre>
        </details>
      </section>
    );
  }
}
