# Shared by up.sh, down.sh and tests/test_deploy.py: paths, ports, secret files, process helpers
# and the private PostgreSQL and Redis of one local instance.
#
# One instance = one state directory. A second instance on the same machine needs its own
# IOWATT_STATE_DIR and ports (IOWATT_PG_PORT, IOWATT_REDIS_PORT, IOWATT_API_PORT); everything an
# instance starts, stops or writes is found through its state directory, never through a port.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOWATT_STATE_DIR:-$ROOT/.iowatt}
case $STATE in /*) ;; *) STATE=$PWD/$STATE ;; esac
PG_PORT=${IOWATT_PG_PORT:-55432}
REDIS_PORT=${IOWATT_REDIS_PORT:-56379}
API_PORT=${IOWATT_API_PORT:-8000}
PG_BIN=${IOWATT_PG_BIN:-/usr/lib/postgresql/15/bin}
VENV=$ROOT/.venv
RUN=$STATE/run
LOGS=$STATE/logs
PG_DATA=$STATE/pg
PG_SOCK=$STATE/pg-sock
# The superuser of the private cluster; it logs in only over the socket, as the OS user that owns
# the cluster (peer authentication), and has no password.
PG_SUPER=postgres

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { echo "iowatt: $*" >&2; exit 1; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# The OS user that owns (and runs) the cluster.
pg_owner() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }

# --- secrets ---------------------------------------------------------------------------------------

# secret_file PATH < content: write PATH mode 0600 atomically. The content goes to a file that
# mktemp creates 0600 in PATH's directory (under umask 077), then replaces PATH with rename(2):
# no moment where the secret sits in a file with a wider mode, or in a half-written PATH.
secret_file() {
  local path=$1 tmp
  tmp=$(umask 077 && mktemp "$(dirname "$path")/.$(basename "$path").XXXXXX") || return 1
  if ! (umask 077 && cat > "$tmp" && chmod 600 "$tmp"); then rm -f "$tmp"; return 1; fi
  mv -f "$tmp" "$path"
}

# new_secret PATH: a random URL-safe secret (32 characters) in PATH unless it already holds one.
new_secret() {
  local path=$1
  if [ -s "$path" ]; then chmod 600 "$path"; return 0; fi
  head -c 48 /dev/urandom | base64 | tr -d '/+=\n' | head -c 32 | secret_file "$path"
}

# instance_id: a random id for this state directory, created once; names what the instance keeps
# outside it (the RAM bench directory in /dev/shm).
instance_id() {
  [ -s "$STATE/instance-id" ] || head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n' | secret_file "$STATE/instance-id"
  cat "$STATE/instance-id"
}

# private_dir DIR: create DIR (mode 0700, owned by us) or accept it only if it already is exactly
# that: in a world-writable parent such as /dev/shm another user could have planted it or a link.
private_dir() {
  local dir=$1
  mkdir -m 700 "$dir" 2>/dev/null || true
  [ -d "$dir" ] && [ ! -L "$dir" ] && [ -O "$dir" ] || die "$dir is not a directory owned by $(id -un) (refusing it)"
  chmod 700 "$dir"
}

# --- processes: pid files hold "PID START_TIME" so a reused pid is never taken for ours ------------

proc_start_time() { [ -r "/proc/$1/stat" ] && sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
pid_of() { [ -f "$RUN/$1.pid" ] && cut -d' ' -f1 "$RUN/$1.pid"; }
alive() {
  [ -f "$RUN/$1.pid" ] || return 1
  local pid started
  read -r pid started < "$RUN/$1.pid" || [ -n "${pid:-}" ] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  [ -z "${started:-}" ] || [ "$(proc_start_time "$pid")" = "$started" ]
}

# start NAME CMD...: run in its own session with a pid file and a log, unless already running
start() {
  local name=$1; shift
  if alive "$name"; then echo "    $name already running (pid $(pid_of "$name"))"; return; fi
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid $(proc_start_time "$pid")" > "$RUN/$name.pid"
  echo "    $name started (pid $pid, log $LOGS/$name.log)"
}

# stop NAME [GRACE_S] [WHAT]: SIGTERM the process group, SIGKILL after the grace period. With WHAT
# (a description of what it is finishing) the wait prints its progress every 10 s.
stop() {
  local name=$1 grace=${2:-20} what=${3:-}
  alive "$name" || { rm -f "$RUN/$name.pid"; return 0; }
  local pid started=$SECONDS shown=0
  pid=$(pid_of "$name")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  # wall-clock seconds ($SECONDS), not loop turns: on a busy host a turn of ten 0.1 s sleeps takes
  # longer than a second, and counting turns gave a process more grace than said and no progress
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - started)) -lt "$grace" ]; do
    sleep 0.1
    if [ -n "$what" ] && [ $((SECONDS - started)) -ge $((shown + 10)) ] && kill -0 "$pid" 2>/dev/null; then
      shown=$((shown + 10))
      echo "    $name: $what (${shown} s of ${grace} s before it is killed)"
    fi
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    echo "    $name killed after ${grace} s"
  else
    echo "    $name stopped"
  fi
  rm -f "$RUN/$name.pid"
}

# --- PostgreSQL: scram over TCP on loopback, peer for the cluster owner on a 0700 socket dir -------

pg_write() { as_pg bash -c 'umask 077 && cat > "$1"' _ "$1"; }

# pg_hba/pg_ident: the only socket login is the cluster's OS owner as the superuser (peer); every
# TCP login is scram-sha-256 on loopback; nothing else (no trust anywhere).
pg_auth_files() {
  printf '%s\n' \
    "# written by iowatt's scripts/lib.sh on every make up: edits are replaced" \
    "local  all  $PG_SUPER  peer  map=owner" \
    "host   all  all  127.0.0.1/32  scram-sha-256" \
    "host   all  all  ::1/128       scram-sha-256" | pg_write "$PG_DATA/pg_hba.conf"
  printf '%s\n' "owner  $(pg_owner)  $PG_SUPER" | pg_write "$PG_DATA/pg_ident.conf"
}

pg_init() {
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$STATE"; then
    die "the postgres user cannot reach $STATE (a parent directory is not world-executable).
        Clone the repository somewhere like /srv or /opt, or set IOWATT_STATE_DIR to such a place."
  fi
  mkdir -p "$PG_DATA" "$PG_SOCK"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DATA" "$PG_SOCK"
  chmod 700 "$PG_DATA" "$PG_SOCK"
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U "$PG_SUPER" --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  fi
  pg_auth_files
}

pg_running() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

pg_start() {
  if pg_running; then
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" reload >/dev/null
  else
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w \
        -o "-p $PG_PORT -k $PG_SOCK -c unix_socket_permissions=0700 -c listen_addresses=127.0.0.1 -c password_encryption=scram-sha-256" \
        start >/dev/null
  fi
}

pg_stop() {
  [ -f "$PG_DATA/PG_VERSION" ] && pg_running || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null && echo "    postgresql stopped"
}

# pg_sql: SQL on stdin, run as the superuser over the socket (peer); quiet, unaligned.
pg_sql() {
  as_pg "$PG_BIN/psql" -h "$PG_SOCK" -p "$PG_PORT" -U "$PG_SUPER" -d postgres -X -v ON_ERROR_STOP=1 -qAt "$@"
}

# pg_app_role PASSWORD_FILE: the application's role `iowatt` (login, NOT a superuser, no other
# privileges) owning its database `iowatt`. The password travels on psql's stdin (never a command
# line), with statement logging off for the session so it never reaches the server's log. Older
# clusters of make up gave the superuser the same password: it is removed (peer only).
pg_app_role() {
  local password
  password=$(cat "$1")
  printf '%s\n' \
    "SET log_statement = 'none';" \
    "SET log_min_error_statement = 'panic';" \
    "SET log_min_duration_statement = -1;" \
    "SELECT 'CREATE ROLE iowatt LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'iowatt') \\gexec" \
    "ALTER ROLE iowatt WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$password';" \
    "ALTER ROLE $PG_SUPER WITH PASSWORD NULL;" \
    "SELECT 'CREATE DATABASE iowatt OWNER iowatt' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'iowatt') \\gexec" \
    "ALTER DATABASE iowatt OWNER TO iowatt;" \
    "REVOKE ALL ON DATABASE iowatt FROM PUBLIC;" | pg_sql >/dev/null
  [ "$(echo "SELECT rolsuper FROM pg_roles WHERE rolname = 'iowatt'" | pg_sql)" = f ] \
    || die "the database role iowatt is a superuser: refusing to run the application with it"
}

# --- Redis: loopback only, a password from a 0600 config file (never on a command line) -----------

redis_conf() {
  printf '%s\n' \
    "# written by iowatt's scripts/lib.sh on every make up" \
    "bind 127.0.0.1" \
    "port $REDIS_PORT" \
    "protected-mode yes" \
    "dir $STATE/redis" \
    "appendonly yes" \
    "daemonize no" \
    "requirepass $(cat "$STATE/redis-password")" | secret_file "$STATE/redis.conf"
}

# redis_cli ARGS...: the instance's own Redis; the password goes by environment, not argv.
redis_cli() { REDISCLI_AUTH=$(cat "$STATE/redis-password") redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --no-auth-warning "$@"; }
