import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { TokenCreate, TokenCreated, TokenRead } from "../../client/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DeleteAccount } from "../../components/Deletion/DeleteAccount";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../../components/Field";
import { QueryState } from "../../components/QueryState";
import { ScrollBox } from "../../components/ScrollBox";
import { Command, OnceSecret } from "../../components/Secret";
import { clearToken } from "../../lib/auth";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import { apiTokensQuery, createApiToken, revokeApiToken } from "../../queries/auth";
import { keys } from "../../queries/keys";

/** Lifetimes offered for a personal API token (the server bounds ttl_s). */
const TOKEN_TTLS: readonly { label: string; s: number }[] = [
  { label: "7 days", s: 7 * 86_400 },
  { label: "30 days", s: 30 * 86_400 },
  { label: "90 days", s: 90 * 86_400 },
  { label: "1 year", s: 365 * 86_400 },
];

function tokenState(t: TokenRead, now = Date.now()): string {
  if (t.revoked_at) return "revoked";
  if (t.expires_at && Date.parse(t.expires_at) <= now) return "expired";
  return "active";
}

const ALIASES = { name: "name", ttl_s: "ttl", scope: "scope" };

type Scope = TokenCreate["scope"];

/** What each scope lets a token do (the server enforces it: docs/teams.md). */
export const SCOPES: readonly { value: Scope; label: string; help: string }[] = [
  { value: "read", label: "read", help: "read only: GET requests, whatever your role" },
  { value: "write", label: "write", help: "everything your role in each team allows" },
  {
    value: "upload",
    label: "upload",
    help: "only adds results (imports and uploads, for CI pipelines); cannot read",
  },
];

/** Settings → API tokens: the user's personal tokens for scripts and CI. */
export function Tokens() {
  const qc = useQueryClient();
  const [showInactive, setShowInactive] = useState(false);
  const q = useQuery(apiTokensQuery(showInactive));
  const [name, setName] = useState("");
  const [ttl, setTtl] = useState(String(90 * 86_400));
  const [scope, setScope] = useState<Scope>("write");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<TokenCreated | null>(null);
  const [revoking, setRevoking] = useState<TokenRead | null>(null);

  const create = useMutation({
    mutationFn: createApiToken,
    onSuccess: (t) => {
      setCreated(t);
      setName("");
      qc.invalidateQueries({ queryKey: keys.auth.tokens() });
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const revoke = useMutation({
    mutationFn: (t: TokenRead) => revokeApiToken(t.id),
    onSuccess: (_, t) => {
      setRevoking(null);
      if (t.current) {
        // this browser's own session: it is signed out (the login page follows)
        clearToken();
        qc.clear();
        return;
      }
      qc.invalidateQueries({ queryKey: keys.auth.tokens() });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    if (name.trim() === "") {
      setErrors({ name: { message: "name the token (what uses it)", source: "client" } });
      return;
    }
    create.mutate({ name: name.trim(), scope, ttl_s: Number(ttl) });
  };
  const origin = window.location.origin;
  return (
    <section>
      <h1>API tokens</h1>
      <p className="muted small">
        Personal tokens let scripts and CI call the REST API as you (
        <code>Authorization: Bearer …</code>). Revoke a token as soon as it is no longer needed or
        may have leaked.
      </p>
      {created ? (
        <OnceSecret
          title={`New API token “${created.name}” (${created.scope})`}
          secret={created.token}
          onDone={() => setCreated(null)}
        >
          {created.scope === "upload" ? (
            <p className="small">
              An upload token only adds results (imports from CI): every other request is refused.
            </p>
          ) : (
            <>
              <p className="small">For example:</p>
              <Command
                text={`curl -H "Authorization: Bearer $IOWATT_TOKEN" ${origin}/api/v1/runs`}
              />
            </>
          )}
          <p className="muted small">
            {created.expires_at
              ? `Expires ${formatTimestamp(created.expires_at)}.`
              : "Does not expire."}
          </p>
        </OnceSecret>
      ) : (
        <form className="card form" onSubmit={submit} data-testid="token-form" noValidate>
          <div className="form-grid">
            <Field label="Name" name="name" errors={errors}>
              <input
                id="f-name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder="nightly CI"
              />
            </Field>
            <Field
              label="Scope"
              name="scope"
              errors={errors}
              hint={SCOPES.find((o) => o.value === scope)?.help}
            >
              <select
                id="f-scope"
                value={scope}
                onChange={(e) => setScope(e.target.value as Scope)}
              >
                {SCOPES.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Expires after" name="ttl" errors={errors}>
              <select id="f-ttl" value={ttl} onChange={(e) => setTtl(e.target.value)}>
                {TOKEN_TTLS.map((o) => (
                  <option key={o.s} value={o.s}>
                    {o.label}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <FormFooter
            error={formError}
            pending={create.isPending}
            label="Create token"
            pendingLabel="Creating…"
            testId="create-token"
          />
        </form>
      )}
      <label className="inline small">
        <input
          type="checkbox"
          checked={showInactive}
          onChange={(e) => setShowInactive(e.target.checked)}
          data-testid="show-inactive"
        />{" "}
        Show revoked and expired tokens
      </label>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No tokens.</p>}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="API tokens">
          <table className="table" data-testid="tokens-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>Scope</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Last used</th>
                <th>State</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((t) => {
                const state = tokenState(t);
                return (
                  <tr key={t.id} data-testid="token-row" data-state={state}>
                    <td>
                      {t.name}{" "}
                      {t.current && (
                        <span
                          className="badge badge-current"
                          data-testid="token-current"
                          title="the session this page is using"
                        >
                          this browser
                        </span>
                      )}
                    </td>
                    <td>{t.kind}</td>
                    <td title={SCOPES.find((o) => o.value === t.scope)?.help}>
                      <span className={`badge badge-scope-${t.scope}`}>{t.scope}</span>
                    </td>
                    <td title={formatTimestamp(t.created_at)}>{formatRelative(t.created_at)}</td>
                    <td>{t.expires_at ? formatTimestamp(t.expires_at) : "never"}</td>
                    <td title={formatTimestamp(t.last_used_at)}>
                      {formatRelative(t.last_used_at)}
                    </td>
                    <td>{state}</td>
                    <td>
                      {!t.revoked_at && (
                        <button
                          type="button"
                          className="btn btn-danger btn-small"
                          data-testid="revoke-token"
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
          title={`Revoke “${revoking.name}”?`}
          confirmLabel={revoking.current ? "Revoke and sign out" : "Revoke token"}
          pending={revoke.isPending}
          error={revoke.error ? errorMessage(revoke.error) : null}
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking)}
        >
          {revoking.current && (
            <p className="alert alert-warn" data-testid="revoke-signs-out">
              This is this browser's session: revoking it signs you out here.
            </p>
          )}
          <p>Requests with this token are refused from now on. This cannot be undone.</p>
        </ConfirmDialog>
      )}
      <DeleteAccount />
    </section>
  );
}
