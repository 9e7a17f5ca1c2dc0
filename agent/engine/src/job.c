/* Starting, pacing and collecting one job (numjobs worker threads). */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iowatt.h"
#include "verify.h"
#include "multifile.h"
#include "output.h"
#include "patterns.h"

/* a single-file job's descriptor, shared by its threads, with the job's cache hints */
static int job_open_target(struct job *j)
{
	const struct options *o = j->o;
	j->fd = target_open(o, &j->tgt, j->errmsg, sizeof(j->errmsg));
	if (j->fd < 0) {
		j->err = j->fd;
		j->fd = -1;
		return j->err;
	}
	/* as fio, direct jobs too: O_DIRECT on a file with cached pages takes the kernel's slower
	 * path (a flush and, for writes, an invalidation of the range per I/O) until they go */
	if (o->invalidate) {
		if (j->tgt.is_blk)
			fdatasync(j->fd);
		posix_fadvise(j->fd, (off_t)o->offset, (off_t)(o->size + o->oinc_span), POSIX_FADV_DONTNEED);
	}
	int adv = -1;
	switch (o->fadvise) {
	case FADV_NONE: break;
	case FADV_AUTO: adv = rw_is_random(o->rw) ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL; break;
	case FADV_SEQ: adv = POSIX_FADV_SEQUENTIAL; break;
	case FADV_RAND: adv = POSIX_FADV_RANDOM; break;
	case FADV_NORMAL: adv = POSIX_FADV_NORMAL; break;
	}
	if (adv >= 0)
		posix_fadvise(j->fd, 0, 0, adv);
	return 0;
}

/* The job's files, laid out before any job of the run starts (as fio's create_serialize). */
int job_layout(struct job *j)
{
	struct options *o = j->o;
	j->ops = o->pace.offload ? offload_engine() : engine_find(o->ioengine); /* src/offload.c */
	j->max_bs = opt_max_bs(o);
	int r = j->mf ? mf_prepare(j) : target_prepare(o, &j->tgt, j->errmsg, sizeof(j->errmsg));
	if (r == -EINTR && g_stop) {
		j->errmsg[0] = 0;
		return r; /* SIGINT/SIGTERM during the layout: an interrupted run, not a failure */
	}
	if (r < 0)
		j->err = r;
	return r;
}

int job_start(struct job *j)
{
	struct options *o = j->o;
	int r;
	/* the target was checked before the first I/O: failing to open it now means it changed
	 * (replaced, a link swapped in, removed) -- a run-time failure of this job. A multi-file
	 * job's workers open their own files (multifile.c). */
	if (!j->mf && job_open_target(j) < 0)
		return j->err;

	if (rw_writes(o->rw)) {
		/* 256 KiB of random data (+ one block) stays in L2: a per-write copy from a random
		 * offset then costs ~memcpy instead of cache misses (the per-write XOR key, not the
		 * pool size, is what keeps every block unique) */
		j->pool_len = (256u << 10) + j->max_bs;
		j->pool = malloc(j->pool_len);
		if (!j->pool) {
			j->err = -ENOMEM;
			snprintf(j->errmsg, sizeof(j->errmsg), "out of memory");
			return -ENOMEM;
		}
		struct rng r;
		rng_seed(&r, o->randseed ^ ((uint64_t)j->index << 32) ^ now_ns());
		for (uint64_t i = 0; i + 8 <= j->pool_len; i += 8) {
			uint64_t v = rng_next(&r);
			memcpy(j->pool + i, &v, 8);
		}
	}
	if (o->verify && (r = verify_job_init(j)) < 0) { /* verify family: src/verify.c */
		j->err = r;
		snprintf(j->errmsg, sizeof(j->errmsg), "out of memory");
		return r;
	}
	j->workers = aligned_alloc(CACHELINE, o->numjobs * sizeof(*j->workers));
	if (j->workers)
		memset(j->workers, 0, o->numjobs * sizeof(*j->workers));
	if (!j->workers) {
		j->err = -ENOMEM;
		snprintf(j->errmsg, sizeof(j->errmsg), "out of memory");
		return -ENOMEM;
	}
	pthread_barrier_init(&j->ready, NULL, o->numjobs + 1);
	pthread_barrier_init(&j->go, NULL, o->numjobs + 1);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	unsigned created = 0;
	for (unsigned i = 0; i < o->numjobs; i++) {
		struct worker *w = &j->workers[i];
		w->job = j;
		w->id = i;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			break;
		created++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (created != o->numjobs)
		die_code(EXIT_FAIL, "numjobs: cannot create %u threads", o->numjobs);
	pthread_barrier_wait(&j->ready);
	for (unsigned i = 0; i < o->numjobs; i++) {
		struct worker *w = &j->workers[i];
		if (w->err) {
			j->err = w->err;
			j->unsupported = w->err == -ENOSYS;
			str_copy(j->errmsg, sizeof(j->errmsg), w->errmsg);
			break;
		}
	}
	j->started = 1;
	return j->err;
}

/* Release the job's threads: every job of one start is given the same t0 */
void job_go(struct job *j, uint64_t t0)
{
	const struct options *o = j->o;
	cpustat_read(&j->cpu0);
	j->t_start = t0;
	j->t_ramp_end = j->t_start + o->ramp_ns;
	j->t_deadline = o->runtime_ns ? j->t_ramp_end + o->runtime_ns : UINT64_MAX;
	j->last_tick = j->t_start;
	pthread_barrier_wait(&j->go);
}

int job_all_finished(struct job *j)
{
	for (unsigned i = 0; i < j->o->numjobs; i++)
		if (!atomic_load(&j->workers[i].finished))
			return 0;
	return 1;
}

void job_progress(struct job *j, uint64_t now)
{
	const struct options *o = j->o;
	uint64_t ios[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	for (unsigned i = 0; i < o->numjobs; i++)
		for (int d = 0; d < 2; d++) {
			ios[d] += atomic_load_explicit(&j->workers[i].pub_ios[d], memory_order_relaxed);
			bytes[d] += atomic_load_explicit(&j->workers[i].pub_bytes[d], memory_order_relaxed);
		}
	double dt = (double)(now - j->last_tick) / 1e9;
	if (dt <= 0)
		return;
	uint64_t elapsed = now - j->t_start;
	double pct = 0;
	uint64_t planned = o->runtime_ns ? o->ramp_ns + o->runtime_ns : 0;
	if (planned)
		pct = 100.0 * (double)elapsed / (double)planned;
	if (!o->time_based) {
		uint64_t pass = o->io_size ? o->io_size : o->size;
		double total = (double)(pass / opt_min_bs(o) * opt_min_bs(o)) * (double)o->loops * o->numjobs;
		double bp = total > 0 ? 100.0 * (double)(bytes[0] + bytes[1]) / total : 0;
		if (bp > pct)
			pct = bp;
	}
	if (pct > 100)
		pct = 100;
	fprintf(stderr, "{\"event\":\"progress\",\"job\":");
	json_escape(stderr, o->name);
	fprintf(stderr, ",\"job_index\":%d,\"elapsed_ns\":%llu,\"planned_ns\":", j->index, (unsigned long long)elapsed);
	if (planned)
		fprintf(stderr, "%llu", (unsigned long long)planned);
	else
		fputs("null", stderr);
	fprintf(stderr,
		",\"percent\":%.1f,\"read_iops\":%.1f,\"read_bw_bytes\":%llu,\"write_iops\":%.1f,\"write_bw_bytes\":%llu}\n",
		pct, (double)(ios[0] - j->last_ios[0]) / dt, (unsigned long long)((double)(bytes[0] - j->last_bytes[0]) / dt),
		(double)(ios[1] - j->last_ios[1]) / dt, (unsigned long long)((double)(bytes[1] - j->last_bytes[1]) / dt));
	fflush(stderr);
	for (int d = 0; d < 2; d++) {
		j->last_ios[d] = ios[d];
		j->last_bytes[d] = bytes[d];
	}
	j->last_tick = now;
}

void job_wait(struct job *j)
{
	for (unsigned i = 0; i < j->o->numjobs; i++)
		pthread_join(j->workers[i].thread, NULL);
	cpustat_read(&j->cpu1);
	j->t_meas_end = 0;
	for (unsigned i = 0; i < j->o->numjobs; i++) {
		struct worker *w = &j->workers[i];
		if (w->t_end > j->t_meas_end)
			j->t_meas_end = w->t_end;
		if (w->err && !j->err) {
			j->err = w->err;
			str_copy(j->errmsg, sizeof(j->errmsg), w->errmsg);
		}
	}
	pthread_barrier_destroy(&j->ready);
	pthread_barrier_destroy(&j->go);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	j->finished = 1;
}

void job_free(struct job *j)
{
	steady_free(j);
	if (!j->workers)
		return;
	for (unsigned i = 0; i < j->o->numjobs; i++) {
		struct worker *w = &j->workers[i];
		for (unsigned k = 0; w->reqs && k < w->depth; k++)
			free(w->reqs[k].buf);
		free(w->reqs);
		free(w->freelist);
		free(w->done);
		free(w->iv_hist);
		free(w->schedhist);
		free(w->series);
		free(w->hpool);
		mf_worker_free(w);
		free(w->map);
		verify_worker_free(w);
		logs_worker_free(w);
		cmdprio_worker_free(w);
		pat_free(w);
	}
	verify_job_free(j);
	free(j->workers);
	j->workers = NULL;
	mf_job_free(j);
	free(j->pool);
	j->pool = NULL;
}
