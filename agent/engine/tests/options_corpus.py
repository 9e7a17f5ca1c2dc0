"""Options corpus: run an engine binary over ~176 option sets (every option, aliases, bare
booleans, job files, bad values) and record exit codes, stderr and the options echoes (global
options, job options, iowatt.options, iowatt keys), without measurements. Compare two builds:

    python3 agent/engine/tests/options_corpus.py OLD_BINARY /tmp/before.json
    python3 agent/engine/tests/options_corpus.py build/iowatt-engine /tmp/after.json
    diff /tmp/before.json /tmp/after.json

Used to prove the options-table refactor (issue 10) changed nothing but the fixes it names."""

import json
import os
import shutil
import subprocess
import sys

eng = sys.argv[1]
out = sys.argv[2]
D = "/tmp/iowatt-options-corpus"
shutil.rmtree(D, ignore_errors=True)
os.makedirs(D)
F = D + "/f"
with open(F, "wb") as f:
    f.write(b"\1" * (1 << 20))
base = ["--filename=" + F, "--size=1m", "--ioengine=null"]
ok = [
    [],
    ["--name=a"],
    ["--rw=write"],
    ["--readwrite=randrw"],
    ["--rw=readwrite"],
    ["--rw=randread"],
    ["--rw=randwrite"],
    ["--rw=rw", "--rwmixread=70"],
    ["--rw=rw", "--rwmixwrite=30"],
    ["--bs=8k"],
    ["--blocksize=4k,16k", "--rw=rw"],
    ["--bs=4k,"],
    ["--bssplit=4k/10:64k/50:32k"],
    ["--bssplit=4k/50:8k/50,16k"],
    ["--rw=randrw", "--bssplit=4k:8k:16k"],
    ["--offset=4k"],
    ["--direct=1"],
    ["--buffered=0"],
    ["--buffered"],
    ["--direct"],
    ["--numjobs=2"],
    ["--runtime=1", "--time_based=1"],
    ["--runtime=100ms"],
    ["--ramp_time=10ms"],
    ["--ioengine=psync"],
    ["--ioengine=sync"],
    ["--ioengine=pvsync"],
    ["--ioengine=libaio", "--iodepth=4"],
    ["--ioengine=io_uring", "--iodepth=8", "--force_async=2"],
    ["--iodepth=16"],
    ["--stonewall"],
    ["--wait_for_previous=1"],
    ["--loops=2"],
    ["--fsync=3", "--rw=write"],
    ["--fdatasync=2", "--rw=write"],
    ["--end_fsync=1", "--rw=write"],
    ["--fsync_on_close=1", "--rw=write"],
    ["--create_fsync=0", "--rw=read"],
    ["--overwrite=1", "--rw=write"],
    ["--pre_read=1", "--rw=read"],
    ["--sync=dsync"],
    ["--sync=1"],
    ["--sync=sync"],
    ["--sync=none"],
    ["--sync=0"],
    ["--invalidate=0"],
    ["--fadvise_hint=0"],
    ["--fadvise_hint=1"],
    ["--fadvise_hint=sequential"],
    ["--fadvise_hint=random"],
    ["--fadvise_hint=normal"],
    ["--rw=randread", "--random_distribution=zipf:1.2"],
    ["--rw=read:-8k"],
    ["--rw=write:112k", "--bs=16k"],
    ["--rw=randread:8", "--rw_sequencer=identical"],
    ["--rw=randrw", "--bsrange=1k-4k,2k-8k"],
    ["--rw=read", "--bsrange=1k:4k", "--bs_unaligned"],
    ["--rw=randread", "--blockalign=512,4k"],
    ["--rw=randread", "--random_distribution=zoned:60/10:30/20:8/30:2/40"],
    ["--rw=randread", "--random_distribution=zoned_abs:60/256k:40/512k"],
    ["--rw=randread", "--random_generator=lfsr", "--norandommap"],
    ["--rw=randwrite", "--percentage_random=30,70"],
    ["--rw=read", "--number_ios=10"],
    ["--rw=randread", "--random_distribution=pareto:0.5"],
    ["--rw=randread", "--random_distribution=normal"],
    ["--rw=randread", "--random_distribution=normal:20"],
    ["--random_distribution=random"],
    ["--norandommap=1"],
    ["--randseed=42"],
    ["--zero_buffers=1"],
    ["--buffer_compress_percentage=50", "--refill_buffers=0"],
    ["--refill_buffers=0"],
    ["--rate_iops=1000"],
    # pacing, QoS, steady state, priorities (pace.c)
    ["--rate_iops=100,50", "--rw=randrw"],
    ["--rate=1m,256k", "--rate_process=poisson"],
    ["--rate=,256k", "--rate_min=,128k", "--rate_cycle=500"],
    ["--rate=256k", "--ratemin=128k", "--timeout=1s", "--threads=4"],
    ["--numjobs=2", "--size=256k", "--offset_increment=512k"],
    ["--verify=crc64", "--rw=write"],
    ["--verify=sha3-384", "--rw=randwrite"],
    ["--verify=xxhash", "--rw=write"],
    ["--rate_iops=100", "--rate_iops_min=50", "--ratecycle=200"],
    ["--thinktime=100", "--thinktime_spin=50us", "--thinktime_blocks=4", "--thinktime_blocks_type=issue"],
    ["--thinktime=1ms", "--thinktime_iotime=1"],
    ["--io_submit_mode=inline", "--flow=3", "--flow_id=2", "--flow_sleep=100"],
    ["--latency_target=10ms", "--latency_window=100ms", "--latency_percentile=99.5", "--max_latency=1s,2s"],
    ["--ss=iops_slope:0.3%", "--ss_dur=2", "--ss_ramp=1"],
    ["--steadystate=bw:1000", "--steadystate_duration=3s", "--steadystate_ramp_time=0"],
    ["--prio=3", "--prioclass=2", "--nice=5"],
    ["--gtod_reduce=1", "--disable_bw=1", "--disable_lat", "--disable_clat=0", "--disable_slat=1"],
    ["--thread", "--group_reporting=1", "--randrepeat=0"],
    ["--clocksource=cpu"],
    ["--clocksource=clock_gettime"],
    ["--clocksource=gettimeofday"],
    ["--iodepth_batch_submit=0"],
    ["--iodepth_batch=4"],
    ["--kb_base=1000", "--bs=4k"],
    ["--kb_base=1000", "--bs=4KiB"],
    ["--bs=4KiB"],
    ["--io_size=512k"],
    ["--io_limit=256k"],
    ["--beneath=" + D],
    ["--keep_existing=1"],
    ["--readonly=1"],
    ["--unlink=0"],
    ["--rw=write", "--destructive=1"],
    ["--name=a", "--bs=8k", "--name=b", "--rw=write", "--stonewall"],
    ["--bs=8k", "--name=x", "--bs=16k"],
    ["--output-format=json+"],
    ["--progress=none"],
    ["--version"],
    ["--filename=" + D + "/new", "--create_new=1", "--unlink=1", "--rw=write"],
    ["--rw=randread", "--random_distribution=zipf:0.8", "--bs=4k", "--name=j1", "--numjobs=1"],
]
bad = [
    ["--nope=1"],
    ["--rw"],
    ["--bs"],
    ["--rw=foo"],
    ["--rw=randread:0"],
    ["--rw=trimwrite"],
    ["--rw=read:x"],
    ["--bsrange=8k-4k"],
    ["--random_distribution=zoned:60/10:30/20"],
    ["--random_distribution=zoned:50/50:50/50,90/10:10/90"],
    ["--percentage_random=101"],
    ["--rwmixread=101"],
    ["--rwmixwrite=x"],
    ["--bs=0"],
    ["--bs=2g"],
    ["--bs=x"],
    ["--bs=4k,0"],
    ["--bssplit=4k/60:8k/60"],
    ["--bssplit=x"],
    ["--bssplit=4k/101"],
    ["--bssplit=2g"],
    ["--bssplit=4k/10"],
    ["--size=0"],
    ["--size=x"],
    ["--offset=-1"],
    ["--direct=2"],
    ["--buffered=yes"],
    ["--numjobs=0"],
    ["--numjobs=5000"],
    ["--runtime=x"],
    ["--time_based=1"],
    ["--ramp_time=-"],
    ["--ioengine=posixaio"],
    ["--iodepth=0"],
    ["--iodepth=5000"],
    ["--stonewall=2"],
    ["--loops=0"],
    ["--fsync=x"],
    ["--fdatasync=-1"],
    ["--end_fsync=x"],
    ["--fsync_on_close=x"],
    ["--create_fsync=2"],
    ["--overwrite=-1"],
    ["--pre_read=1", "--direct=1"],
    ["--sync=async"],
    ["--invalidate=x"],
    ["--fadvise_hint=x"],
    ["--random_distribution=zipf"],
    ["--random_distribution=zipf:1"],
    ["--random_distribution=pareto:2"],
    ["--random_distribution=normal:0"],
    ["--random_distribution=x"],
    ["--random_distribution=zipf:x"],
    ["--random_distribution=random:1"],
    ["--norandommap=x"],
    ["--randseed=x"],
    ["--zero_buffers=x"],
    ["--buffer_compress_percentage=101"],
    ["--rate_iops=x"],
    ["--rate=1m,1m,1m"],
    ["--rate=1m", "--rate_min=2m"],
    ["--rate=1m", "--rate_iops=10"],
    ["--rate_process=uniform"],
    ["--thinktime=x"],
    ["--threads=-1"],
    ["--offset_increment=x"],
    ["--numjobs=4", "--offset_increment=512k"],
    ["--verify=crc8"],
    ["--ratemin=x"],
    ["--thinktime_blocks=0"],
    ["--thinktime_blocks_type=x"],
    ["--io_submit_mode=offload"],
    ["--flow=1001"],
    ["--latency_percentile=101"],
    ["--max_latency=1,2,3"],
    ["--ss=iops"],
    ["--ss=iops:x%"],
    ["--ss=iops_slope:1", "--ss_dur=1"],
    ["--ss_dur=100000"],
    ["--prio=8"],
    ["--nice=-21"],
    ["--cmdprio_percentage=10"],
    ["--destructive=x"],
    ["--beneath="],
    ["--create_new=x"],
    ["--unlink=x"],
    ["--keep_existing=x"],
    ["--readonly=1", "--rw=write"],
    ["--readonly=x"],
    ["--iodepth_batch_submit=70000"],
    ["--iodepth_batch=x"],
    ["--io_size=0"],
    ["--io_limit=x"],
    ["--io_size=1k"],
    ["--kb_base=1001"],
    ["--force_async=70000"],
    ["--force_async=x"],
    ["--clocksource=tsc"],
    ["--refill_buffers=x"],
    ["--thread=x"],
    ["--group_reporting=2"],
    ["--randrepeat=x"],
    ["--name="],
    ["--filename="],
    ["--size=2k", "--bs=4k"],
    ["--output-format=xml"],
    ["--progress=x"],
    ["--name"],
    ["--help=1", "--nope"],
]
res = []


def run(args, nobase=False, extra=None):
    argv = [eng] + ([] if nobase else base) + args + (extra or [])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    r = {"args": args, "rc": p.returncode, "stderr": p.stderr}
    try:
        j = json.loads(p.stdout)
        r["global"] = j.get("global options")
        r["jobs"] = [
            {
                "jobname": x.get("jobname"),
                "job options": x.get("job options"),
                "options": x.get("iowatt", {}).get("options"),
                "iowatt_keys": sorted(x.get("iowatt", {}).keys()),
            }
            for x in j.get("jobs", [])
        ]
    except Exception:
        r["stdout"] = p.stdout if "--version" in args or "--help" in args else p.stdout[:0]
    return r


for a in ok + bad:
    res.append(run(a))
    if os.path.exists(D + "/new"):
        os.unlink(D + "/new")
res.append(run(["--help"], nobase=True))
res.append(run([], nobase=True))
# job files
jf = [
    {
        "global": {"size": "1m", "ioengine": "null", "filename": F, "direct": True, "iodepth": 2},
        "jobs": [{"name": "a", "rw": "randread", "bs": 8192}, {"rw": "write", "stonewall": 1}],
    },
    {"jobs": [{"filename": F, "size": "1m", "ioengine": "null", "loops": 2}]},
    {"jobs": []},
    {"jobs": [{"nope": 1}]},
    {"global": [], "jobs": [{}]},
    {"x": 1, "jobs": [{}]},
    {"jobs": [{"filename": F, "size": "1m", "ioengine": "null", "bs": None}]},
    {
        "global": {"filename": F, "size": "1m", "ioengine": "null", "rw": "randrw", "rwmixwrite": 20},
        "jobs": [
            {"bssplit": "4k/50:8k"},
            {"name": "z", "random_distribution": "pareto:0.3", "rw": "randread"},
        ],
    },
]
for i, doc in enumerate(jf):
    p = f"{D}/job{i}.json"
    with open(p, "w") as f:
        json.dump(doc, f)
    r = run([p], nobase=True)
    r["args"] = ["jobfile", i]
    res.append(r)
    r = run([p, "--bs=16k"], nobase=True)
    r["args"] = ["jobfile+bs", i]
    res.append(r)
with open(D + "/bad.json", "w") as f:
    f.write("{nope")
r = run([D + "/bad.json"], nobase=True)
r["args"] = ["badjson"]
res.append(r)
r = run([D + "/missing.json"], nobase=True)
r["args"] = ["missingjson"]
res.append(r)
with open(out, "w") as fo:
    json.dump(res, fo, indent=1, sort_keys=False)
print(
    len(res),
    "cases;",
    sum(1 for r in res if r["rc"] == 0),
    "rc0;",
    sum(1 for r in res if r["rc"] == 2),
    "rc2;",
    sorted(set(r["rc"] for r in res)),
)
