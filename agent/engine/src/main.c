/* iowatt-engine: run fio-style jobs and print one JSON document (fio json/json+ superset). */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "iowatt.h"
#include "fileset.h"
#include "heapbtree.h"
#include "multifile.h"
#include "output.h"
#include "postmark.h"
#include "verify.h"
#include "dedupe.h"

sem_t g_wake;
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
	g_stop = 1;
	g_signal = sig;
	sem_post(&g_wake);
}

static void cleanup_at_exit(void)
{
	(void)target_cleanup(); /* idempotent: after main's own call it has nothing left to do */
}

int main(int argc, char **argv)
{
	struct runcfg cfg = { 0 };
	sem_init(&g_wake, 0, 0);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	/* the first SIGINT/SIGTERM stops the run (the workers see g_stop within STOP_SLICE_NS, the
	 * JSON is printed); the same signal again takes its default action: the process ends at once */
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (postmark_requested(argc, argv)) /* --postmark=FILE: src/postmark.c */
		return postmark_main(argc, argv, &g_signal);
	if (fileset_requested(argc, argv)) /* --vdbench=FILE: src/fileset.c */
		return fileset_main(argc, argv, &g_signal);
	if (heapbtree_requested(argc, argv)) /* --heap-btree: src/heapbtree.c */
		return heapbtree_main(argc, argv, &g_signal);

	parse_cmdline(argc, argv, &cfg);

	struct job *jobs = calloc((size_t)cfg.njobs, sizeof(*jobs));
	if (!jobs)
		die_code(EXIT_FAIL, "out of memory");
	/* validate everything before the first I/O */
	for (int i = 0; i < cfg.njobs; i++) {
		jobs[i].o = &cfg.jobs[i];
		jobs[i].index = i;
		jobs[i].fd = -1;
	}
	sched_assign_groups(jobs, cfg.njobs);
	dedupe_run_setup(cfg.jobs, cfg.njobs); /* run-wide thread numbers (src/dedupe.c) */
	for (int i = 0; i < cfg.njobs; i++) {
		struct job *j = &jobs[i];
		numa_check(j->o); /* numa_cpu_nodes, numa_mem_policy against this host (src/numa.c) */
		const struct engine_ops *ops = engine_find(j->o->ioengine);
		if (!engine_built_in(j->o->ioengine))
			die_code(EXIT_UNSUPPORTED, "ioengine: %s is not built in (rebuild with its development headers)",
				 j->o->ioengine);
		if (ops->probe) {
			int r = ops->probe();
			if (r < 0)
				die_code(EXIT_UNSUPPORTED, "ioengine: %s is not available on this kernel: %s", ops->name,
					 strerror(-r));
		}
		if (mf_wanted(j->o)) { /* fio's generated names, file lists, filesize (multifile.c) */
			mf_job_setup(j);
		} else {
			mf_apply_directory(j->o);
			target_probe(&j->tgt, j->o);
			/* create_serialize=0: a file's checks that depend on what earlier groups did
			 * to it wait for the job's start group (sched.c); a device's run now */
			j->deferred = !j->o->create_serialize && !j->tgt.is_blk;
			if (!j->deferred)
				target_validate(j->o, &j->tgt);
		}
		if (!j->deferred)
			verify_validate(j->o, &j->tgt);
		for (int k = 0; k < i; k++)
			if (!strcmp(cfg.jobs[k].filename, j->o->filename) && jobs[k].tgt.is_blk != j->tgt.is_blk)
				die_usage("filename", "'%s' changed type between jobs", j->o->filename);
	}

	/* --output=FILE (and the log files): created now, new files only, before the first I/O */
	output_open(&cfg);
	logs_create(jobs, cfg.njobs);
	/* from here on the run may create files: unlink=1 removes them on every exit path */
	atexit(cleanup_at_exit);

	/* exclusive claims on written block devices, held until exit: one per device, its
	 * descriptor shared by the jobs that write it (their trims go through it: target.c) */
	for (int i = 0; i < cfg.njobs; i++) {
		jobs[i].excl_fd = -1;
		if (!jobs[i].tgt.is_blk || !rw_writes(jobs[i].o->rw))
			continue;
		int first = i, trims = 0;
		for (int k = cfg.njobs - 1; k >= 0; k--)
			if (jobs[k].tgt.is_blk && rw_writes(jobs[k].o->rw) && !strcmp(jobs[k].o->filename, jobs[i].o->filename)) {
				first = k;
				trims |= rw_trims(jobs[k].o->rw);
			}
		jobs[i].excl_fd = first < i ? jobs[first].excl_fd : target_claim(&jobs[i].tgt, trims);
	}

	int allow_tsc = 1;
	for (int i = 0; i < cfg.njobs; i++)
		allow_tsc &= !cfg.jobs[i].clock_gettime;
	clock_init(allow_tsc);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct cpustat cpu0, cpu1;
	cpustat_read(&cpu0);
	/* disk counters for each distinct device */
	int ndisks = 0;
	struct diskstat *d0 = calloc((size_t)cfg.njobs, sizeof(*d0)), *d1 = calloc((size_t)cfg.njobs, sizeof(*d1));
	if (!d0 || !d1)
		die_code(EXIT_FAIL, "out of memory");
	for (int i = 0; i < cfg.njobs; i++) {
		const char *dn = jobs[i].tgt.devname;
		int seen = !dn[0];
		for (int k = 0; k < ndisks && !seen; k++)
			seen = !strcmp(d0[k].name, dn);
		if (!seen)
			diskstat_read(dn, &d0[ndisks++]);
	}
	uint64_t wall0 = now_ns();

	int rc = EXIT_OK;
	sched_run(jobs, cfg.njobs, &cfg); /* src/sched.c: layout, groups, starts, stops */
	for (int i = 0; i < cfg.njobs; i++)
		if (jobs[i].unsupported)
			rc = EXIT_UNSUPPORTED;
	uint64_t wall1 = now_ns();
	cpustat_read(&cpu1);
	for (int k = 0; k < ndisks; k++)
		diskstat_read(d0[k].name, &d1[k]);
	/* unlink=1: files this run created go now (verified; outside the measured counters); a
	 * refusal fails the run */
	int cleanup_failed = target_cleanup() < 0;

	struct jw w;
	char *docbuf;
	size_t doclen;
	FILE *doc = output_doc_begin(&cfg, &docbuf, &doclen); /* printed in each --output-format below */
	jw_init(&w, doc);
	jw_obj(&w, NULL);
	emit_preamble(&w, &tv);
	jw_obj(&w, "global options");
	for (int i = 0; i < cfg.global->ngiven; i++)
		jw_str(&w, cfg.global->given_name[i], cfg.global->given_val[i]);
	jw_obj_end(&w);
	jw_arr(&w, "jobs");
	report_jobs(&w, jobs, cfg.njobs, cfg.jsonplus);
	for (int i = 0; i < cfg.njobs; i++)
		if (jobs[i].err && rc == EXIT_OK)
			rc = EXIT_FAIL;
	jw_arr_end(&w);
	jw_arr(&w, "disk_util");
	for (int k = 0; k < ndisks; k++)
		emit_disk_util(&w, &d0[k], &d1[k], wall1 - wall0);
	jw_arr_end(&w);
	jw_obj(&w, "iowatt");
	emit_iowatt_head(&w, NULL, g_stop != 0, g_signal);
	if (cfg.njobs)
		target_facts(&w, &jobs[0].tgt);
	cpustat_emit(&w, "system_cpu", &cpu0, &cpu1);
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (output_finish(&cfg, doc, &docbuf, &doclen) < 0 && rc == EXIT_OK)
		rc = EXIT_FAIL;
	for (int i = 0; i < cfg.njobs; i++)
		if (jobs[i].err && jobs[i].errmsg[0])
			warnmsg("%s: %s", jobs[i].o->name, jobs[i].errmsg);
	if (cleanup_failed && rc == EXIT_OK)
		rc = EXIT_FAIL;
	logs_close_all(jobs, cfg.njobs);
	for (int i = 0; i < cfg.njobs; i++)
		job_free(&jobs[i]);
	free(jobs);
	free(d0);
	free(d1);
	free(cfg.jobs);
	free(cfg.global);
	sem_destroy(&g_wake);
	return rc;
}
