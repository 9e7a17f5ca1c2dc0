// The server's one error shape: {"error", "message", "detail": [{"field", "message"}]}.

interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fieldErrors: FieldError[];
  /** the server's id of the request (500s carry it): what to quote to whoever reads the log */
  readonly requestId: string | null;
  /** how long the server asked us to wait before trying again (a 503 `overloaded`: ADR 0056) */
  readonly retryAfterS: number | null;

  constructor(status: number, body: unknown) {
    const b = (body ?? {}) as {
      error?: unknown;
      message?: unknown;
      detail?: unknown;
      request_id?: unknown;
    };
    const text =
      typeof b.message === "string"
        ? b.message
        : typeof b.detail === "string"
          ? b.detail
          : `request failed with HTTP ${status}`;
    const requestId = typeof b.request_id === "string" && b.request_id ? b.request_id : null;
    // "internal server error; the request id names it in the server log" says which id: show it
    super(requestId ? `${text} (request id ${requestId})` : text);
    this.requestId = requestId;
    this.name = "ApiError";
    this.status = status;
    this.code = typeof b.error === "string" ? b.error : `http_${status}`;
    this.fieldErrors = Array.isArray(b.detail) ? b.detail.flatMap(toFieldError) : [];
    const wait =
      typeof b.detail === "object" && b.detail !== null && !Array.isArray(b.detail)
        ? (b.detail as { retry_after_s?: unknown }).retry_after_s
        : undefined;
    this.retryAfterS = typeof wait === "number" && Number.isFinite(wait) && wait > 0 ? wait : null;
  }
}

function toFieldError(d: unknown): FieldError[] {
  if (typeof d !== "object" || d === null) return [];
  const o = d as { field?: unknown; loc?: unknown; message?: unknown; msg?: unknown };
  const field = typeof o.field === "string" ? o.field : Array.isArray(o.loc) ? o.loc.join(".") : "";
  const message =
    typeof o.message === "string" ? o.message : typeof o.msg === "string" ? o.msg : "";
  return message ? [{ field, message }] : [];
}

/**
 * Maps the server's field paths ("workload.jobs.0.bs_bytes", "body.target_path") onto the
 * names of a form's inputs by their last meaningful segment. Unmatched errors land under "".
 * `indexed` names lists whose items the form shows one by one (a workload's "jobs"): an error
 * inside item N lands under "<list>.N.<alias>" ("jobs.1.bs"), so it sits beside that item's field.
 */
export function fieldErrorsFor(
  errors: FieldError[],
  aliases: Record<string, string>,
  indexed: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors) {
    const all = e.field.split(".").filter((s) => s !== "");
    const segments = all.filter((s) => !/^\d+$/.test(s));
    let key = "";
    for (let i = segments.length - 1; i >= 0; i -= 1) {
      const seg = segments[i] ?? "";
      if (seg in aliases) {
        key = aliases[seg] ?? "";
        break;
      }
    }
    for (let i = all.length - 2; key && i >= 0; i -= 1) {
      const list = all[i] ?? "";
      const index = all[i + 1] ?? "";
      if (indexed.includes(list) && /^\d+$/.test(index)) {
        key = `${list}.${index}.${key}`;
        break;
      }
    }
    out[key] = out[key] ? `${out[key]}; ${e.message}` : e.message;
  }
  return out;
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
