/* fio's dedupe options (HOWTO "Buffers and memory"): dedupe_percentage, dedupe_mode,
 * dedupe_working_set_percentage, dedupe_global.
 *
 * With dedupe_percentage=P each write buffer is, with probability P %, a copy of a buffer written
 * before (or to be written), else a new unique one; the decision is per buffer (a whole block is
 * duplicate or not) and its content otherwise follows buffer_compress_percentage as any buffer's.
 * As fio, a buffer's content is a function of one 64-bit seed (here: xoshiro256** seeded with it,
 * 8 bytes a draw, each 512-byte chunk P % zeros first under buffer_compress_percentage):
 *  - unique buffer k of thread t has seed U(t, k), k = 0, 1, 2, ... (a counter: no memory);
 *  - repeat (fio's default): a duplicate takes the seed of the thread's next unique buffer without
 *    using it up (fio copies the generator state its last unique write left, which is exactly
 *    that); so the duplicate equals the unique write before or after it;
 *  - working_set: the working set is the first N unique buffers, N = size x
 *    dedupe_working_set_percentage % / the smallest write block; a duplicate takes one of them
 *    at random (fio: "use the initial unique write buffers as its working set");
 *  - dedupe_global: a working set is cut into T segments of N / T (T = every thread of the run,
 *    fio's thread_number); segment g holds the first unique buffers of thread (t + g) mod T, so
 *    jobs write each other's blocks ("spread evenly between participating jobs", fio's dedupe.c);
 *  - P = 100: every buffer is the thread's first one (fio keeps its generator state still).
 * Nothing is allocated per buffer or per working-set entry. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"
#include "dedupe.h"

struct dedupe_w {
	struct rng pick;                /* duplicate or not (fio's dedupe_state) */
	struct rng ws;                  /* which working-set entry (fio's working-set index state) */
	uint64_t n;                     /* unique buffers generated so far */
	uint64_t nws;                   /* working-set entries (working_set mode) */
	unsigned self, nthreads;        /* this thread's number in the run, threads in the run */
};

static unsigned first_thread[MAX_JOBS]; /* run-wide number of each job's first clone */
static unsigned run_threads;
static uint64_t run_salt;

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* the seed of thread t's unique buffer k */
static uint64_t useed(unsigned t, uint64_t k)
{
	return mix64(mix64(run_salt ^ (0x646564757065ull + t)) + k * 0x9e3779b97f4a7c15ull);
}

const struct opt_choice dedupe_mode_choices[] = { { "repeat", 0 }, { "working_set", 1 }, { NULL, 0 } };

/* fio's min_bs[DDIR_WRITE]: the working set is counted in these */
static uint64_t write_min_bs(const struct options *o)
{
	uint64_t m = o->bsrange[1][0] ? o->bsrange[1][0] : o->nbssplit[1] ? opt_bssplit_min(o, 1) : o->bs[1];
	return m && m != UINT64_MAX ? m : 1;
}

void dedupe_finalize(struct options *o)
{
	if (!o->dedupe_pct)
		return;
	if (o->zero_buffers)
		die_usage("dedupe_percentage", "not with zero_buffers: every buffer would be the same zeros");
	if (o->verify)
		die_usage("dedupe_percentage", "not with verify: verify writes its own header and checksum in each block");
	if (o->dedupe_mode == 1 && o->dedupe_pct < 100) {
		if (!o->size_set)
			die_usage("dedupe_working_set_percentage", "dedupe_mode=working_set needs size (fio's working set is "
				  "a percentage of it)");
		if (o->nrfiles > 1 || strchr(o->filename, ':'))
			die_usage("dedupe_working_set_percentage", "dedupe_mode=working_set supports one file per job (as fio)");
		if ((unsigned __int128)o->size * o->dedupe_ws_pct / 100 < write_min_bs(o))
			die_usage("dedupe_working_set_percentage", "the working set (%u %% of size) is smaller than one block",
				  o->dedupe_ws_pct);
	}
	/* as fio: dedupe turns refill_buffers on, or every buffer would be the same */
	o->refill_buffers = 1;
}

void dedupe_run_setup(const struct options *jobs, int njobs)
{
	unsigned t = 0;
	int salted = 0;
	for (int i = 0; i < njobs && i < MAX_JOBS; i++) {
		first_thread[i] = t;
		t += jobs[i].numjobs;
		if (jobs[i].dedupe_pct && !salted) { /* one salt for the run: global working sets match */
			run_salt = jobs[i].randseed;
			salted = 1;
		}
	}
	run_threads = t;
}

int dedupe_worker_init(struct worker *w)
{
	const struct options *o = w->job->o;
	if (!o->dedupe_pct)
		return 0;
	struct dedupe_w *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->self = first_thread[w->job->index < MAX_JOBS ? w->job->index : 0] + w->id;
	d->nthreads = run_threads > d->self ? run_threads : d->self + 1;
	rng_seed(&d->pick, useed(d->self, UINT64_MAX));
	rng_seed(&d->ws, useed(d->self, UINT64_MAX - 1));
	if (o->dedupe_mode == 1) {
		d->nws = (uint64_t)((unsigned __int128)o->size * o->dedupe_ws_pct / 100 / write_min_bs(o));
		if (!d->nws)
			d->nws = 1;
	}
	w->dedupe = d;
	return 0;
}

void dedupe_worker_exit(struct worker *w)
{
	free(w->dedupe);
	w->dedupe = NULL;
}

static uint64_t ws_seed(const struct options *o, const struct dedupe_w *d, uint64_t i)
{
	if (!o->dedupe_global)
		return useed(d->self, i);
	uint64_t per = d->nws / d->nthreads ? d->nws / d->nthreads : 1;
	uint64_t g = i / per;
	if (g >= d->nthreads) /* the remainder stays with the last segment's thread, as fio's loop */
		g = d->nthreads - 1;
	return useed((unsigned)((d->self + g) % d->nthreads), i - g * per);
}

static uint64_t next_seed(struct worker *w)
{
	const struct options *o = w->job->o;
	struct dedupe_w *d = w->dedupe;
	if (o->dedupe_pct >= 100)
		return useed(d->self, 0);
	if (1 + rng_below(&d->pick, 100) <= o->dedupe_pct) {
		if (o->dedupe_mode == 1)
			return ws_seed(o, d, rng_below(&d->ws, d->nws));
		return useed(d->self, d->n); /* repeat: the next unique buffer, not used up */
	}
	return useed(d->self, d->n++);
}

void dedupe_fill(struct worker *w, unsigned char *b, uint32_t len)
{
	const struct options *o = w->job->o;
	struct rng g;
	rng_seed(&g, next_seed(w));
	uint32_t z = 512u * o->compress_pct / 100;
	for (uint32_t s = 0; s < len; s += 512) {
		uint32_t n = len - s < 512 ? len - s : 512, zz = z < n ? z : n;
		memset(b + s, 0, zz);
		for (uint32_t i = zz; i < n; i += 8) {
			uint64_t v = rng_next(&g);
			memcpy(b + s + i, &v, n - i < 8 ? n - i : 8);
		}
	}
}
