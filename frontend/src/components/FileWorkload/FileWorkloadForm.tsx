import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { WorkloadCreate, WorkloadRead } from "../../client/types";
import {
  POSTMARK_DEFAULTS,
  type PostmarkSpec,
  parseScale,
  type VdbenchSpec,
} from "../../lib/fileWorkload";
import { formatSize, parseSize } from "../../lib/format";
import { keys } from "../../queries/keys";
import { createWorkload } from "../../queries/workloads";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../Field";
import "./fileWorkload.css";

/** Server field names (last path segment) → this form's inputs. */
export const WORKLOAD_FIELD_ALIASES: Record<string, string> = {
  name: "name",
  description: "description",
  team_id: "name",
  kind: "kind",
  postmark: "kind",
  vdbench: "kind",
  jobs: "kind",
  number: "pm.number",
  size_low_bytes: "pm.size_low",
  size_high_bytes: "pm.size_high",
  subdirectories: "pm.subdirectories",
  read_block_bytes: "pm.read",
  write_block_bytes: "pm.write",
  transactions: "pm.transactions",
  bias_read: "pm.bias_read",
  bias_create: "pm.bias_create",
  buffering: "pm.buffering",
  seed: "pm.seed",
  fsync: "pm.fsync",
  parameters: "vd.parameters",
  scale: "vd.scale",
  elapsed_s: "vd.elapsed",
};

/** PostMark's settings as typed (sizes in fio's syntax, e.g. 4k; numbers as text). */
export interface PostmarkDraft {
  number: string;
  sizeLow: string;
  sizeHigh: string;
  subdirectories: string;
  read: string;
  write: string;
  transactions: string;
  biasRead: string;
  biasCreate: string;
  buffering: boolean;
  seed: string;
  fsync: boolean;
}

export function postmarkDraft(p: PostmarkSpec = POSTMARK_DEFAULTS): PostmarkDraft {
  return {
    number: String(p.number),
    sizeLow: formatSize(p.size_low_bytes),
    sizeHigh: formatSize(p.size_high_bytes),
    subdirectories: String(p.subdirectories),
    read: formatSize(p.read_block_bytes),
    write: formatSize(p.write_block_bytes),
    transactions: String(p.transactions),
    biasRead: String(p.bias_read),
    biasCreate: String(p.bias_create),
    buffering: p.buffering,
    seed: String(p.seed),
    fsync: p.fsync,
  };
}

const integer = (t: string) => (/^-?\d+$/.test(t.trim()) ? Number(t.trim()) : null);

/**
 * The PostMark spec, or the errors the browser can tell before the server does (the server and
 * the engine check every value again: its 422 lands beside the same inputs).
 */
export function buildPostmark(d: PostmarkDraft): { spec?: PostmarkSpec; errors: Errors } {
  const errors: Errors = {};
  const err = (k: string, message: string) => {
    errors[`pm.${k}`] = { message, source: "client" };
  };
  const count = (t: string, k: string, min: number, what: string) => {
    const v = integer(t);
    if (v === null || v < min) err(k, what);
    return v ?? 0;
  };
  const size = (t: string, k: string) => {
    const v = parseSize(t.trim());
    if (v === null || v <= 0) err(k, "enter a size such as 512, 4k or 327k (k = 1024)");
    return v ?? 0;
  };
  const bias = (t: string, k: string) => {
    const v = integer(t);
    if (v === null || v < -1 || v > 10) err(k, "enter a whole number from -1 (neither) to 10");
    return v ?? 0;
  };
  const spec: PostmarkSpec = {
    number: count(d.number, "number", 1, "enter the number of files, at least 1"),
    size_low_bytes: size(d.sizeLow, "size_low"),
    size_high_bytes: size(d.sizeHigh, "size_high"),
    subdirectories: count(d.subdirectories, "subdirectories", 0, "enter 0 or more"),
    read_block_bytes: size(d.read, "read"),
    write_block_bytes: size(d.write, "write"),
    transactions: count(d.transactions, "transactions", 1, "enter transactions, at least 1"),
    bias_read: bias(d.biasRead, "bias_read"),
    bias_create: bias(d.biasCreate, "bias_create"),
    buffering: d.buffering,
    seed: count(d.seed, "seed", 1, "enter a whole number, 1 or more"),
    fsync: d.fsync,
  };
  if (
    !errors["pm.size_high"] &&
    !errors["pm.size_low"] &&
    spec.size_high_bytes < spec.size_low_bytes
  )
    err("size_high", "the largest size must not be below the smallest");
  return Object.keys(errors).length ? { errors } : { spec, errors };
}

export function buildVdbench(
  parameters: string,
  scale: string,
  elapsed: string,
): { spec?: VdbenchSpec; errors: Errors } {
  const errors: Errors = {};
  const s = parseScale(scale);
  if (parameters.trim() === "")
    errors["vd.parameters"] = {
      message: "paste a vdbench parameter file (fsd=, fwd=, rd= lines)",
      source: "client",
    };
  if (s === null)
    errors["vd.scale"] = {
      message: "enter a number above 0, at most 1000 (1 = as written)",
      source: "client",
    };
  const e = elapsed.trim() === "" ? null : Number(elapsed);
  if (e !== null && !(Number.isFinite(e) && e > 0))
    errors["vd.elapsed"] = { message: "enter seconds above 0, or leave empty", source: "client" };
  if (Object.keys(errors).length) return { errors };
  return { spec: { parameters, scale: s ?? 1, elapsed_s: e }, errors };
}

const VDBENCH_EXAMPLE = `fsd=fsd1,anchor=/dir,depth=1,width=4,files=16,size=64k
fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=2
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=10,interval=1
`;

/**
 * A custom file workload for a team: PostMark's structured settings or a vdbench parameter file
 * with its scale. The server runs the engine's parser on it (a refusal comes back as a 422 beside
 * the parameter text, in the engine's words).
 */
export function FileWorkloadForm({
  teamId,
  onCreated,
}: {
  teamId: string;
  onCreated: (w: WorkloadRead) => void;
}) {
  const qc = useQueryClient();
  const [kind, setKind] = useState<"postmark" | "vdbench">("postmark");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [pm, setPm] = useState<PostmarkDraft>(postmarkDraft());
  const [parameters, setParameters] = useState(VDBENCH_EXAMPLE);
  const [scale, setScale] = useState("1");
  const [elapsed, setElapsed] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: (body: WorkloadCreate) => createWorkload(body),
    onSuccess: (w) => {
      qc.invalidateQueries({ queryKey: keys.workloads.all() });
      onCreated(w);
    },
    onError: (e) => {
      const r = formErrorsFrom(e, WORKLOAD_FIELD_ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    if (name.trim() === "") {
      setErrors({ name: { message: "give the workload a name", source: "client" } });
      return;
    }
    const built =
      kind === "postmark" ? buildPostmark(pm) : buildVdbench(parameters, scale, elapsed);
    if (!built.spec) {
      setErrors(built.errors);
      return;
    }
    const spec = {
      kind,
      jobs: [],
      passes: 1,
      discard_passes: 0,
      shortened_by: null,
      postmark: kind === "postmark" ? built.spec : null,
      vdbench: kind === "vdbench" ? built.spec : null,
    } as unknown as WorkloadCreate["spec"];
    create.mutate({ name: name.trim(), description: description.trim(), team_id: teamId, spec });
  };
  const pmText = (k: keyof PostmarkDraft, key: string, label: string, hint: string) => (
    <Field label={label} name={`pm.${key}`} errors={errors} hint={hint}>
      <input
        id={`f-pm.${key}`}
        name={`pm.${key}`}
        value={pm[k] as string}
        onChange={(e) => setPm({ ...pm, [k]: e.target.value })}
      />
    </Field>
  );
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="file-workload-form">
      <h3 style={{ marginTop: 0 }}>New file workload</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input id="f-name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Description" name="description" errors={errors} className="span-2">
          <input
            id="f-description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        </Field>
      </div>
      <fieldset className="mode">
        <legend>Kind</legend>
        <label className="inline">
          <input
            type="radio"
            name="kind"
            checked={kind === "postmark"}
            onChange={() => setKind("postmark")}
            data-testid="kind-postmark"
          />{" "}
          PostMark (small files: create, read, append, delete)
        </label>
        <label className="inline">
          <input
            type="radio"
            name="kind"
            checked={kind === "vdbench"}
            onChange={() => setKind("vdbench")}
            data-testid="kind-vdbench"
          />{" "}
          vdbench file set (a parameter file)
        </label>
        {errors.kind && (
          <small className="field-error" role="alert" data-testid="field-error-kind">
            {errors.kind.message}
          </small>
        )}
      </fieldset>
      {kind === "postmark" ? (
        <div className="form-grid" data-testid="postmark-fields">
          {pmText("number", "number", "Files (set number)", "files created first")}
          {pmText(
            "sizeLow",
            "size_low",
            "Smallest file (set size)",
            "bytes, e.g. 500, 4k or 327k (k = 1024)",
          )}
          {pmText(
            "sizeHigh",
            "size_high",
            "Largest file",
            "bytes; equal to the smallest: every file that size",
          )}
          {pmText("subdirectories", "subdirectories", "Subdirectories", "0 or 1: none")}
          {pmText("transactions", "transactions", "Transactions", "read/append + create/delete")}
          {pmText("read", "read", "Read block (set read)", "bytes per read, e.g. 4k")}
          {pmText("write", "write", "Write block (set write)", "bytes per write, e.g. 4k")}
          {pmText(
            "biasRead",
            "bias_read",
            "Bias read",
            "0–10: reads in 10 (else appends); -1: neither",
          )}
          {pmText(
            "biasCreate",
            "bias_create",
            "Bias create",
            "0–10: creates in 10 (else deletes); -1: neither",
          )}
          {pmText("seed", "seed", "Random seed", "PostMark's default: 42")}
          <Field label="Buffering" name="pm.buffering" errors={errors}>
            <span className="inline">
              <input
                type="checkbox"
                id="f-pm.buffering"
                checked={pm.buffering}
                onChange={(e) => setPm({ ...pm, buffering: e.target.checked })}
              />{" "}
              stdio buffered, as PostMark
            </span>
          </Field>
          <Field label="fsync (not in PostMark)" name="pm.fsync" errors={errors}>
            <span className="inline">
              <input
                type="checkbox"
                id="f-pm.fsync"
                checked={pm.fsync}
                onChange={(e) => setPm({ ...pm, fsync: e.target.checked })}
              />{" "}
              fsync after each file is written — iowatt's option, results marked so
            </span>
          </Field>
        </div>
      ) : (
        <div className="form-grid" data-testid="vdbench-fields">
          <Field
            label="Parameter file"
            name="vd.parameters"
            errors={errors}
            className="span-all"
            hint="vdbench's syntax (fsd=, fwd=, rd=); anchor= is replaced by the run's directory on the host"
          >
            <textarea
              id="f-vd.parameters"
              className="parameter-file"
              value={parameters}
              onChange={(e) => setParameters(e.target.value)}
              spellCheck={false}
            />
          </Field>
          <Field
            label="Scale"
            name="vd.scale"
            errors={errors}
            hint="multiplies files, file sizes and elapsed; 1 = as written"
          >
            <input id="f-vd.scale" value={scale} onChange={(e) => setScale(e.target.value)} />
          </Field>
          <Field
            label="Elapsed (s, optional)"
            name="vd.elapsed"
            errors={errors}
            hint="overrides rd's elapsed; empty: as written"
          >
            <input id="f-vd.elapsed" value={elapsed} onChange={(e) => setElapsed(e.target.value)} />
          </Field>
        </div>
      )}
      <FormFooter
        error={formError}
        pending={create.isPending}
        label="Create workload"
        pendingLabel="Creating…"
        testId="submit-workload"
      />
    </form>
  );
}
