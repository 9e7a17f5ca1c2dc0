#!/usr/bin/env bash
# `make down`: stop what `make up` started for this state directory (.iowatt/ or IOWATT_STATE_DIR),
# found by the pid files and the data directory inside it, never by port: another instance on
# the same machine keeps running. Data stays (delete the state directory to start afresh).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[ -d "$STATE" ] || { echo "nothing to stop in $STATE"; exit 0; }
say "Stopping iowatt ($STATE)"
# The agent drains on SIGTERM: a run in progress finishes and uploads (up.sh starts it with
# --drain-timeout 600); it is killed only if it is still there 70 s after that, when its own
# deadline has stopped the engine and failed the run, and its last uploads had a minute
# (as the systemd unit's TimeoutStopSec; tests/agent/test_make_down.py).
# A second `make down` meanwhile sends a second SIGTERM: the agent stops the run at once and
# reports it failed to the server, then exits.
if alive agent; then
  echo "    agent: draining: a run in progress may take up to 600 s to finish and upload;" \
    "\`make down\` again (another terminal) cuts it short and fails the run"
fi
# make up's background bundle build (scripts/agent-dist-background.sh): SIGTERM to its process group;
# build.sh stops between two commands, removes the .NAME.tmp files it was writing and never stops
# between a file's two renames, so dist/agent keeps whole files (the ones it had, or new ones)
stop agent-dist 30
stop agent 670 "finishing its current run"
stop beat
stop worker 30 "finishing its current tasks"
stop api
stop redis 30
pg_stop
