#!/usr/bin/env bash
# `make down`: stop what `make up` started for this state directory (.iowatt/ or IOWATT_STATE_DIR),
# found by the pid files and the data directory inside it, never by port: another instance on
# the same machine keeps running. Data stays (delete the state directory to start afresh).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[ -d "$STATE" ] || { echo "nothing to stop in $STATE"; exit 0; }
say "Stopping iowatt ($STATE)"
# The agent drains on SIGTERM: a run in progress finishes and uploads (its --drain-timeout,
# 600 s); it is killed only if it is still there 30 s after that.
stop agent 630 "finishing its current run"
stop beat
stop worker 30 "finishing its current tasks"
stop api
stop redis 30
pg_stop
