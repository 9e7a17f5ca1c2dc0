/* Linked into the bundle's engine only (agent/packaging/build.sh; ADR 0036): the engine calls
 * gettid() and sem_clockwait(), both new in glibc 2.30, and the bundle targets glibc 2.28's symbol
 * versions so that it runs on RHEL 8. These two definitions stand in for them, through what 2.28
 * has: the gettid system call, and sem_timedwait on CLOCK_REALTIME in slices of at most 100 ms
 * (a step of the wall clock then moves a wake-up by at most one slice; the deadline itself is
 * kept on the clock the caller named). The engine's own sources are unchanged. */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS 100000000LL

pid_t gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) {
		errno = EINVAL;
		return -1;
	}
	if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		if (sem_trywait(sem) == 0)
			return 0;
		if (errno != EAGAIN)
			return -1;
		struct timespec now, wall;
		if (clock_gettime(clock, &now) != 0)
			return -1;
		int64_t left = ((int64_t)abstime->tv_sec - now.tv_sec) * 1000000000LL +
			       (abstime->tv_nsec - now.tv_nsec);
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (left > SLICE_NS)
			left = SLICE_NS;
		if (clock_gettime(CLOCK_REALTIME, &wall) != 0)
			return -1;
		wall.tv_nsec += left;
		if (wall.tv_nsec >= 1000000000L) {
			wall.tv_sec += wall.tv_nsec / 1000000000L;
			wall.tv_nsec %= 1000000000L;
		}
		if (sem_timedwait(sem, &wall) == 0)
			return 0;
		if (errno != ETIMEDOUT)
			return -1; /* EINTR as sem_clockwait's */
	}
}
