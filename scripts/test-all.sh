#!/usr/bin/env bash
# `make test`: the UI's checks (the generated client, tsc, vitest: CPU-bound, a few minutes on two
# cores) run beside the Python suite (mostly waiting on real services), not before it. The UI's
# output is kept in a log and printed when both are done; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -t iowatt-test-ui.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
"${MAKE:-make}" --no-print-directory test-ui >"$log" 2>&1 &
ui=$!
"${MAKE:-make}" --no-print-directory test-py
py=$?
wait "$ui"
ui_rc=$?
echo "---- make test-ui (run beside the Python suite; exit $ui_rc) ----"
if [ "$ui_rc" -eq 0 ]; then tail -n 15 "$log"; else cat "$log"; fi
echo "make test: test-py exit $py, test-ui exit $ui_rc, $(( $(date +%s) - start )) s"
[ "$py" -eq 0 ] || exit "$py"
exit "$ui_rc"
