/* fio's job scheduling: which jobs run together, when each starts, what stops them.
 *
 * - Reporting groups (groupid): a job with stonewall or new_group starts a new one when the
 *   current one has jobs (fio's rule: on the first job neither changes anything).
 * - Start groups: a job with stonewall waits for every job before it; the jobs between two
 *   stonewalls run together.
 * - Every job's file is laid out before the first job starts (job order, fio's create_serialize);
 *   then, start group by start group, every job that may start is made ready (threads, buffers,
 *   engine) and all of them are released at one instant (one t0 for all).
 * - create_serialize=0 (a single file, not a device): the job's file is checked (size, offset,
 *   free space, verify) and laid out when its start group starts, after the earlier groups' I/O,
 *   before any job of the group is released (fio: in the job's own thread, before the group's
 *   start). A check that fails then is that job's error (exit 1, the earlier results printed),
 *   not a usage error: fio's examples/surface-scan.fio reads the file its first group filled.
 * - wait_for=NAME: the job starts when every job named NAME (defined before it) has ended.
 * - exitall: as fio, a run-wide switch. When any job of the run has it, the end of any clone of
 *   any job stops every running job of that clone's reporting group (fio 3.33's
 *   exitall_on_terminate). What it stops is the ended job's exit_what (fio's fio_terminate_threads):
 *   `group` its reporting group, `stonewall` every running job (the next start group still runs),
 *   `all` every job, also those not started yet (each starts stopped: no I/O, reported with zeros).
 * - exitall_on_error: when the job ends in error, every running job is stopped. As fio 3.33 does,
 *   the start groups after it still run (fio's terminate flag does not outlive the running jobs).
 * - startdelay: each clone waits that long (or a draw from LO-HI) after the start (worker.c).
 */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"
#include "multifile.h"
#include "output.h"
#include "verify.h"

extern sem_t g_wake;

static void deferred_checks(void *arg)
{
	struct job *j = arg;
	target_probe(&j->tgt, j->o);
	if (j->tgt.is_blk)
		die_usage("filename", "'%s' became a block device during the run", j->o->filename);
	target_validate(j->o, &j->tgt);
	verify_validate(j->o, &j->tgt);
}

/* create_serialize=0: the checks main.c left for now, then the layout */
static void deferred_setup(struct job *j)
{
	struct parse_error e;
	if (parse_guarded(deferred_checks, j, &e)) {
		j->err = -EINVAL;
		str_copy(j->errmsg, sizeof(j->errmsg), e.msg);
		return;
	}
	(void)job_layout(j);
}

void sched_assign_groups(struct job *jobs, int njobs)
{
	int gid = 0, sg = 0, in_group = 0;
	for (int i = 0; i < njobs; i++) {
		const struct options *o = jobs[i].o;
		if ((o->stonewall || o->new_group) && in_group) {
			gid++;
			in_group = 0;
		}
		if (o->stonewall && i > 0)
			sg++;
		jobs[i].groupid = gid;
		jobs[i].sched_group = sg;
		in_group++;
		if (!o->wait_for[0])
			continue;
		/* as fio: the waitee must be defined before the waiter (no forward references) */
		int found = 0;
		for (int k = 0; k < i && !found; k++)
			found = !strcmp(jobs[k].o->name, o->wait_for);
		if (!found)
			die_usage("wait_for", "job '%s' waits for '%s', which is not a job defined before it", o->name,
				  o->wait_for);
		if (!strcmp(o->wait_for, o->name))
			die_usage("wait_for", "job '%s' waits for itself", o->name);
	}
}

/* a clone whose I/O is over (worker.c sets `ended` before the engine's teardown) */
static int job_any_ended(const struct job *j)
{
	for (unsigned i = 0; i < j->o->numjobs; i++)
		if (atomic_load(&j->workers[i].ended))
			return 1;
	return 0;
}

/* the running jobs of a reporting group (groupid < 0: of the run) end at their next I/O */
static void stop_jobs(struct job *jobs, int njobs, int groupid)
{
	for (int i = 0; i < njobs; i++)
		if ((groupid < 0 || jobs[i].groupid == groupid) && jobs[i].started && !jobs[i].finished)
			atomic_store(&jobs[i].stop, 1);
}

/* a job that will not run (any more): ended, failed before its threads, or never to start */
static int job_over(const struct job *j)
{
	return j->finished || (!j->started && (j->launched || j->err));
}

static int g_exit_all; /* exit_what=all: a job's end stopped the run (later jobs start stopped) */

static int may_start(const struct job *jobs, int i)
{
	const struct job *j = &jobs[i];
	if (j->launched || j->err || g_stop)
		return 0;
	if (!j->o->wait_for[0])
		return 1;
	for (int k = 0; k < i; k++)
		if (!strcmp(jobs[k].o->name, j->o->wait_for) && !job_over(&jobs[k]))
			return 0;
	return 1;
}

/* something to do: a job whose clones all ended, with exitall a clone that ended, or a
 * progress tick */
static int event_pending(struct job *jobs, int first, int last, int exitall)
{
	for (int i = first; i < last; i++) {
		struct job *j = &jobs[i];
		if (!j->started || j->finished)
			continue;
		if (job_all_finished(j) || (exitall && !atomic_load(&j->stop) && job_any_ended(j)))
			return 1;
	}
	return 0;
}

static void wait_event(struct job *jobs, int first, int last, int exitall, struct runcfg *cfg,
		       uint64_t *next)
{
	while (!event_pending(jobs, first, last, exitall)) {
		struct timespec ts = mono_deadline(*next);
		sem_clockwait(&g_wake, CLOCK_MONOTONIC, &ts);
		uint64_t now = now_ns();
		if (now >= *next) {
			for (int i = first; i < last; i++) /* steady state: one sample a second (steady.c) */
				if (jobs[i].started && !jobs[i].finished && !job_all_finished(&jobs[i]))
					steady_tick(&jobs[i], now);
			if (cfg->progress)
				for (int i = first; i < last; i++)
					if (jobs[i].started && !jobs[i].finished && !job_all_finished(&jobs[i]))
						job_progress(&jobs[i], now);
			output_eta_tick(cfg, jobs, first, last, now); /* --eta (src/output.c) */
			*next += 1000000000ull;
			if (*next < now)
				*next = now + 1000000000ull;
		}
	}
}

void sched_run(struct job *jobs, int njobs, struct runcfg *cfg)
{
	/* every file first, in job order: no job's layout runs beside another job's I/O */
	for (int i = 0; i < njobs && !g_stop; i++)
		if (!jobs[i].deferred && job_layout(&jobs[i]) < 0 && !jobs[i].err)
			break; /* interrupted */
	int exitall = 0; /* fio's exitall_on_terminate: one job's option applies to the run */
	for (int i = 0; i < njobs; i++)
		exitall |= jobs[i].o->exitall;
	int *batch = calloc(njobs > 0 ? (size_t)njobs : 1, sizeof(*batch));
	if (!batch)
		die_code(EXIT_FAIL, "out of memory");
	for (int first = 0; first < njobs && !g_stop;) {
		int last = first + 1;
		while (last < njobs && jobs[last].sched_group == jobs[first].sched_group)
			last++;
		for (int i = first; i < last && !g_stop; i++) /* create_serialize=0 */
			if (jobs[i].deferred && !jobs[i].err)
				deferred_setup(&jobs[i]);
		uint64_t next = now_ns() + 1000000000ull;
		for (;;) {
			/* everything that may start now: made ready, then released at one instant */
			int nb = 0;
			for (int i = first; i < last; i++) {
				if (!may_start(jobs, i))
					continue;
				jobs[i].launched = 1;
				job_start(&jobs[i]);
				if (g_exit_all) /* fio marks every job terminated: it ends before its first I/O */
					atomic_store(&jobs[i].stop, 1);
				if (jobs[i].started)
					batch[nb++] = i;
			}
			uint64_t t0 = now_ns();
			for (int k = 0; k < nb; k++)
				job_go(&jobs[batch[k]], t0);
			int running = 0;
			for (int i = first; i < last; i++)
				running += jobs[i].started && !jobs[i].finished;
			if (!running)
				break; /* what is left waits for a job that will never end here */
			wait_event(jobs, first, last, exitall, cfg, &next);
			for (int i = first; i < last; i++) {
				struct job *j = &jobs[i];
				if (!j->started || j->finished)
					continue;
				if (exitall && job_any_ended(j)) {
					/* fio's exit_what of the job that ended: its group, the running jobs, or all */
					stop_jobs(jobs, njobs, j->o->exit_what >= 2 ? -1 : j->groupid);
					g_exit_all |= j->o->exit_what == 3;
				}
				if (!job_all_finished(j))
					continue;
				job_wait(j);
				char msg[sizeof(j->errmsg)];
				int r = j->err ? 0 : j->mf ? mf_verify(j, msg, sizeof(msg)) : target_verify(&j->tgt, msg, sizeof(msg));
				if (r == 0 && !j->err)
					r = logs_error(j, msg, sizeof(msg)); /* a log that could not be written */
				if (r < 0) {
					j->err = r;
					str_copy(j->errmsg, sizeof(j->errmsg), msg);
				}
				if (j->err && j->o->exitall_on_error)
					stop_jobs(jobs, njobs, -1);
			}
		}
		first = last;
	}
	free(batch);
}
