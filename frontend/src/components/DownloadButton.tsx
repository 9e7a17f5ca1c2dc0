import { useState } from "react";
import { saveBlob } from "../lib/download";
import { errorMessage } from "../lib/errors";

/** A button that fetches a file (the request needs the bearer token, so no plain link) and hands
 * it to the browser; "Preparing…" meanwhile, the error and a retry when it fails. */
export function DownloadButton({
  fetchFile,
  label,
  title,
  testId,
}: {
  fetchFile: () => Promise<{ blob: Blob; name: string }>;
  label: string;
  title: string;
  testId: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setBusy(true);
    setError(null);
    try {
      const { blob, name } = await fetchFile();
      saveBlob(blob, name);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button
      type="button"
      className="btn btn-small"
      onClick={download}
      disabled={busy}
      data-testid={testId}
      title={error ?? title}
    >
      {busy ? "Preparing…" : error ? `Retry download (${error})` : label}
    </button>
  );
}
