#!/usr/bin/env bash
# make fuzz: each target in turn for FUZZ_SECONDS (default 600) under nice, one process at a
# time (the machines are shared); the targets are FUZZ_BIN/fuzz-<target> (make fuzz: build/opt's,
# compiled at -O1; default build/, the test builds'). New inputs go to build/fuzz-work/<target>;
# afterwards those that add coverage are merged (minimized) into fuzz/corpus/<target>, the
# committed corpus. A crash stops the script with the artifact under build/fuzz-crash/<target>/:
# minimize it (build/fuzz-<target> -minimize_crash=1 FILE), fix the engine, and commit the input to
# fuzz/crashes/<target>/ (tests/engine/test_fuzz_targets.py replays it on every make test).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-600}
bin=${FUZZ_BIN:-build}
for t in "$@"; do
  work=build/fuzz-work/$t crash=build/fuzz-crash/$t
  mkdir -p "$work" "$crash" "fuzz/corpus/$t"
  echo "fuzz: $t for ${secs} s"
  nice -n 10 "$bin/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -dict="fuzz/dict/$t.dict" -artifact_prefix="$crash/" -print_final_stats=1 \
    "$work" "fuzz/corpus/$t" $( [ -d "fuzz/crashes/$t" ] && echo "fuzz/crashes/$t" ) 2>"build/fuzz-$t.log" \
    || { tail -40 "build/fuzz-$t.log"; echo "fuzz: $t found a crash: $crash/" >&2; exit 1; }
  grep -E '^(stat::number_of_executed_units|#[0-9]+ +DONE)' "build/fuzz-$t.log" || true
  nice -n 10 "$bin/fuzz-$t" -merge=1 "fuzz/corpus/$t" "$work" 2>>"build/fuzz-$t.log" >/dev/null
done
