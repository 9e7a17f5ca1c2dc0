/** Hands a blob to the browser as a file download: a temporary link, clicked, its URL revoked
 * after 10 s. The one place the UI saves a file (exports, CSVs, PDFs, an import's original). */
export function saveBlob(blob: Blob, filename: string): void {
  const href = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = href;
  a.download = filename;
  a.dataset.testid = "download-link";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/** Text of a media type (CSV, JSON) saved as the file `filename`. */
export function saveText(filename: string, type: string, text: string): void {
  saveBlob(new Blob([text], { type }), filename);
}
