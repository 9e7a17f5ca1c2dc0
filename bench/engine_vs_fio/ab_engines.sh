#!/bin/bash
# Two engine builds side by side on a loop-ext4 target (as run.py's): A = $1, B = $2, the job in JOB
# (default randrw 70/30 4k QD16 io_uring direct), RT seconds per run (3); a warm-up pair, then PAIRS
# (6) pairs in A B B A order; prints each pair and the median ratio A/B. As root (losetup, mount).
#   bench/engine_vs_fio/ab_engines.sh NEW/iowatt-engine OLD/iowatt-engine
# SPIN=1: a busy loop at SCHED_IDLE on every CPU for the whole comparison, so no CPU ever goes idle
# (on a VM, an idle vCPU halts and a wake-up must go through the host); any task preempts it at once.
# PLACE=split|pack: both tools pinned to the last CPU, and the unbound workqueues (the loop device's
# worker among them; every unbound kworker of the machine for the duration, restored at the end)
# confined to CPU 0 (split: job thread and loop worker apart) or to the same last CPU (pack).
set -e
A=$1; B=$2; PAIRS=${PAIRS:-6}
d=$(mktemp -d /dev/shm/ab-XXXX); truncate -s 1200M $d/img; mkfs.ext4 -q $d/img; loop=$(losetup -f --show $d/img); mkdir $d/mnt; mount $loop $d/mnt
spin=(); wqmask=/sys/devices/virtual/workqueue/cpumask; oldmask=$(cat $wqmask)
cleanup() { [ ${#spin[@]} = 0 ] || kill "${spin[@]}"; echo $oldmask > $wqmask; sleep 0.5; umount $d/mnt 2>/dev/null || (sleep 2; umount $d/mnt); losetup -d $loop; rm -rf $d; }
trap cleanup EXIT
last=$(($(nproc) - 1))
case "${PLACE:-}" in
  split) echo 1 > $wqmask; A="taskset -c $last $A"; B="taskset -c $last $B" ;;
  pack) printf '%x\n' $((1 << last)) > $wqmask; A="taskset -c $last $A"; B="taskset -c $last $B" ;;
  "") ;;
  *) echo "PLACE: split or pack" >&2; exit 2 ;;
esac
if [ "${SPIN:-0}" = 1 ]; then for c in $(seq 0 $(($(nproc) - 1))); do chrt -i 0 taskset -c $c sh -c 'while :; do :; done' & spin+=($!); done; fi
JOB="${JOB:---rw=randrw --rwmixread=70 --bs=4k --ioengine=io_uring --iodepth=16 --direct=1}"
common="--name=ab --filename=$d/mnt/f --size=1g --runtime=${RT:-3} --time_based $JOB --output-format=json"
iops() { python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"]+j["write"]["iops"]))'; }
(cd $d && $A $common --runtime=1 >/dev/null && $B $common --runtime=1 >/dev/null)
rs=()
for i in $(seq 1 $PAIRS); do
  if [ $((i%2)) = 1 ]; then a=$(cd $d && $A $common | iops); b=$(cd $d && $B $common | iops); else b=$(cd $d && $B $common | iops); a=$(cd $d && $A $common | iops); fi
  r=$(python3 -c "print(round($a/$b,3))"); rs+=($r); echo "pair $i cand $a ref $b ratio $r" >&2
done
python3 -c "import statistics,sys; print(statistics.median(map(float,sys.argv[1:])))" "${rs[@]}"
