"""agent/packaging/glibc-compat.c: the stand-ins for gettid and sem_clockwait (glibc 2.30) that let
the bundle's engine target glibc 2.28 (ADR 0036). Compiled with the host's gcc beside a small
program (the definitions in the program win over the host glibc's own), which checks what the
engine relies on: the calling thread's id, a post seen at once, a deadline on CLOCK_MONOTONIC kept
(not early, ETIMEDOUT), a deadline already past, and EINVAL for a bad clock or timespec."""

import shutil
import subprocess
from pathlib import Path

import pytest

COMPAT = Path(__file__).resolve().parents[2] / "agent" / "packaging" / "glibc-compat.c"

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec in_ns(long long ns)
{
	long long at = now_ns() + ns;
	struct timespec t = { .tv_sec = at / 1000000000LL, .tv_nsec = at % 1000000000LL };
	return t;
}

int main(void)
{
	sem_t s;
	sem_init(&s, 0, 0);
	if (gettid() != (pid_t)syscall(SYS_gettid)) { puts("gettid"); return 1; }
	sem_post(&s);
	struct timespec t = in_ns(1000000000LL);
	if (sem_clockwait(&s, CLOCK_MONOTONIC, &t) != 0) { puts("posted"); return 1; }
	long long t0 = now_ns();
	t = in_ns(250000000LL); /* 250 ms: three slices of at most 100 ms */
	int rc = sem_clockwait(&s, CLOCK_MONOTONIC, &t);
	long long waited = now_ns() - t0;
	if (rc != -1 || errno != ETIMEDOUT || waited < 250000000LL) {
		printf("timeout %d %lld\n", rc, waited);
		return 1;
	}
	t = in_ns(-1000000LL);
	if (sem_clockwait(&s, CLOCK_MONOTONIC, &t) != -1 || errno != ETIMEDOUT) { puts("past"); return 1; }
	sem_post(&s);
	if (sem_clockwait(&s, CLOCK_MONOTONIC, &t) != 0) { puts("past but posted"); return 1; }
	if (sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &t) != -1 || errno != EINVAL) { puts("clock"); return 1; }
	t.tv_nsec = 1000000000L;
	if (sem_clockwait(&s, CLOCK_MONOTONIC, &t) != -1 || errno != EINVAL) { puts("nsec"); return 1; }
	puts("ok");
	return 0;
}
"""


def test_the_stand_ins_behave_as_glibc_s(tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    (tmp_path / "main.c").write_text(PROGRAM)
    exe = tmp_path / "compat"
    subprocess.run(
        [
            gcc,
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
            "-o",
            str(exe),
            str(COMPAT),
            str(tmp_path / "main.c"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    # the program's definitions are the ones called (not the host glibc's)
    syms = subprocess.run(["nm", str(exe)], capture_output=True, text=True, check=True).stdout
    assert " T gettid" in syms and " T sem_clockwait" in syms
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stdout
