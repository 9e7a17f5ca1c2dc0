#!/usr/bin/env bash
# `make up`: the whole platform on this machine — private PostgreSQL and Redis under the state
# directory (.iowatt/ or IOWATT_STATE_DIR), migrations, API + UI on 127.0.0.1:8000, a Celery worker
# and beat, one local agent with its host policy, a first benchmark.
# Running it again is harmless; `make down` stops what it started.
#
# Secrets (database and Redis passwords, the secret key, the admin token and password) live only
# in 0600 files of the state directory and on the terminal, never in a log or on a command line.
set -euo pipefail
umask 077
source "$(dirname "$0")/lib.sh"
mkdir -p "$STATE" "$RUN" "$LOGS" "$STATE/redis"
chmod 711 "$STATE"  # the postgres user must reach pg/ and pg-sock/ (both 0700, its own)
chmod 700 "$RUN" "$LOGS" "$STATE/redis"
for f in "$LOGS"/*.log; do [ -e "$f" ] && chmod 600 "$f"; done
ID=$(instance_id)
PUBLIC_URL=${IOWATT_PUBLIC_URL:-http://127.0.0.1:$API_PORT}
new_secret "$STATE/db-password"
new_secret "$STATE/redis-password"
new_secret "$STATE/secret-key"

say "PostgreSQL on 127.0.0.1:$PG_PORT (data in $PG_DATA)"
pg_init
pg_start
pg_app_role "$STATE/db-password"

say "Redis on 127.0.0.1:$REDIS_PORT (password required)"
redis_conf
if alive redis && [ -z "$(redis_cli config get requirepass 2>/dev/null | sed -n 2p)" ]; then
  stop redis 30  # started by an older make up without a password: restart it with one
fi
if ! alive redis; then
  if redis_cli ping >/dev/null 2>&1 || (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null; then
    die "port $REDIS_PORT is taken by another process (another instance?): set IOWATT_REDIS_PORT"
  fi
  start redis redis-server "$STATE/redis.conf"
  for _ in $(seq 50); do [ "$(redis_cli ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
fi
[ "$(redis_cli ping 2>/dev/null)" = PONG ] || die "Redis did not answer; see $LOGS/redis.log"

{
  echo "IOWATT_ENV=dev"
  echo "IOWATT_INSTANCE_ID=$ID"
  echo "IOWATT_DATABASE_URL=postgresql+psycopg://iowatt:$(cat "$STATE/db-password")@127.0.0.1:$PG_PORT/iowatt"
  echo "IOWATT_REDIS_URL=redis://:$(cat "$STATE/redis-password")@127.0.0.1:$REDIS_PORT/0"
  echo "IOWATT_SECRET_KEY=$(cat "$STATE/secret-key")"
  # the address links (invitations, share links) are built on: this instance's port unless given
  echo "IOWATT_PUBLIC_URL=$PUBLIC_URL"
} | secret_file "$STATE/env"
set -a; source "$STATE/env"; set +a
export IOWATT_STATE_DIR=$STATE

say "Migrations"
# a failed migration stops make up here, with its reason (the database stays as it was: every step
# of an upgrade runs in one transaction); so does a database a newer release upgraded
if ! migrated=$(cd "$ROOT" && "$VENV/bin/iowatt-server" migrate 2>&1); then
  echo "$migrated" | tail -20 >&2
  die "the database migrations failed (above): nothing else was started; fix the cause and run make up again"
fi
echo "    $migrated"

say "Admin user"
first_time=0
[ -f "$STATE/admin-credentials" ] || first_time=1
# bootstrap prints the password and the token: to this terminal only (no tee, no log).
login=$(cd "$ROOT" && "$VENV/bin/iowatt-server" bootstrap --credentials-file "$STATE/admin-credentials" \
    --token-file "$STATE/admin-token")
chmod 600 "$STATE/admin-token" "$STATE/admin-credentials" 2>/dev/null || true
if [ "$first_time" = 1 ]; then
  echo "$login" | grep '^admin login' | sed 's/^/    /'
  echo "    (the password is shown this once; it is kept only in $STATE/admin-credentials, mode 0600)"
else
  echo "    admin login: $(grep '^email=' "$STATE/admin-credentials" 2>/dev/null | cut -d= -f2-)  (password in $STATE/admin-credentials, 0600)"
fi
echo "$login" | grep '^admin token' | sed 's/^/    /' || true

# The agent for other hosts (ADR 0036), in the background at the lowest CPU and I/O priority
# (scripts/agent-dist-background.sh): the bundle frozen in the Debian 11 build root (glibc 2.28,
# `make agent-dist`'s), preceded when dist/agent has none by the host-frozen one, which installs only
# on hosts with this host's glibc (the UI and install.sh say so). The first time ~20 CPU-minutes
# (the build root, cached in ~/.cache/iowatt-agent-dist), then ~1, or none when this tree was built
# before. The server lists dist/agent per request and each file is renamed into it when whole, so
# it serves each bundle as soon as it is there. A failed build leaves make up working (its log says why).
# A process group of its own with a pid file, as the services: `make down` stops it (and every
# compiler, PyInstaller and mmdebstrap under it), leaving no half-written file in dist/agent.
say "Agent bundles for other hosts: in the background"
start agent-dist nice -n 19 ionice -c 3 bash "$ROOT/scripts/agent-dist-background.sh"

say "API + UI, Celery worker and beat"
if ! alive api && curl -s -o /dev/null "http://127.0.0.1:$API_PORT/" 2>/dev/null; then
  die "port $API_PORT is taken by another process (another instance?): set IOWATT_API_PORT"
fi
# backend.serve: IOWATT_API_WORKERS uvicorn processes (default: the CPUs, at most 3) on one port;
# each keeps its Prometheus metrics in a file of $RUN/metrics, summed at a scrape (docs/adr/0016)
start api env PROMETHEUS_MULTIPROC_DIR="$RUN/metrics" "$VENV/bin/python" -m backend.serve \
    --host 127.0.0.1 --port "$API_PORT"
start worker "$VENV/bin/celery" --workdir "$ROOT" -A worker.app worker --concurrency 2 --loglevel INFO
start beat "$VENV/bin/celery" --workdir "$ROOT" -A worker.app beat --loglevel INFO \
    --schedule "$STATE/celerybeat-schedule"
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$API_PORT/api/v1/health" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$API_PORT/api/v1/health" >/dev/null \
    || { tail -20 "$LOGS/api.log" >&2; die "the API did not come up; see $LOGS/api.log"; }

say "Local agent and its host policy"
AGENT_STATE=$STATE/agent
# The agent (and the meters and engine it runs) never sees the server's secrets.
agent_cmd() { env -u IOWATT_DATABASE_URL -u IOWATT_REDIS_URL -u IOWATT_SECRET_KEY "$VENV/bin/iowatt-agent" "$@"; }
DISK_DIR=$STATE/bench-disk
RAM_DIR=/dev/shm/iowatt-$ID
private_dir "$DISK_DIR"
private_dir "$RAM_DIR"
if [ ! -f "$AGENT_STATE/agent.json" ]; then
  # The enrollment token reaches the agent through its environment, never its command line (ps).
  token=$(cd "$ROOT" && "$VENV/bin/iowatt-server" enrollment-token --ttl-s 600)
  IOWATT_ENROLL_TOKEN=$token agent_cmd enroll --server "http://127.0.0.1:$API_PORT" \
      --name "local-$(hostname -s)" --replace --state-dir "$AGENT_STATE"
fi
# ADR 0009: the agent runs only inside targets its host allows: the demo's two directories. This
# agent is no systemd service: its drop-in goes to its own state dir, never /etc/systemd (where it
# would change a real iowatt-agent service on this host).
export IOWATT_AGENT_SYSTEMD_DROPIN_DIR=$AGENT_STATE/systemd-dropin
for target in "$DISK_DIR" "$RAM_DIR"; do
  if ! agent_cmd targets list --json --state-dir "$AGENT_STATE" 2>/dev/null | grep -qF -- "\"$target\""; then
    added=$(agent_cmd targets add "$target" --state-dir "$AGENT_STATE")
    echo "$added" | grep '^allowed' | sed 's/^/    /' || true
  fi
done
# --drain-timeout: down.sh waits 70 s longer than this before it kills the agent
start agent env -u IOWATT_DATABASE_URL -u IOWATT_REDIS_URL -u IOWATT_SECRET_KEY "$VENV/bin/iowatt-agent" run --state-dir "$AGENT_STATE" --engine "$ROOT/agent/engine/build/iowatt-engine" --drain-timeout 600

say "First benchmark: the machine's disk vs RAM (/dev/shm)"
"$VENV/bin/python" "$ROOT/scripts/first_benchmark.py" --api "http://127.0.0.1:$API_PORT" \
    --token-file "$STATE/admin-token" --disk-dir "$DISK_DIR" --ram-dir "$RAM_DIR"

echo
echo "iowatt is up:  UI http://127.0.0.1:$API_PORT/   API http://127.0.0.1:$API_PORT/api/v1   OpenAPI /openapi.json"
echo "    public URL (links in invitations and share links): $PUBLIC_URL"
echo "    admin API token in $STATE/admin-token  (Authorization: Bearer \$(cat $STATE/admin-token))"
echo "    logs in $LOGS/, stop with: make down$([ "$STATE" = "$ROOT/.iowatt" ] || echo " IOWATT_STATE_DIR=$STATE")"
