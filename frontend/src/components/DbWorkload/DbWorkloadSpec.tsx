import { formatBytes, formatCount, formatSeconds } from "../../lib/format";
import {
  type DbSpecLike,
  dbmsLabel,
  dbmsRefusal,
  formatSf,
  minimumStreams,
  TPCH_LABEL,
} from "./dbWorkload";
import "./dbWorkload.css";

/** "TPC-H-derived, not audited" wherever a TPC-H workload or result shows. */
export function TpchLabel() {
  return (
    <span className="db-label" data-testid="tpch-label">
      {TPCH_LABEL}
    </span>
  );
}

/** A TPC-H or heap/B-tree workload's settings as a table (workload page, run page, New run). */
export function DbWorkloadParameters({ spec }: { spec: DbSpecLike }) {
  if (spec.kind === "tpch" && spec.tpch) {
    const t = spec.tpch;
    const rows: [string, string, string][] = [
      ["DBMS", dbmsLabel(t.dbms), "a private instance the agent starts in the target directory"],
      [
        "Scale factor",
        formatSf(t.scale_factor),
        "SF 1 ≈ 1 GB of raw data; a run's scale multiplies it",
      ],
      [
        "Streams",
        t.streams != null
          ? String(t.streams)
          : `${minimumStreams(t.scale_factor)} (the spec's minimum)`,
        "query streams of the throughput test",
      ],
      [
        "Query timeout",
        t.query_timeout_s != null ? formatSeconds(t.query_timeout_s) : "—",
        "a query past it is cancelled and marked; the metrics are then withheld",
      ],
      [
        "Buffer pool",
        t.buffer_pool_bytes != null ? formatBytes(t.buffer_pool_bytes) : "—",
        "small on purpose, so the device serves the reads",
      ],
    ];
    return (
      <div data-testid="tpch-settings">
        <p className="small" style={{ marginTop: 0 }}>
          <TpchLabel /> The TPC-H power and throughput tests on a private {dbmsLabel(t.dbms)} whose
          data lives on the target; computed with the spec's formulas, not a TPC-H result.
        </p>
        <SettingsTable rows={rows} />
      </div>
    );
  }
  if (spec.kind === "heap_btree" && spec.heap_btree) {
    const h = spec.heap_btree;
    const fractions = h.cache_fractions ?? [];
    const rows: [string, string, string][] = [
      ["Records", formatCount(h.records), "N keys inserted; a run's scale multiplies it"],
      ["Point queries", formatCount(h.queries), "per cache fraction and structure"],
      [
        "Cache fractions",
        fractions.length > 0 ? fractions.map((f) => `${Math.round(f * 100)} %`).join(", ") : "—",
        "the buffer cache as a share of the data's pages (the rows of the P3608 report's Table 3)",
      ],
      ["Structure", h.structure === "both" || !h.structure ? "heap and B-tree" : h.structure, ""],
      ["Random seed", h.randseed != null ? String(h.randseed) : "—", ""],
    ];
    return (
      <div data-testid="heap-btree-settings">
        <SettingsTable rows={rows} />
      </div>
    );
  }
  if (spec.kind === "innodb_flush" && spec.innodb_flush) {
    const p = spec.innodb_flush;
    const settings = (p.settings ?? [])
      .map((s) => `${s.innodb_flush_log_at_trx_commit}/${s.sync_binlog}`)
      .join(", ");
    const rows: [string, string, string][] = [
      ["DBMS", "MariaDB", "a private instance in the target directory, binary log on"],
      ["Settings", settings || "—", "innodb_flush_log_at_trx_commit / sync_binlog, in this order"],
      ["Load", "sysbench oltp_write_only", "index and non-index updates, a delete and an insert"],
      ["Tables", `${formatCount(p.tables)} × ${formatCount(p.table_size)} rows`, ""],
      ["Threads", formatCount(p.threads), "sysbench's client threads"],
      ["Seconds per setting", formatCount(p.seconds), "measured; a run's scale multiplies it"],
      ["Warm-up", `${formatCount(p.warmup_s)} s`, "before each setting, not measured"],
      ["Buffer pool", formatBytes(p.buffer_pool_bytes), "InnoDB's cache: the tables fit"],
    ];
    return (
      <div data-testid="innodb-flush-settings">
        <SettingsTable rows={rows} />
      </div>
    );
  }
  return null;
}

function SettingsTable({ rows }: { rows: [string, string, string][] }) {
  return (
    <table className="table compact">
      <thead>
        <tr>
          <th>Setting</th>
          <th>Value</th>
          <th>Meaning</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([k, v, m]) => (
          <tr key={k} data-setting={k}>
            <td>{k}</td>
            <td>{v}</td>
            <td className="small muted">{m}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Beside the target picker: a TPC-H workload starts a DBMS on the host, which the host must allow
 * (libs/policy `allowed_dbms`). Without consent the run will be refused; the note names the host
 * command that allows it.
 */
export function DbmsConsentNote({
  policy,
  spec,
}: {
  /** the host's reported policy (PolicyRead); `allowed_dbms` read when present */
  policy: object | null | undefined;
  spec: DbSpecLike | null | undefined;
}) {
  const dbms =
    spec?.kind === "tpch" ? spec.tpch?.dbms : spec?.kind === "innodb_flush" ? "mariadb" : null;
  if (!dbms) return null;
  const refusal = dbmsRefusal(policy, dbms);
  if (!refusal)
    return (
      <p className="small muted" data-testid="dbms-consent" data-allowed="true">
        This host allows iowatt to start {dbmsLabel(dbms)} (a private instance in the target
        directory, removed afterwards).
      </p>
    );
  return (
    <p className="small db-consent" data-testid="dbms-consent" data-allowed="false">
      {refusal.reason}. On the host: <code>{refusal.command}</code>
    </p>
  );
}
