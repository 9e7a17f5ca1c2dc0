import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { EnrollmentTokenCreated, EnrollmentTokenRead } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import { installLine, TOKEN_FILE } from "../../lib/installLine";
import { useCurrentTeam } from "../../lib/role";
import { agentDistQuery } from "../../queries/agentDist";
import {
  createEnrollmentToken,
  enrollmentTokensQuery,
  revokeEnrollmentToken,
} from "../../queries/agents";
import { keys } from "../../queries/keys";
import { ConfirmDialog } from "../ConfirmDialog";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../Field";
import { QueryState } from "../QueryState";
import { ScrollBox } from "../ScrollBox";
import { Command, OnceSecret } from "../Secret";

/** Lifetimes offered for an enrolment token (the server bounds ttl_s to 60 s … 30 days). */
const ENROLL_TTLS: readonly { label: string; s: number }[] = [
  { label: "1 hour", s: 3600 },
  { label: "1 day", s: 86_400 },
  { label: "7 days", s: 7 * 86_400 },
  { label: "30 days", s: 30 * 86_400 },
];

/** The enrol commands for a token: in the environment or in a file, never as an argument. */
function enrollCommands(token: string, server: string): { env: string; file: string } {
  return {
    env: `IOWATT_ENROLL_TOKEN='${token}' iowatt-agent enroll --server ${server}`,
    file: `iowatt-agent enroll --server ${server} --token-file /root/iowatt-enroll.token`,
  };
}

/** A host without the agent: the server's bundle, installed, enrolled and started in one line. */
function InstallLine({
  server,
  dist,
}: {
  server: string;
  dist?: {
    version: string | null;
    bundles: { kind: string; arch: string; version: string; glibc_floor?: string | null }[];
    install_script_url: string;
    tls: { fingerprint_sha256: string; pubkey_pin: string } | null;
    tls_ca: { sha256: string; url: string; subject: string } | null;
  };
}) {
  if (!dist) return null;
  if (!dist.version)
    return (
      <p className="muted small" data-testid="install-line-none">
        This server serves no agent bundle yet (<code>make agent-dist</code> builds them): install
        the agent from source on the host, then enrol.
      </p>
    );
  return (
    <>
      <p className="small">
        A host without the agent (no Python or compiler needed): save the token in{" "}
        <code>{TOKEN_FILE}</code> (<code>chmod 600</code>) and run this one line, which downloads
        agent {dist.version}, checks its SHA-256, installs, enrols and starts the service:
      </p>
      <Command
        text={installLine(server, dist.install_script_url, dist.tls, dist.tls_ca)}
        testId="install-line"
      />
      <GlibcFloor bundles={dist.bundles} version={dist.version} />
      {dist.tls_ca ? (
        <p className="muted small" data-testid="install-line-ca">
          The line first downloads the server's CA ({dist.tls_ca.subject}) and stops unless its
          SHA-256 is the one above; the script, the bundle and the agent then trust that CA alone.
        </p>
      ) : (
        !dist.tls && (
          <p className="muted small">
            The server's certificate is not configured here (<code>IOWATT_AGENT_TLS_CERT_FILE</code>{" "}
            or <code>IOWATT_AGENT_TLS_CA_FILE</code>), so the line trusts the host's CA store
            instead of pinning the server.
          </p>
        )
      )}
    </>
  );
}

/** The glibc the served tarballs need (their MANIFEST.json, as the build's check found it): the
 *  line refuses a host with an older one before it downloads anything. */
function GlibcFloor({
  bundles,
  version,
}: {
  bundles: { kind: string; arch: string; version: string; glibc_floor?: string | null }[];
  version: string;
}) {
  const tars = bundles.filter((b) => b.kind === "tar" && b.version === version);
  const stated = tars.filter((b) => b.glibc_floor);
  if (stated.length === 0) return null;
  const floors = [...new Set(stated.map((b) => b.glibc_floor))];
  const text =
    floors.length === 1
      ? `glibc ${floors[0]} or newer`
      : stated.map((b) => `glibc ${b.glibc_floor} or newer on ${b.arch}`).join(", ");
  return (
    <p className="muted small" data-testid="install-line-glibc">
      The agent {version} needs {text} on the host (<code>getconf GNU_LIBC_VERSION</code>); the line
      refuses an older host before it downloads anything.
    </p>
  );
}

function tokenState(t: EnrollmentTokenRead, now = Date.now()): string {
  if (t.revoked_at) return "revoked";
  if (t.expires_at && Date.parse(t.expires_at) <= now) return "expired";
  if (t.max_uses != null && t.uses >= t.max_uses) return "used up";
  return "usable";
}

const ALIASES = { ttl_s: "ttl", max_uses: "uses", team_id: "team" };

/** Admin: create (shown once), list and revoke the team's enrolment tokens. */
export function EnrollmentTokens({
  teams,
  meId,
}: {
  teams: { id: string; name: string }[];
  meId?: string;
}) {
  const qc = useQueryClient();
  const q = useQuery(enrollmentTokensQuery());
  const [teamId, setTeamId] = useState("");
  // the header's current team when the user is its admin, else their first admin team
  const current = useCurrentTeam().team;
  const chosen = teamId || teams.find((t) => t.id === current?.id)?.id || teams[0]?.id || "";
  const [ttl, setTtl] = useState(String(86_400));
  const [uses, setUses] = useState("1");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<EnrollmentTokenCreated | null>(null);
  const [revoking, setRevoking] = useState<EnrollmentTokenRead | null>(null);
  const server = window.location.origin;
  const dist = useQuery(agentDistQuery());

  const create = useMutation({
    mutationFn: createEnrollmentToken,
    onSuccess: (t) => {
      setCreated(t);
      qc.invalidateQueries({ queryKey: keys.agents.enrollmentTokens() });
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => revokeEnrollmentToken(id),
    onSuccess: () => {
      setRevoking(null);
      qc.invalidateQueries({ queryKey: keys.agents.enrollmentTokens() });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    const maxUses = Number(uses);
    if (!Number.isInteger(maxUses) || maxUses < 1) {
      setErrors({ uses: { message: "enter a whole number, 1 or more", source: "client" } });
      return;
    }
    create.mutate({
      team_id: chosen,
      ttl_s: Number(ttl),
      max_uses: maxUses,
    });
  };

  const cmds = created ? enrollCommands(created.token, server) : null;
  return (
    <section data-testid="enrollment-tokens">
      <h2>Enrolment tokens</h2>
      <p className="muted small">
        A host joins the team with a token: single-use by default, expiring, revocable. Pass it in
        the environment or a file, never as a command-line argument (other users see those in{" "}
        <code>ps</code>).
      </p>
      {created && cmds ? (
        <OnceSecret
          title="New enrolment token"
          secret={created.token}
          onDone={() => setCreated(null)}
        >
          <p className="small">On the host, as root:</p>
          <Command text={cmds.env} testId="enroll-command" />
          <p className="small">
            or save the token in a file only root can read (<code>chmod 600</code>) and run:
          </p>
          <Command text={cmds.file} testId="enroll-command-file" />
          <InstallLine server={server} dist={dist.data} />
          <p className="muted small">
            {created.expires_at
              ? `Expires ${formatTimestamp(created.expires_at)}.`
              : "Does not expire."}
          </p>
        </OnceSecret>
      ) : (
        <form className="card form" onSubmit={submit} data-testid="enrollment-form" noValidate>
          <div className="form-grid">
            {teams.length > 1 && (
              <Field label="Team" name="team" errors={errors}>
                <select id="f-team" value={chosen} onChange={(e) => setTeamId(e.target.value)}>
                  {teams.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.name}
                    </option>
                  ))}
                </select>
              </Field>
            )}
            <Field label="Expires after" name="ttl" errors={errors}>
              <select id="f-ttl" value={ttl} onChange={(e) => setTtl(e.target.value)}>
                {ENROLL_TTLS.map((o) => (
                  <option key={o.s} value={o.s}>
                    {o.label}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Max uses" name="uses" errors={errors} hint="hosts it may enrol">
              <input
                id="f-uses"
                inputMode="numeric"
                value={uses}
                onChange={(e) => setUses(e.target.value)}
              />
            </Field>
          </div>
          <FormFooter
            error={formError}
            pending={create.isPending}
            label="Create enrolment token"
            pendingLabel="Creating…"
            testId="create-enrollment-token"
          />
        </form>
      )}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No enrolment tokens.</p>}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="Enrollment tokens">
          <table className="table" data-testid="enrollment-tokens-table">
            <thead>
              <tr>
                <th>Created</th>
                <th>By</th>
                <th>Expires</th>
                <th className="num">Uses</th>
                <th>State</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((t) => {
                const state = tokenState(t);
                return (
                  <tr key={t.id} data-testid="enrollment-token-row" data-state={state}>
                    <td title={formatTimestamp(t.created_at)}>{formatRelative(t.created_at)}</td>
                    <td className="mono small">
                      {t.created_by === meId ? "you" : (t.created_by?.slice(0, 8) ?? "—")}
                    </td>
                    <td>{t.expires_at ? formatTimestamp(t.expires_at) : "never"}</td>
                    <td className="num">
                      {t.uses} / {t.max_uses ?? "∞"}
                    </td>
                    <td>{state}</td>
                    <td>
                      {state === "usable" && (
                        <button
                          type="button"
                          className="btn btn-danger btn-small"
                          data-testid="revoke-enrollment-token"
                          onClick={() => {
                            revoke.reset();
                            setRevoking(t);
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {revoking && (
        <ConfirmDialog
          title="Revoke this enrolment token?"
          confirmLabel="Revoke token"
          pending={revoke.isPending}
          error={revoke.error ? errorMessage(revoke.error) : null}
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id)}
        >
          <p>
            No host can enrol with it any more. Agents already enrolled with it keep working (revoke
            those on their own row).
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
