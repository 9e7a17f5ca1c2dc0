"""The combined figure of a multi-target run: its targets' engine documents made into one.

The targets ran the same jobs at the same time, each its own engine. Job i of the combined
document stands for job i on every target, as fio's aggregate of a reporting group does:

- bytes and I/Os are summed; bytes/s and IOPS are the summed bytes and I/Os over the longest
  target's runtime of that job and direction (the targets' rates summed when they ran equally long,
  less when one finished early: a rate over time nobody measured is never claimed);
- latency: N summed, min/max the extremes, the mean weighted by N; percentiles from the targets'
  histograms merged bin by bin (the engine's json+ `bins`, read as fio reads its own: the first
  bin whose cumulative count reaches p % of N) when every target with I/O gave bins, otherwise the
  percentiles are left out (`iowatt.combined.latency` = "not_combined") and the run shows none;
- CPU (% of one CPU) summed, runtimes the longest, per-second series summed point by point
  (their p99 the worst target's).

The document is stored as the run's result (run_results), so lists, compare, views and energy
read the combined figure as they read any run's; each target's own document is in run_targets.
"""

from typing import Any

LATENCY_MERGED = "merged"
LATENCY_NOT_COMBINED = "not_combined"


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _percentiles(stats: list[dict[str, Any]], keys: list[str]) -> dict[str, int] | None:
    """Percentiles of the merged histograms at `keys` ("99.000000"), or None when a target's
    measured latency has no bins."""
    merged: dict[int, int] = {}
    total = 0
    for s in stats:
        n = int(_num(s.get("N")))
        if n == 0:
            continue
        bins = s.get("bins")
        if not isinstance(bins, dict) or not bins:
            return None
        for k, count in bins.items():
            merged[int(k)] = merged.get(int(k), 0) + int(count)
        total += n
    if total == 0:
        return {}
    ordered = sorted(merged.items())
    out: dict[str, int] = {}
    for key in keys:
        want = float(key) / 100.0 * total
        running = 0
        for value, count in ordered:
            running += count
            if running >= want:
                out[key] = value
                break
        else:
            out[key] = ordered[-1][0]
    return out


def _lat(stats: list[dict[str, Any]], *, with_percentiles: bool) -> tuple[dict[str, Any], bool]:
    """One latency object (clat_ns, lat_ns) of the targets'; True when percentiles were merged."""
    measured = [s for s in stats if _num(s.get("N")) > 0]
    n = sum(int(_num(s.get("N"))) for s in measured)
    out: dict[str, Any] = {"N": n}
    if n == 0:
        return {"N": 0, "min": 0, "max": 0, "mean": 0.0, "percentile": {}}, True
    out["min"] = min(_num(s.get("min")) for s in measured)
    out["max"] = max(_num(s.get("max")) for s in measured)
    out["mean"] = sum(_num(s.get("mean")) * _num(s.get("N")) for s in measured) / n
    merged = True
    if with_percentiles:
        first = measured[0].get("percentile")
        keys = [k for k in first] if isinstance(first, dict) else []
        pct = _percentiles(measured, keys)
        merged = pct is not None
        out["percentile"] = pct or {}
        if pct is not None:
            bins: dict[str, int] = {}
            for s in measured:
                for k, count in (s.get("bins") or {}).items():
                    bins[k] = bins.get(k, 0) + int(count)
            out["bins"] = bins
    return out, merged


def _direction(sides: list[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    io_bytes = sum(int(_num(d.get("io_bytes"))) for d in sides)
    total_ios = sum(int(_num(d.get("total_ios"))) for d in sides)
    runtime_ms = max((_num(d.get("runtime")) for d in sides if _num(d.get("total_ios")) > 0), default=0.0)
    if runtime_ms > 0:
        bw_bytes = io_bytes * 1000.0 / runtime_ms
        iops = total_ios * 1000.0 / runtime_ms
    else:  # no runtime told: the targets' own rates summed
        bw_bytes = sum(_num(d.get("bw_bytes")) for d in sides)
        iops = sum(_num(d.get("iops")) for d in sides)
    clat, merged = _lat([d.get("clat_ns") or {} for d in sides], with_percentiles=True)
    lat, _ = _lat([d.get("lat_ns") or {} for d in sides], with_percentiles=False)
    out = {
        "io_bytes": io_bytes,
        "io_kbytes": io_bytes // 1024,
        "bw_bytes": round(bw_bytes),
        "bw": round(bw_bytes / 1024),
        "iops": iops,
        "runtime": round(runtime_ms),
        "total_ios": total_ios,
        "clat_ns": clat,
        "lat_ns": lat,
    }
    return out, merged


def _series(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    series = [((j.get("iowatt") or {}).get("series") or []) for j in jobs]
    out = []
    for k in range(max((len(s) for s in series), default=0)):
        points = [s[k] for s in series if k < len(s)]

        def worst(key: str, pts: list[dict[str, Any]] = points) -> int | None:
            vals = [int(p[key]) for p in pts if isinstance(p.get(key), int)]
            return max(vals) if vals else None

        out.append(
            {
                "t_ns": max(int(_num(p.get("t_ns"))) for p in points),
                "read_iops": sum(_num(p.get("read_iops")) for p in points),
                "read_bw_bytes": sum(int(_num(p.get("read_bw_bytes"))) for p in points),
                "read_clat_p99_ns": worst("read_clat_p99_ns"),
                "write_iops": sum(_num(p.get("write_iops")) for p in points),
                "write_bw_bytes": sum(int(_num(p.get("write_bw_bytes"))) for p in points),
                "write_clat_p99_ns": worst("write_clat_p99_ns"),
            }
        )
    return out


def _job(jobs: list[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    first = jobs[0]
    read, read_merged = _direction([j.get("read") or {} for j in jobs])
    write, write_merged = _direction([j.get("write") or {} for j in jobs])
    exts = [j.get("iowatt") or {} for j in jobs]
    runtimes = [e.get("runtime_ns") for e in exts]
    ext: dict[str, Any] = {
        "options": (exts[0].get("options") or {}),
        "series": _series(jobs),
    }
    if all(isinstance(r, int) for r in runtimes):
        ext["runtime_ns"] = max(int(r) for r in runtimes if isinstance(r, int))
    urings = [e.get("io_uring") for e in exts]
    if all(isinstance(u, dict) for u in urings):
        workers = [u.get("kernel_worker_cpu") for u in urings if isinstance(u, dict)]
        nowait = [u.get("target_nowait") for u in urings if isinstance(u, dict)]
        known_workers = all(w is not None for w in workers)
        known_nowait = all(n is not None for n in nowait)
        ext["io_uring"] = {
            "kernel_worker_cpu": sum(_num(w) for w in workers) if known_workers else None,
            "target_nowait": all(bool(n) for n in nowait) if known_nowait else None,
        }
    job = {
        "jobname": first.get("jobname", ""),
        "groupid": first.get("groupid", 0),
        "error": max(int(_num(j.get("error"))) for j in jobs),
        "job options": first.get("job options") or {},
        "job_runtime": max(int(_num(j.get("job_runtime"))) for j in jobs),
        "usr_cpu": sum(_num(j.get("usr_cpu")) for j in jobs),
        "sys_cpu": sum(_num(j.get("sys_cpu")) for j in jobs),
        "read": read,
        "write": write,
        "iowatt": ext,
    }
    return job, read_merged and write_merged


def combine(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One document of the targets' documents (same jobs, in the same order). Raises ValueError
    when they do not hold the same jobs."""
    names = [[j.get("jobname") for j in d.get("jobs") or []] for d in docs]
    if any(n != names[0] for n in names):
        raise ValueError("the targets' results do not hold the same jobs")
    jobs = []
    merged = True
    for i in range(len(names[0])):
        job, ok = _job([d["jobs"][i] for d in docs])
        jobs.append(job)
        merged = merged and ok
    top = docs[0].get("iowatt") or {}
    return {
        "fio version": docs[0].get("fio version", ""),
        "jobs": jobs,
        "iowatt": {
            "version": top.get("version"),
            "target": top.get("target"),  # the first target's: the run's own device
            "combined": {
                "targets": len(docs),
                "latency": LATENCY_MERGED if merged else LATENCY_NOT_COMBINED,
                "rates": "summed bytes and I/Os over the longest target's runtime",
            },
        },
    }
