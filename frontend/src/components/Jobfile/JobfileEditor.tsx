import { useQuery } from "@tanstack/react-query";
import { type ChangeEvent, useEffect, useState } from "react";
import { ApiError, errorMessage } from "../../lib/errors";
import { jobfileParseQuery } from "../../queries/workloads";
import { type Errors, Field } from "../Field";
import { JobfileJobs } from "./JobfileView";
import { JOBFILE_MAX_BYTES, type JobfileParse, utf8Bytes } from "./jobfile";

/** The text the engine is asked about: the last one typed, once typing paused. */
function useSettled(text: string, ms = 400): string {
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const t = setTimeout(() => setSettled(text), ms);
    return () => clearTimeout(t);
  }, [text, ms]);
  return settled;
}

/** New run's fio job file: paste or upload it, see the jobs the engine makes of it (the server
 * asks the engine: POST /workloads/jobfile), edit it; `onParsed` gets the parse (null while
 * there is none) for the form's plan (does it write?). */
export function JobfileEditor({
  text,
  onChange,
  onParsed,
  errors,
}: {
  text: string;
  onChange: (text: string) => void;
  onParsed: (parse: JobfileParse | null) => void;
  errors: Errors;
}) {
  const settled = useSettled(text);
  const bytes = utf8Bytes(settled);
  const ask = settled.trim() !== "" && bytes <= JOBFILE_MAX_BYTES;
  const q = useQuery({ ...jobfileParseQuery(settled), enabled: ask });
  const parse = ask && q.data ? q.data : null;
  useEffect(() => onParsed(parse), [parse, onParsed]);
  const [uploadError, setUploadError] = useState<string | null>(null);

  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    e.target.value = "";
    if (!file) return;
    if (file.size > JOBFILE_MAX_BYTES) {
      setUploadError(`${file.name} is ${file.size} bytes: a job file is at most 64 KiB`);
      return;
    }
    setUploadError(null);
    onChange(await file.text());
  }

  const refused =
    q.error instanceof ApiError && q.error.fieldErrors.length > 0
      ? q.error.fieldErrors.map((f) => f.message).join("; ")
      : q.error
        ? errorMessage(q.error)
        : null;
  return (
    <div className="jobfile-editor" data-testid="jobfile-editor">
      <Field
        label="fio job file"
        name="jobfile"
        errors={errors}
        hint="paste it or upload a .fio file; filename and directory are replaced by the target"
      >
        <textarea
          id="f-jobfile"
          name="jobfile"
          className="jobfile-text"
          rows={14}
          spellCheck={false}
          value={text}
          placeholder={
            "[global]\nioengine=libaio\ndirect=1\nbs=4k\n\n[randread]\nrw=randread\nsize=1g\nruntime=30\ntime_based=1"
          }
          onChange={(e) => onChange(e.target.value)}
          data-testid="jobfile-input"
        />
      </Field>
      <div className="actions" style={{ justifyContent: "flex-start" }}>
        <label className="btn btn-small">
          Upload a .fio file
          <input
            type="file"
            accept=".fio,.job,.ini,.txt,text/plain"
            onChange={onFile}
            hidden
            data-testid="jobfile-upload"
          />
        </label>
        <span className="small muted">
          {bytes.toLocaleString("en-US")} of {JOBFILE_MAX_BYTES.toLocaleString("en-US")} bytes
        </span>
      </div>
      {uploadError && (
        <p className="field-error small" role="alert">
          {uploadError}
        </p>
      )}
      {bytes > JOBFILE_MAX_BYTES && (
        <p className="field-error small" role="alert" data-testid="jobfile-too-big">
          The job file is larger than 64 KiB.
        </p>
      )}
      {ask && refused && (
        <p className="policy-refusal small" role="alert" data-testid="jobfile-refused">
          The engine refuses it: {refused}
        </p>
      )}
      {ask && q.isFetching && !parse && <p className="small muted">Asking the engine…</p>}
      {parse && !refused && settled === text && (
        <>
          <p className="small" data-testid="jobfile-summary">
            {parse.jobs.length} job{parse.jobs.length === 1 ? "" : "s"} in{" "}
            {new Set(parse.jobs.map((j) => j.group)).size} group
            {new Set(parse.jobs.map((j) => j.group)).size === 1 ? "" : "s"}, as the engine reads it:
          </p>
          <JobfileJobs parse={parse} />
        </>
      )}
    </div>
  );
}
