#!/usr/bin/env python3
"""How local an offset sequence is, from fio-format completion-latency logs written with
log_offset=1 (columns: time, clat, direction, block size, offset): per log, the share of I/Os whose
offset lies within 4 KiB / 64 KiB / 1 MiB / 16 MiB of the previous I/O's, the median jump, and
how many distinct offsets. Compares the offsets two tools generate for the same job without
timing anything (the null ioengine makes them as fast as the generators go):

    J="--name=o --size=1g --rw=randrw --rwmixread=70 --bs=4k --iodepth=16 --number_ios=600000"
    fio $J --ioengine=null --filename=/dev/shm/o/ff --write_lat_log=/dev/shm/o/fio --log_offset=1
    iowatt-engine $J --ioengine=null --filename=/dev/shm/o/ee --write_lat_log=/dev/shm/o/eng --log_offset=1
    python3 bench/engine_vs_fio/offsets.py /dev/shm/o/fio_clat.1.log /dev/shm/o/eng_clat.1.log
"""

from __future__ import annotations

import statistics
import sys


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as f:
            offs = [int(line.split(",")[4]) for line in f if line.strip()]
        d = [abs(b - a) for a, b in zip(offs, offs[1:], strict=False)]
        near = {
            k: sum(1 for v in d if v <= n) / len(d)
            for k, n in (("4k", 4096), ("64k", 65536), ("1M", 1 << 20), ("16M", 16 << 20))
        }
        shares = " ".join(f"<={k} {v:.3f}" for k, v in near.items())
        jump = statistics.median(d) / 1048576
        print(f"{path}: {len(offs)} I/Os, {shares}, median jump {jump:.1f} MiB, distinct {len(set(offs))}")


if __name__ == "__main__":
    main()
