#!/usr/bin/env bash
# `make down`: stop what `make up` started (data stays in .iowatt/; delete it to start afresh).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[ -d "$STATE" ] || { echo "nothing to stop"; exit 0; }
say "Stopping iowatt"
stop agent 30
stop beat
stop worker 30
stop api
if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; echo "    redis stopped"; fi
if [ -f "$STATE/pg/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" status >/dev/null 2>&1; then
  as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -m fast -w stop >/dev/null && echo "    postgresql stopped"
fi
