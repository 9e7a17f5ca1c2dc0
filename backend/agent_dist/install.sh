#!/bin/sh
# iowatt agent installer, version @VERSION@: downloads the self-contained bundle for this host's
# architecture from the server, checks its SHA-256, installs it under /opt/iowatt-agent, enrols
# with an enrolment token read from a file and starts the systemd service.
#
#   curl -fsSL [--pinnedpubkey sha256//PIN -k] https://SERVER/api/v1/agent-dist/install.sh \
#     | sudo sh -s -- --server https://SERVER --token-file /root/iowatt-enroll.token \
#                     [--pin sha256//PIN] [--fingerprint SHA256:HEX | --ca-file PEM] [--name NAME]
#
# Upgrading an enrolled host to the bundle the server serves now: the same line with --upgrade in
# place of --token-file (no token: the enrolment in the state directory is kept; the service, when
# running, is restarted on the new version).
#
# Other options: --prefix DIR (/opt/iowatt-agent), --state-dir DIR (/var/lib/iowatt-agent),
# --bin-dir DIR (/usr/local/bin), --no-service (no unit, user or systemctl: install and enrol
# only), --no-enroll, --insecure-http (plain http to a host that is not loopback), --upgrade.
# --pin makes every download check the server's public key (curl --pinnedpubkey) instead of the
# host's CA store; --fingerprint pins the server's certificate in the agent (its enrol pinning).
# A host whose glibc is older than the bundle needs (its MANIFEST.json, as the build's check found
# it) is refused before anything is downloaded.
# Exit status: 0 installed; 2 usage or an unsupported host (its glibc too old); 3 the download's
# SHA-256 is wrong; 4 a download failed; 5 enrolment failed.
set -eu
umask 022

# Everything runs from main, called on the last line: a download cut short runs nothing.
main() {
server=''; token_file=''; pin=''; fingerprint=''; ca_file=''; agent_name=''
prefix='/opt/iowatt-agent'; state_dir='/var/lib/iowatt-agent'; bin_dir='/usr/local/bin'
service=1; enrol=1; insecure_http=0; upgrade=0

die() { code=$1; shift; printf 'iowatt install: %s\n' "$*" >&2; exit "$code"; }
say() { printf 'iowatt install: %s\n' "$*" >&2; }
need_arg() { [ "$#" -ge 2 ] || die 2 "$1 needs a value"; }

while [ "$#" -gt 0 ]; do
  case "$1" in
    --server) need_arg "$@"; server=$2; shift 2 ;;
    --token-file) need_arg "$@"; token_file=$2; shift 2 ;;
    --pin) need_arg "$@"; pin=$2; shift 2 ;;
    --fingerprint) need_arg "$@"; fingerprint=$2; shift 2 ;;
    --ca-file) need_arg "$@"; ca_file=$2; shift 2 ;;
    --name) need_arg "$@"; agent_name=$2; shift 2 ;;
    --prefix) need_arg "$@"; prefix=$2; shift 2 ;;
    --state-dir) need_arg "$@"; state_dir=$2; shift 2 ;;
    --bin-dir) need_arg "$@"; bin_dir=$2; shift 2 ;;
    --no-service) service=0; shift ;;
    --no-enroll) enrol=0; shift ;;
    --insecure-http) insecure_http=1; shift ;;
    --upgrade) upgrade=1; enrol=0; shift ;;
    --token) die 2 "--token is refused: a token on the command line is seen by every local user (ps); use --token-file PATH" ;;
    *) die 2 "unknown option: $1" ;;
  esac
done

[ -n "$server" ] || die 2 "--server URL is required"
server=${server%/}
case "$server" in
  https://*) ;;
  http://127.0.0.1:*|http://127.0.0.1|http://localhost:*|http://localhost|http://\[::1\]:*|http://\[::1\]) ;;
  http://*) [ "$insecure_http" = 1 ] || die 2 "plain http only to loopback (the token would cross the network in the clear); use https:// or --insecure-http" ;;
  *) die 2 "--server must start with https:// or http://" ;;
esac
for d in "$prefix" "$state_dir" "$bin_dir"; do
  case "$d" in
    /) die 2 "refusing / as a place to install into" ;;
    /*) ;;
    *) die 2 "--prefix, --state-dir and --bin-dir must be absolute paths: $d" ;;
  esac
  case "$d" in *[!A-Za-z0-9/._-]*) die 2 "only letters, digits and / . _ - in a path: $d" ;; esac
done
if [ "$upgrade" = 1 ]; then
  [ -z "$token_file" ] || die 2 "--upgrade keeps the host's enrolment: no --token-file"
  [ -f "$state_dir/agent.json" ] || die 2 "--upgrade: no enrolled agent in $state_dir (install with --token-file first)"
fi
if [ "$enrol" = 1 ]; then
  [ -n "$token_file" ] || die 2 "--token-file FILE is required (the enrolment token, from the server's Agents page), or --no-enroll"
  [ -r "$token_file" ] || die 2 "cannot read the token file: $token_file"
fi
if [ -n "$pin" ]; then
  case "$pin" in sha256//*) ;; *) die 2 "--pin must look like sha256//BASE64 (curl --pinnedpubkey)" ;; esac
  case "$server" in https://*) ;; *) die 2 "--pin needs an https:// server" ;; esac
fi

case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) die 2 "no bundle for this architecture: $(uname -m)" ;;
esac
bundle_glibc=''
case "$arch" in
    # @BUNDLES@ (the server writes one arm per architecture here)
  *) die 2 "the server has no bundle for $arch (make agent-dist builds them)" ;;
esac

# this host's glibc (getconf, else ldd's first line), e.g. 2.31; empty when neither tells (musl)
host_glibc() {
  v=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
  case "$v" in
    "glibc "*) echo "${v#glibc }" ;;
    *) ldd --version 2>&1 | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p' ;;
  esac
}
# older A B: version A (N.N) is older than B (N.N)
older() {
  a1=${1%%.*} a2=${1#*.} b1=${2%%.*} b2=${2#*.}
  [ "$a1" -lt "$b1" ] || { [ "$a1" -eq "$b1" ] && [ "${a2%%.*}" -lt "${b2%%.*}" ]; }
}
if [ -n "$bundle_glibc" ]; then
  have=$(host_glibc)
  case "$have" in
    [0-9]*.[0-9]*) case "$have" in *[!0-9.]*) have='' ;; esac ;;
    *) have='' ;;
  esac
  [ -n "$have" ] || die 2 "$bundle_name needs glibc $bundle_glibc or newer, and this host's glibc version cannot be told (getconf GNU_LIBC_VERSION, ldd --version: not glibc?); nothing was installed"
  if older "$have" "$bundle_glibc"; then
    die 2 "this host has glibc $have; $bundle_name needs glibc $bundle_glibc or newer (the server's make agent-dist builds one for older hosts); nothing was installed"
  fi
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256_of() { shasum -a 256 "$1" | cut -d' ' -f1; }
elif command -v openssl >/dev/null 2>&1; then
  sha256_of() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
else
  die 2 "need sha256sum, shasum or openssl to check the download"
fi
command -v curl >/dev/null 2>&1 || die 2 "need curl"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iowatt-install.XXXXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() {
  # $1 URL path under the server, $2 output file
  if [ -n "$pin" ]; then
    curl -fsS --proto '=https,http' --retry 2 -k --pinnedpubkey "$pin" -o "$2" "$server$1" || die 4 "download failed: $server$1"
  elif [ -n "$ca_file" ]; then
    curl -fsS --proto '=https,http' --retry 2 --cacert "$ca_file" -o "$2" "$server$1" || die 4 "download failed: $server$1"
  else
    curl -fsS --proto '=https,http' --retry 2 -o "$2" "$server$1" || die 4 "download failed: $server$1"
  fi
}

say "downloading $bundle_name"
fetch "/api/v1/agent-dist/files/$bundle_name" "$tmp/$bundle_name"
got=$(sha256_of "$tmp/$bundle_name")
if [ "$got" != "$bundle_sha256" ]; then
  die 3 "SHA-256 mismatch for $bundle_name: expected $bundle_sha256, got $got; nothing was installed"
fi
say "SHA-256 ok ($got)"

mkdir "$tmp/unpack"
tar -xzf "$tmp/$bundle_name" -C "$tmp/unpack" --no-same-owner
top="$tmp/unpack/${bundle_name%.tar.gz}"
[ -x "$top/iowatt-agent" ] && [ -x "$top/iowatt-engine" ] || die 2 "the bundle lacks iowatt-agent or iowatt-engine"

# replace the previous version in one rename; the old one is removed after
mkdir -p "$(dirname "$prefix")"
rm -rf "$prefix.new"
cp -a "$top" "$prefix.new"
if [ -e "$prefix" ]; then
  rm -rf "$prefix.old"
  mv "$prefix" "$prefix.old"
fi
mv "$prefix.new" "$prefix"
rm -rf "$prefix.old"
# asked once (each start of the frozen agent is ~0.3 CPU-s): the check, and what is said below
installed=$("$prefix/iowatt-agent" --version) || die 2 "the installed agent does not start: $prefix/iowatt-agent --version"
mkdir -p "$bin_dir"
ln -sf "$prefix/iowatt-agent" "$bin_dir/iowatt-agent"
ln -sf "$prefix/iowatt-engine" "$bin_dir/iowatt-engine"
say "installed $installed in $prefix"

mkdir -p "$state_dir"
chmod 0700 "$state_dir"
if [ "$service" = 1 ]; then
  if ! getent passwd iowatt-tpch >/dev/null 2>&1; then
    # the user TPC-H runs drop to; the agent itself runs as root (the unit's sandbox)
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin iowatt-tpch \
      || say "could not add the user iowatt-tpch (TPC-H runs need it)"
  fi
  sed -e "s|/opt/iowatt-agent/|$prefix/|g" -e "s|/var/lib/iowatt-agent|$state_dir|g" \
    "$prefix/iowatt-agent.service" > /etc/systemd/system/iowatt-agent.service
  chmod 0644 /etc/systemd/system/iowatt-agent.service
fi

export IOWATT_AGENT_STATE_DIR="$state_dir"
if [ "$enrol" = 1 ]; then
  if [ -f "$state_dir/agent.json" ]; then
    say "already enrolled ($state_dir/agent.json): keeping that enrolment"
  else
    set -- enroll --server "$server" --token-file "$token_file" --state-dir "$state_dir"
    [ -z "$fingerprint" ] || set -- "$@" --fingerprint "$fingerprint"
    [ -z "$ca_file" ] || set -- "$@" --ca-file "$ca_file"
    [ -z "$agent_name" ] || set -- "$@" --name "$agent_name"
    [ "$insecure_http" = 0 ] || set -- "$@" --insecure-http
    "$prefix/iowatt-agent" "$@" </dev/null || die 5 "enrolment failed (see above)"
  fi
fi

if [ "$service" = 1 ]; then
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    if [ "$enrol" = 1 ]; then
      systemctl enable iowatt-agent >/dev/null 2>&1
      systemctl restart iowatt-agent
      say "service started: journalctl -u iowatt-agent -f"
    elif [ "$upgrade" = 1 ]; then
      # SIGTERM drains: a run going on finishes first (the unit's TimeoutStopSec)
      systemctl try-restart iowatt-agent
      say "upgraded; the service (if it was running) restarts on the new version"
    fi
  else
    say "no systemd here: start the agent with $prefix/iowatt-agent run --state-dir $state_dir"
  fi
fi
say "next: allow what runs may touch, e.g. iowatt-agent targets add /srv/bench"
}

main "$@"
