import { formatBytes } from "../../lib/format";
import { accessLabel, type HostPolicy } from "../../lib/policy";
import { LimitsNote, NoTargets } from "../Policy/TargetSelect";

/** What the host allows (its `targets list` and `meters show`, as the agent reported them). */
export function HostPolicyView({ policy }: { policy: HostPolicy | null }) {
  return (
    <div data-testid="host-policy">
      <h4>Targets the host allows</h4>
      {policy === null || policy.targets.length === 0 ? (
        <NoTargets policy={policy} />
      ) : (
        <table className="table compact" data-testid="policy-targets">
          <thead>
            <tr>
              <th>Path</th>
              <th>Kind</th>
              <th>Access</th>
              <th>Device</th>
              <th className="num">Size</th>
            </tr>
          </thead>
          <tbody>
            {policy.targets.map((t) => (
              <tr key={t.path}>
                <td className="mono">{t.path}</td>
                <td>{t.kind}</td>
                <td>
                  {accessLabel(t)}
                  {t.kind === "device" && (
                    <>
                      {" · "}
                      {t.destructive ? (
                        <span className="badge badge-destructive">destructive writes allowed</span>
                      ) : (
                        "no destructive writes"
                      )}
                    </>
                  )}
                </td>
                <td>{t.model ?? "—"}</td>
                <td className="num">{t.size_bytes != null ? formatBytes(t.size_bytes) : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <LimitsNote policy={policy} />
      <h4>Meters the host configured</h4>
      {policy === null || policy.meters.length === 0 ? (
        <p className="muted small" data-testid="no-meters">
          None: runs on this host measure no power. On the host:{" "}
          <code>iowatt-agent meters set NAME SPEC</code>
        </p>
      ) : (
        <table className="table compact" data-testid="policy-meters">
          <thead>
            <tr>
              <th>Name</th>
              <th>Driver</th>
              <th>Accuracy tier</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {policy.meters.map((m) => (
              <tr key={m.name}>
                <td className="mono">{m.name}</td>
                <td>{m.driver}</td>
                <td>{m.tier}</td>
                <td>{m.name === policy.default_meter ? "host default" : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
