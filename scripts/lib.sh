# Shared by up.sh and down.sh: paths, ports and process helpers for the local platform.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOWATT_STATE_DIR:-$ROOT/.iowatt}
PG_PORT=${IOWATT_PG_PORT:-55432}
REDIS_PORT=${IOWATT_REDIS_PORT:-56379}
API_PORT=${IOWATT_API_PORT:-8000}
PG_BIN=/usr/lib/postgresql/15/bin
VENV=$ROOT/.venv
RUN=$STATE/run
LOGS=$STATE/logs

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# start NAME CMD...: run in its own session with a pid file and a log, unless already running
start() {
  local name=$1; shift
  if alive "$name"; then echo "    $name already running (pid $(cat "$RUN/$name.pid"))"; return; fi
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
  echo "    $name started (pid $!, log ${LOGS#"$ROOT"/}/$name.log)"
}

# stop NAME [GRACE_S]: SIGTERM the process group, SIGKILL after the grace period
stop() {
  local name=$1 grace=${2:-20}
  alive "$name" || { rm -f "$RUN/$name.pid"; return 0; }
  local pid; pid=$(cat "$RUN/$name.pid")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((grace * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$RUN/$name.pid"
  echo "    $name stopped"
}
