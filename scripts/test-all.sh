#!/usr/bin/env bash
# `make test`: the UI's checks (the generated client, tsc, vitest: CPU-bound, a few minutes on two
# cores) run beside the Python suite (mostly waiting on real services), not before it. The UI's
# output is kept in a log and printed when both are done; the exit status is the first failure's.
# At nice 19: they take the CPU the suite leaves idle (a clean clone's run kept the two cores 82 %
# busy: 1,149 of 1,400 CPU-s) instead of a share of its busiest minutes, its start (four test
# processes collecting, the stacks and rigs starting) among them, where their ~40 CPU-s delayed
# every test process. Their waits are bounds, not deadlines (IOWATT_UI_TEST_TIMEOUT_S: a test that
# waits its turn for minutes is not a failure); what is left when the suite ends runs then.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -t iowatt-test-ui.XXXXXX)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
IOWATT_UI_TEST_TIMEOUT_S=600 nice -n 19 "${MAKE:-make}" --no-print-directory test-ui >"$log" 2>&1 &
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
