/* fio's timing, QoS and priority options (pace.c) and steady-state detection (steady.c): the
 * option fields (one member of struct options), the per-worker state (one member of struct
 * worker) and the narrow hooks the worker loop, the main loop and the report call. */
#ifndef IOWATT_PACE_H
#define IOWATT_PACE_H

#include <stdint.h>

enum ss_kind { SS_NONE, SS_IOPS, SS_IOPS_SLOPE, SS_BW, SS_BW_SLOPE };

#define PACE_MAX_SS_SECONDS 86400u  /* ss_dur: one sample a second, 16 B each, at most a day */

struct pace_opts {
	/* thinktime family (fio: plain numbers are microseconds, thinktime_iotime seconds) */
	uint64_t think_ns, think_spin_ns, think_iotime_ns;
	unsigned think_blocks;          /* default 1 */
	int think_blocks_set;           /* given: with thinktime_iotime both triggers count */
	int think_issue;                /* thinktime_blocks_type=issue (default complete) */
	/* rates, per direction (0 read, 1 write, 2 trim: parsed, never paced, see pace_parse_rate):
	 * bytes/s and IOPS caps, their minimums */
	uint64_t rate[3], rate_min[3], rate_iops[3], rate_iops_min[3];
	int poisson;                    /* rate_process=poisson */
	unsigned rate_cycle_ms;         /* default 1000 */
	int offload;                    /* io_submit_mode=offload: a pool of iodepth submitters (offload.c) */
	/* flow control */
	unsigned flow, flow_id;
	uint64_t flow_sleep_us;
	/* QoS */
	uint64_t lat_target_ns, lat_window_ns, max_lat_ns[2];
	double lat_pct;                 /* default 100 */
	/* steady state (steady.c) */
	int ss_kind;
	int ss_pct;                     /* the limit is a percentage of the mean */
	double ss_limit;
	uint64_t ss_dur_ns, ss_ramp_ns;
	/* priorities */
	unsigned prio, prioclass;
	int prio_set, prioclass_set;
	int nice;
	/* measurements fio can switch off (gtod_reduce sets the first three) */
	int gtod_reduce, disable_lat, disable_clat, disable_slat, disable_bw;
};

/* a flow_id group shared by the jobs that name it (pace.c) */
struct pace_flow;

struct pace_state {
	int on;                         /* anything to do per I/O (the hooks are skipped otherwise) */
	uint64_t bps[2];                /* rate per direction in bytes/s (rate, or rate_iops x bs), 0 = none */
	uint64_t t0;                    /* the schedule's origin (the job's start) */
	uint64_t sched_bytes[2];        /* linear: bytes scheduled so far per direction */
	uint64_t next[2];               /* poisson: the next intended start per direction */
	uint64_t prng;                  /* poisson's own generator (the offsets keep theirs) */
	struct io_req *held;            /* async: generated, not yet due (popped from the free list) */
	/* thinktime */
	uint64_t issued, completed, think_last, think_last_t, think_until;
	uint64_t think_mark;            /* the count when a stall was decided (it drains first) */
	int think_draining;
	/* rate_min / rate_iops_min */
	uint64_t min_t, min_bytes[2], min_ios[2];
	/* flow */
	struct pace_flow *flow;
	uint64_t flow_count;
	/* latency_target: fio's search for the highest queue depth meeting the target */
	unsigned qd, qd_low, qd_high;
	uint64_t lat_t, lat_ios, lat_failed, lat_done_ios;
	int end_run, quiesce, reset_pending, done;
};

struct worker;
struct job;
struct io_req;
struct jw;
struct options;
struct opt_def;

/* the options' parsers and echoes (rows of opts[] in options.c) */
void pace_parse_rate(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_rate(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_usec(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_u64(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_sec(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_parse_max_latency(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_max_latency(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_pct(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_pct(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_ss(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_ss(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_nice(void *base, const struct opt_def *d, const char *name, const char *val);
void pace_echo_nice(struct jw *w, const struct options *o, const struct opt_def *d);
void pace_parse_refused(void *base, const struct opt_def *d, const char *name, const char *val);
/* options_finalize's checks of this family (exit 2 naming the option) */
void pace_finalize(struct options *o);

/* worker hooks (worker.c) */
enum { PACE_GO, PACE_WAIT, PACE_STOP };
void pace_worker_init(struct worker *w);     /* in the worker's thread, before the start barrier */
void pace_worker_exit(struct worker *w);
/* Before issuing r (generated): PACE_GO (r may go now; its intended start is set), PACE_WAIT
 * until *until (an absolute now_ns() time; 0 = until a completion: only while I/Os are in
 * flight), or PACE_STOP (the job is done: latency target found). */
int pace_gate(struct worker *w, struct io_req *r, uint64_t now, uint64_t *until);
/* a mixed job's direction for its next I/O: fio's rate_ddir (the other direction when this one
 * is ahead of its rate and the other is not, or the one due first) */
int pace_ddir(struct worker *w, int ddir);
/* the synchronous loop's wait: 1 = stop (deadline, signal, error, done) */
int pace_wait_sync(struct worker *w, struct io_req *r, uint64_t deadline);
/* after the job's last I/O: the thinktime stall fio takes after it, when one is due */
void pace_final_stall(struct worker *w);
/* every successful completion (ramp included): thinktime counts, max_latency, latency_target,
 * rate_min */
void pace_complete(struct worker *w, const struct io_req *r, uint64_t t_done);
int pace_rated(const struct options *o);

/* report hooks (report.c) */
struct dstat;
void pace_mask_stats(const struct options *o, struct dstat *d); /* disable_*: what fio zeroes */
void pace_report_latency(struct jw *w, const struct job *j, const struct worker *wk);   /* latency_depth, _target, ... */
void pace_report_load(struct jw *w, const struct options *o); /* iowatt: load_model, rates */

/* steady state (steady.c): the main thread samples each running job once a second */
void steady_tick(struct job *j, uint64_t now);
void steady_report(struct jw *w, const struct job *j);  /* fio's "steadystate" object */
void steady_free(struct job *j);

#endif
