#!/bin/sh
# Remake the fio 3.x samples of tests/imports/test_fio_importers.py with Debian's fio (3.33) on
# small size-bound jobs in a tmpfs directory (no device is written): three groups (stonewall),
# 4 MiB each. The JSON, v3 terse and normal samples come from ONE run (--output-format=json,terse,
# normal, split here) so their figures agree; json+, terse v2 and v5 are runs of their own (the
# same I/O counts and bytes, other timings).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /dev/shm/iowatt-fio-samples-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/jobs.fio" <<JOBS
[global]
directory=$dir
size=4m
ioengine=psync
[randread-4k]
rw=randread
bs=4k
[seqwrite-64k]
stonewall
rw=write
bs=64k
[randrw-8k]
stonewall
rw=randrw
bs=8k
rwmixread=70
JOBS
cd "$dir"
fio --output-format=json,terse,normal --output=all.txt jobs.fio
# the JSON object: from the line "{" to the line "}"; the terse lines; the rest is normal output
awk '/^\{$/{j=1} j{print} /^\}$/{j=0}' all.txt >"$here/fio-3.33.json"
grep -E '^3;fio-' all.txt >"$here/fio-3.33-v3.terse"
awk '/^\{$/{j=1} !j && !/^3;fio-/{print} /^\}$/{j=0}' all.txt >"$here/fio-3.33.normal"
fio --output-format=json+ --output="$here/fio-3.33.jsonplus" jobs.fio
fio --output-format=terse --terse-version=5 --output="$here/fio-3.33-v5.terse" jobs.fio
fio --output-format=terse --terse-version=2 --output="$here/fio-3.33-v2.terse" jobs.fio
sed -i "s#$dir#/tmp/fio-samples#g" "$here"/fio-3.33*
