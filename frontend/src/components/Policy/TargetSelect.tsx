import { ADD_TARGET_COMMAND, type HostPolicy, limitsText, targetLabel } from "../../lib/policy";

/**
 * The targets the host allows (`iowatt-agent targets list` on the host), and nothing else: a
 * path the host did not list cannot be typed in. With none, says why and what to run on the host.
 */
export function TargetSelect({
  id,
  label,
  policy,
  value,
  onChange,
  directoriesOnly = false,
  devicesOnly = false,
  testId = "target-select",
  taken,
}: {
  id: string;
  label?: string;
  /** several selects on one page (a multi-target run's other targets) */
  testId?: string;
  /** paths chosen elsewhere in the same run: offered, marked "chosen" */
  taken?: ReadonlySet<string>;
  policy: HostPolicy | null;
  value: string;
  onChange: (path: string) => void;
  /** a file workload (PostMark, vdbench): only directory targets can be chosen */
  directoriesOnly?: boolean;
  /** a SNIA PTS run: only raw device targets can be chosen */
  devicesOnly?: boolean;
}) {
  const targets = policy?.targets ?? [];
  if (targets.length === 0) return <NoTargets policy={policy} />;
  if (directoriesOnly && !targets.some((t) => t.kind === "directory"))
    return <NoDirectoryTargets />;
  return (
    <select
      id={id}
      name="target"
      aria-label={label}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      data-testid={testId}
    >
      {targets.map((t) => (
        <option
          key={t.path}
          value={t.path}
          data-kind={t.kind}
          data-destructive={t.destructive ? "true" : "false"}
          disabled={
            (directoriesOnly && t.kind !== "directory") || (devicesOnly && t.kind !== "device")
          }
        >
          {targetLabel(t)}
          {directoriesOnly && t.kind !== "directory" ? " — not a directory" : ""}
          {devicesOnly && t.kind !== "device" ? " — not a raw device" : ""}
          {taken?.has(t.path) && t.path !== value ? " — chosen above" : ""}
        </option>
      ))}
    </select>
  );
}

/** Why no target can be chosen, and the command that lists one on the host. */
export function NoTargets({ policy }: { policy: HostPolicy | null }) {
  return (
    <div className="policy-empty small" data-testid="no-targets">
      {policy === null
        ? "This agent has not reported a host policy (it predates host policies): upgrade it. "
        : "The host allows no target yet. "}
      On the host, as root, list a directory (or <code>--file PATH</code>,{" "}
      <code>--device /dev/disk/by-id/…</code>) that runs may use:
      <pre className="command">{ADD_TARGET_COMMAND}</pre>
    </div>
  );
}

/** Why a file workload cannot run on any target of this host, and what to list on it. */
export function NoDirectoryTargets() {
  return (
    <div className="policy-empty small" data-testid="no-directory-targets">
      File workloads lay out a file set in a directory: this host lists no directory target. On the
      host, as root: <pre className="command">{ADD_TARGET_COMMAND}</pre>
    </div>
  );
}

/** The note beside the picker when a file workload is chosen. */
export function DirectoryNote() {
  return (
    <small className="muted" data-testid="directory-note">
      PostMark and vdbench file sets create files and directories: they need a directory target
      (files and devices are not offered).
    </small>
  );
}

/** The host's limits (threads, iodepth, block size, bytes written, runtime), if any. */
export function LimitsNote({ policy }: { policy: HostPolicy | null }) {
  const text = limitsText(policy?.limits);
  return text ? (
    <small className="muted" data-testid="host-limits">
      host limits: {text}
    </small>
  ) : null;
}
