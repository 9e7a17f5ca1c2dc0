// Import other tools' results (docs/imports.md): drop files or paste text, preview what
// the server parsed (a dry run: nothing stored) with its units, fix the labels, then store. Each
// stored run is labelled "imported from <tool>" and carries the `imported` validity flag.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type DragEvent, useState } from "react";
import { Link } from "react-router-dom";
import { PublishedForm } from "../components/Import/PublishedForm";
import { errorMessage } from "../lib/errors";
import { formatBytes, formatIops, formatNs, formatThroughput, MISSING } from "../lib/format";
import { atLeast, useCurrentTeam } from "../lib/role";
import {
  formatOptions,
  type ImportedDirection,
  type ImportedJob,
  type ImportLabels,
  type ImportResult,
  importFile,
  importFormatsQuery,
  importText,
} from "../queries/imports";
import { keys } from "../queries/keys";
import "./Import.css";

interface Item {
  key: string;
  file?: File;
  text?: string;
  fileName: string;
  labels: { host: string; device: string; name: string; format: string };
  preview?: ImportResult;
  stored?: ImportResult;
  error?: string;
  busy?: boolean;
}

const BLANK = { host: "", device: "", name: "", format: "" };
let counter = 0;

function p99(d: ImportedDirection | null | undefined): number | null {
  const pct = d?.clat?.percentiles_ns ?? d?.lat?.percentiles_ns ?? {};
  return pct["99"] ?? null;
}

function meanLat(d: ImportedDirection | null | undefined): number | null {
  return d?.lat?.mean_ns ?? d?.clat?.mean_ns ?? null;
}

function setting(j: ImportedJob, key: string): string {
  const v = j.settings[key];
  if (v === undefined || v === null || v === "") return MISSING;
  if (key === "bs" && typeof v === "number") return formatBytes(v);
  return String(v);
}

function DirCells({ d }: { d: ImportedDirection | null | undefined }) {
  if (!d)
    return (
      <>
        <td className="num muted">{MISSING}</td>
        <td className="num muted">{MISSING}</td>
        <td className="num muted">{MISSING}</td>
        <td className="num muted">{MISSING}</td>
      </>
    );
  return (
    <>
      <td className="num">{formatThroughput(d.bw_bytes)}</td>
      <td className="num">{formatIops(d.iops)}</td>
      <td className="num">{formatNs(meanLat(d))}</td>
      <td className="num">{formatNs(p99(d))}</td>
    </>
  );
}

function Preview({ result }: { result: ImportResult }) {
  return (
    <div className="import-preview" data-testid="import-preview">
      <p className="small">
        <strong data-testid="import-format">{result.format}</strong> · {result.tool}
        {result.version ? ` ${result.version}` : ""} · {formatBytes(result.size_bytes)} · SHA-256{" "}
        <code title={result.sha256}>{result.sha256.slice(0, 12)}…</code>
      </p>
      {result.warnings.map((w) => (
        <p key={w} className="alert alert-warn small">
          {w}
        </p>
      ))}
      {result.runs.map((run, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a preview's runs never reorder; names may repeat
        <div key={`${run.name}-${i}`} className="import-run" data-testid="import-run">
          <h3>
            {run.name}{" "}
            <span className="muted small">
              on {run.host} · {run.device} · {run.jobs.length} job{run.jobs.length === 1 ? "" : "s"}
            </span>
            {run.run_id && (
              <>
                {" "}
                <Link to={`/runs/${run.run_id}`} data-testid="import-run-link">
                  open the run
                </Link>
              </>
            )}
          </h3>
          <div className="import-table-wrap">
            <table className="table import-jobs" data-testid="import-jobs">
              <thead>
                <tr>
                  <th rowSpan={2}>Job</th>
                  <th rowSpan={2}>rw</th>
                  <th rowSpan={2}>Block size</th>
                  <th rowSpan={2}>Depth</th>
                  <th colSpan={4}>Read</th>
                  <th colSpan={4}>Write</th>
                </tr>
                <tr>
                  <th title="10^6 bytes/s">MB/s</th>
                  <th>IOPS</th>
                  <th title="mean total latency (completion when the tool gives no total)">
                    mean lat
                  </th>
                  <th title="99th percentile of completion latency">p99</th>
                  <th title="10^6 bytes/s">MB/s</th>
                  <th>IOPS</th>
                  <th>mean lat</th>
                  <th>p99</th>
                </tr>
              </thead>
              <tbody>
                {run.jobs.slice(0, 200).map((j, k) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a preview's jobs never reorder; names may repeat
                  <tr key={`${j.name}-${k}`} data-testid="import-job">
                    <td>{j.name}</td>
                    <td>{setting(j, "rw")}</td>
                    <td className="num">{setting(j, "bs")}</td>
                    <td className="num">{setting(j, "iodepth")}</td>
                    <DirCells d={j.read} />
                    <DirCells d={j.write} />
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {run.jobs.length > 200 && (
            <p className="muted small">and {run.jobs.length - 200} more jobs (all are stored)</p>
          )}
          {run.absent.length > 0 && (
            <details className="small" data-testid="import-absent">
              <summary>Not in this format ({run.absent.length})</summary>
              <ul>
                {run.absent.map((a) => (
                  <li key={a}>{a}</li>
                ))}
              </ul>
            </details>
          )}
          {run.notes.length > 0 && (
            <details className="small">
              <summary>Notes ({run.notes.length})</summary>
              <ul>
                {run.notes.slice(0, 50).map((n) => (
                  <li key={n}>{n}</li>
                ))}
              </ul>
            </details>
          )}
        </div>
      ))}
    </div>
  );
}

export function Import() {
  const { team } = useCurrentTeam();
  const qc = useQueryClient();
  // the format hint's list is the server's registry (one list for the page and the CLI)
  const formats = useQuery(importFormatsQuery());
  const [items, setItems] = useState<Item[]>([]);
  const [paste, setPaste] = useState("");
  const [pasteName, setPasteName] = useState("pasted.txt");
  const [dragging, setDragging] = useState(false);
  const mayImport = atLeast(team?.role, "member");

  const update = (key: string, patch: Partial<Item>) =>
    setItems((xs) => xs.map((x) => (x.key === key ? { ...x, ...patch } : x)));

  const send = async (item: Item, dryRun: boolean): Promise<ImportResult> => {
    if (!team) throw new Error("choose a team first");
    const l = item.labels;
    const labels: ImportLabels = {
      teamId: team.id,
      host: l.host || undefined,
      device: l.device || undefined,
      name: l.name || undefined,
      format: l.format || undefined,
    };
    return item.file
      ? importFile(item.file, labels, dryRun)
      : importText(item.text ?? "", item.fileName, labels, dryRun);
  };

  const preview = async (item: Item) => {
    update(item.key, { busy: true, error: undefined });
    try {
      const r = await send(item, true);
      const first = r.runs[0];
      update(item.key, {
        busy: false,
        preview: r,
        labels: {
          ...item.labels,
          host: item.labels.host || first?.host || "",
          device: item.labels.device || first?.device || "",
          format: item.labels.format || r.format.replace("fio-json+", "fio-json"),
        },
      });
    } catch (e) {
      update(item.key, { busy: false, error: errorMessage(e), preview: undefined });
    }
  };

  const add = (news: Item[]) => {
    setItems((xs) => [...xs, ...news]);
    for (const n of news) void preview(n);
  };

  const addFiles = (files: FileList | File[]) =>
    add(
      Array.from(files).map((f) => ({
        key: `f${++counter}`,
        file: f,
        fileName: f.name,
        labels: { ...BLANK },
      })),
    );

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (e.dataTransfer.files.length) addFiles(e.dataTransfer.files);
  };

  const store = async (item: Item) => {
    update(item.key, { busy: true, error: undefined });
    try {
      const r = await send(item, false);
      update(item.key, { busy: false, stored: r });
      void qc.invalidateQueries({ queryKey: keys.runs.lists() });
    } catch (e) {
      update(item.key, { busy: false, error: errorMessage(e) });
    }
  };

  const storeAll = async () => {
    for (const it of items) if (it.preview && !it.stored) await store(it);
  };

  const ready = items.filter((i) => i.preview && !i.stored);

  return (
    <section data-testid="import-page">
      <div className="page-head">
        <h1>Import results</h1>
        {ready.length > 0 && mayImport && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={storeAll}
              data-testid="import-store-all"
            >
              Store {ready.length} file{ready.length === 1 ? "" : "s"}
            </button>
          </div>
        )}
      </div>
      <p className="muted small">
        Bring results from fio (JSON, json+, terse, normal output), CrystalDiskMark, KDiskMark,
        DiskSpd, vdbench, elbencho, sysbench, PostMark, iozone and Bonnie++. The server reads each
        file as the tool wrote it and shows what it found before anything is stored; stored runs are
        labelled “imported from &lt;tool&gt; &lt;version&gt;”, settings the file does not state read
        “—”, and they compare with measured runs. Units: MB/s = 10<sup>6</sup> bytes/s, latencies in
        ns/µs/ms as shown.
      </p>
      {!mayImport && (
        <p className="alert alert-info" data-testid="import-viewer">
          Importing needs the member role in {team?.name ?? "the team"}.
        </p>
      )}
      {mayImport && (
        <div className="import-inputs">
          <label
            className={`import-drop${dragging ? " dragging" : ""}`}
            data-testid="import-drop"
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={onDrop}
          >
            <strong>Drop files here</strong>
            <span className="muted small">or choose them</span>
            <input
              type="file"
              multiple
              data-testid="import-file-input"
              onChange={(e) => {
                if (e.target.files) addFiles(e.target.files);
                e.target.value = "";
              }}
            />
          </label>
          <div className="import-paste">
            <label className="field">
              <span>Or paste a tool's output</span>
              <textarea
                rows={6}
                value={paste}
                onChange={(e) => setPaste(e.target.value)}
                placeholder="fio's output, a CrystalDiskMark text export…"
                data-testid="import-paste"
              />
            </label>
            <div className="import-paste-row">
              <label className="field">
                <span>Name</span>
                <input
                  value={pasteName}
                  onChange={(e) => setPasteName(e.target.value)}
                  data-testid="import-paste-name"
                />
              </label>
              <button
                type="button"
                className="btn"
                disabled={!paste.trim()}
                data-testid="import-paste-add"
                onClick={() => {
                  add([
                    {
                      key: `t${++counter}`,
                      text: paste,
                      fileName: pasteName,
                      labels: { ...BLANK },
                    },
                  ]);
                  setPaste("");
                }}
              >
                Preview pasted text
              </button>
            </div>
          </div>
        </div>
      )}
      {mayImport && team && (
        <PublishedForm
          teamId={team.id}
          onStored={() => void qc.invalidateQueries({ queryKey: keys.runs.lists() })}
        />
      )}
      {items.map((item) => (
        <div
          key={item.key}
          className="card import-item"
          data-testid="import-item"
          data-state={
            item.stored ? "stored" : item.error ? "error" : item.preview ? "preview" : "reading"
          }
        >
          <div className="import-item-head">
            <h2>{item.fileName}</h2>
            <button
              type="button"
              className="btn btn-ghost"
              onClick={() => setItems((xs) => xs.filter((x) => x.key !== item.key))}
            >
              Remove
            </button>
          </div>
          {!item.stored && (
            <div className="form-grid import-labels">
              <label className="field">
                <span>Host</span>
                <input
                  value={item.labels.host}
                  placeholder="the machine that ran it"
                  onChange={(e) =>
                    update(item.key, { labels: { ...item.labels, host: e.target.value } })
                  }
                  data-testid="import-host"
                />
              </label>
              <label className="field">
                <span>Device</span>
                <input
                  value={item.labels.device}
                  placeholder="the device's model"
                  onChange={(e) =>
                    update(item.key, { labels: { ...item.labels, device: e.target.value } })
                  }
                  data-testid="import-device"
                />
              </label>
              <label className="field">
                <span>Run name</span>
                <input
                  value={item.labels.name}
                  placeholder={item.preview?.runs[0]?.name ?? "from the file"}
                  onChange={(e) =>
                    update(item.key, { labels: { ...item.labels, name: e.target.value } })
                  }
                  data-testid="import-name"
                />
              </label>
              <label className="field">
                <span>Format</span>
                <select
                  value={item.labels.format}
                  onChange={(e) =>
                    update(item.key, { labels: { ...item.labels, format: e.target.value } })
                  }
                  data-testid="import-format-select"
                >
                  {formatOptions(formats.data).map((f) => (
                    <option key={f.value} value={f.value} title={f.title}>
                      {f.label}
                    </option>
                  ))}
                </select>
              </label>
              <div className="import-item-actions">
                <button
                  type="button"
                  className="btn"
                  disabled={item.busy}
                  onClick={() => preview(item)}
                  data-testid="import-preview-again"
                >
                  Preview again
                </button>
                <button
                  type="button"
                  className="btn btn-primary"
                  disabled={item.busy || !item.preview}
                  onClick={() => store(item)}
                  data-testid="import-store"
                >
                  Store
                </button>
              </div>
            </div>
          )}
          {item.busy && <p className="muted">Reading…</p>}
          {item.error && (
            <div className="alert alert-error" role="alert" data-testid="import-error">
              {item.error}
            </div>
          )}
          {item.stored && (
            <p className="alert alert-info" data-testid="import-stored">
              {item.stored.duplicate
                ? "Imported before: nothing added. "
                : `Stored ${item.stored.runs.length} run${item.stored.runs.length === 1 ? "" : "s"}, imported from ${item.stored.tool}${item.stored.version ? ` ${item.stored.version}` : ""}. `}
              {item.stored.runs
                .filter((r) => r.run_id)
                .map((r) => (
                  <Link key={r.run_id} to={`/runs/${r.run_id}`} data-testid="import-stored-link">
                    {r.name}
                  </Link>
                ))}
            </p>
          )}
          {!item.stored && item.preview && <Preview result={item.preview} />}
        </div>
      ))}
    </section>
  );
}
