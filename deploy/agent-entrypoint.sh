#!/bin/sh
# Entry point of the compose agent (docker-compose.yml, profiles agent and agent-device): enrol
# once over HTTPS pinned to Caddy's root certificate, with the token from the environment (never
# on a command line); write the host policy for what this container was given (the mounted bench
# directory, and the device of the agent-device profile); then run. The policy lives in the
# agent's state volume and changes only here or by `docker compose exec agent iowatt-agent targets`.
set -eu
state=${IOWATT_AGENT_STATE_DIR:-/var/lib/iowatt-agent}
ca=/etc/iowatt/caddy-root.crt
bench=/srv/iowatt-bench
if [ ! -f "$ca" ]; then
  echo "iowatt-agent: $ca is not a file: copy Caddy's root certificate first (deploy/README.md)" >&2
  exit 2
fi
if [ ! -f "$state/agent.json" ]; then
  if [ -z "${IOWATT_ENROLL_TOKEN:-}" ]; then
    echo "iowatt-agent: not enrolled: set IOWATT_ENROLL_TOKEN in .env for the first start" >&2
    exit 2
  fi
  iowatt-agent enroll --server "https://$IOWATT_HOSTNAME" --ca-file "$ca" --name "compose-$(hostname)"
fi
unset IOWATT_ENROLL_TOKEN
iowatt-agent targets list --json | grep -qF -- "\"$bench\"" || iowatt-agent targets add "$bench"
if [ -n "${IOWATT_AGENT_DEVICE:-}" ] && [ "$IOWATT_AGENT_DEVICE" != /dev/null ]; then
  if ! iowatt-agent targets list --json | grep -qF -- "\"$IOWATT_AGENT_DEVICE\""; then
    if [ -n "${IOWATT_AGENT_DESTRUCTIVE:-}" ]; then
      iowatt-agent targets add --device "$IOWATT_AGENT_DEVICE" --destructive
    else
      iowatt-agent targets add --device "$IOWATT_AGENT_DEVICE"
    fi
  fi
fi
exec iowatt-agent run --log-format json
