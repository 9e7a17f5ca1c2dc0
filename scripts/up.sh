#!/usr/bin/env bash
# `make up`: the whole platform on this machine — private PostgreSQL and Redis under .iowatt/,
# migrations, API + UI on :8000, a Celery worker and beat, one local agent, a first benchmark.
# Running it again is harmless; `make down` stops what it started.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
mkdir -p "$STATE" "$RUN" "$LOGS"
chmod 711 "$STATE"

say "PostgreSQL on 127.0.0.1:$PG_PORT (data in .iowatt/pg)"
if [ ! -f "$STATE/db-password" ]; then (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$STATE/db-password"); fi
DB_PASSWORD=$(cat "$STATE/db-password")
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$STATE"; then
  echo "iowatt: the postgres user cannot reach $STATE (a parent directory is not world-executable)." >&2
  echo "        Clone the repository somewhere like /srv or /opt, or set IOWATT_STATE_DIR to such a place." >&2
  exit 1
fi
if [ ! -f "$STATE/pg/PG_VERSION" ]; then
  mkdir -p "$STATE/pg" "$STATE/pg-sock"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$STATE/pg" "$STATE/pg-sock"
  chmod 700 "$STATE/pg"
  pwfile=$(mktemp); echo "$DB_PASSWORD" > "$pwfile"; chmod 644 "$pwfile"
  as_pg "$PG_BIN/initdb" -D "$STATE/pg" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --pwfile="$pwfile" >/dev/null
  rm -f "$pwfile"
fi
if ! as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" status >/dev/null 2>&1; then
  as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -l "$STATE/pg/server.log" -w \
      -o "-p $PG_PORT -k $STATE/pg-sock -c listen_addresses=127.0.0.1" start >/dev/null
fi
psql_() { as_pg psql -h "$STATE/pg-sock" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [ "$(psql_ -c "select 1 from pg_roles where rolname='iowatt'")" != 1 ]; then
  psql_ -c "create role iowatt login password '$DB_PASSWORD'"
fi
if [ "$(psql_ -c "select 1 from pg_database where datname='iowatt'")" != 1 ]; then
  psql_ -c "create database iowatt owner iowatt"
fi

say "Redis on 127.0.0.1:$REDIS_PORT"
mkdir -p "$STATE/redis"
if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$STATE/redis" --appendonly yes \
      --daemonize yes --pidfile "$RUN/redis.pid" --logfile "$LOGS/redis.log"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

if [ ! -f "$STATE/secret-key" ]; then (umask 077; head -c 32 /dev/urandom | base64 > "$STATE/secret-key"); fi
cat > "$STATE/env" <<ENV
IOWATT_ENV=dev
IOWATT_DATABASE_URL=postgresql+psycopg://iowatt:$DB_PASSWORD@127.0.0.1:$PG_PORT/iowatt
IOWATT_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
IOWATT_SECRET_KEY=$(cat "$STATE/secret-key")
ENV
chmod 600 "$STATE/env"
set -a; source "$STATE/env"; set +a

say "Migrations"
(cd "$ROOT" && "$VENV/bin/alembic" upgrade head 2>&1 | grep -v '^INFO  \[alembic.runtime.migration\] \(Context\|Will\)' || true)

say "Admin user"
(cd "$ROOT" && "$VENV/bin/iowatt-server" bootstrap --credentials-file "$STATE/admin-credentials" \
    --token-file "$STATE/admin-token")

say "API + UI, Celery worker and beat"
start api "$VENV/bin/uvicorn" backend.main:create_app --factory --host 127.0.0.1 --port "$API_PORT" \
    --app-dir "$ROOT" --no-access-log
start worker "$VENV/bin/celery" --workdir "$ROOT" -A worker.app worker --concurrency 2 --loglevel INFO
start beat "$VENV/bin/celery" --workdir "$ROOT" -A worker.app beat --loglevel INFO \
    --schedule "$STATE/celerybeat-schedule"
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$API_PORT/api/v1/health" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$API_PORT/api/v1/health" >/dev/null || { echo "iowatt: the API did not come up; see .iowatt/logs/api.log" >&2; tail -20 "$LOGS/api.log" >&2; exit 1; }

say "Local agent"
if [ ! -f "$STATE/agent/agent.json" ]; then
  token=$(cd "$ROOT" && "$VENV/bin/iowatt-server" enrollment-token --ttl-s 600)
  "$VENV/bin/iowatt-agent" enroll --server "http://127.0.0.1:$API_PORT" --token "$token" \
      --name "local-$(hostname -s)" --replace --state-dir "$STATE/agent"
fi
start agent "$VENV/bin/iowatt-agent" run --state-dir "$STATE/agent" --engine "$ROOT/agent/engine/build/iowatt-engine"

say "First benchmark: the machine's disk vs RAM (/dev/shm)"
"$VENV/bin/python" "$ROOT/scripts/first_benchmark.py" --api "http://127.0.0.1:$API_PORT" \
    --token-file "$STATE/admin-token" --disk-dir "$STATE/bench-disk" --ram-dir /dev/shm/iowatt-bench

echo
echo "iowatt is up:  UI http://127.0.0.1:$API_PORT/   API http://127.0.0.1:$API_PORT/api/v1   OpenAPI /openapi.json"
sed 's/^/    /' "$STATE/admin-credentials"
echo "    admin API token in .iowatt/admin-token  (Authorization: Bearer \$(cat .iowatt/admin-token))"
echo "    logs in .iowatt/logs/, stop with: make down"
