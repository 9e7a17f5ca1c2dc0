/* fio's per-command priorities (cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit: its
 * io_uring and libaio engine options) and the per-priority latency statistics fio reports with
 * them (each direction's "prios" list). */
#ifndef IOWATT_CMDPRIO_H
#define IOWATT_CMDPRIO_H

#include <stdint.h>

#define CMDPRIO_MAX_ENTRIES 32 /* cmdprio_bssplit entries per direction (as bssplit's max_bssplit) */
#define CMDPRIO_MAX_PRIOS 8    /* distinct priorities per direction, the job's own included: each
				* keeps a latency histogram per clone (--limits: max_cmdprio_prios) */
#define CMDPRIO_ALL 32         /* every priority value there is: 4 classes x 8 levels */

struct cmdprio_entry {
	uint64_t bs;
	unsigned perc;
	int prio;                      /* class << 13 | level, or -1: cmdprio_class / cmdprio's */
};

struct cmdprio_opts {
	unsigned given;                /* bit per option given: 1 percentage, 2 class, 4 level, 8 bssplit */
	unsigned perc[2];              /* cmdprio_percentage, read and write */
	unsigned cls[2], lvl[2];       /* cmdprio_class (0 = not given: realtime, fio's), cmdprio */
	unsigned nent[2];              /* cmdprio_bssplit: entries with a percentage, sorted by bs */
	struct cmdprio_entry ent[2][CMDPRIO_MAX_ENTRIES];
	/* resolved by cmdprio_finalize: the priorities of each direction, [0] the job's own
	 * (prio / prioclass, 0 without them), in fio's order; which one each choice takes */
	int on;
	unsigned nprios[2];
	uint16_t prios[2][CMDPRIO_MAX_PRIOS];
	uint8_t ent_idx[2][CMDPRIO_MAX_ENTRIES];
	uint8_t perc_idx[2];
};

struct options;
struct opt_def;
struct jw;
struct worker;
struct io_req;
struct member;

void cmdprio_parse_rw(void *base, const struct opt_def *d, const char *name, const char *val);
void cmdprio_parse_bssplit(void *base, const struct opt_def *d, const char *name, const char *val);
void cmdprio_echo(struct jw *w, const struct options *o, const struct opt_def *d);
void cmdprio_echo_bssplit(struct jw *w, const struct options *o, const struct opt_def *d);
/* checks that need the whole job (the ioengine, mutual exclusion) and the priorities' order */
void cmdprio_finalize(struct options *o);
/* per clone: its generator and statistics (NULL without cmdprio); 0 or -ENOMEM */
int cmdprio_worker_init(struct worker *w);
void cmdprio_worker_free(struct worker *w);
void cmdprio_worker_reset(struct worker *w);
/* before an I/O is queued: its priority (r->ioprio, r->prio_idx), fio's draw */
void cmdprio_pick(struct worker *w, struct io_req *r);
/* a measured completion: its clat (or lat with lat_percentiles=1) under its priority */
void cmdprio_account(struct worker *w, const struct io_req *r, uint64_t clat, uint64_t lat);

/* an entry of "jobs": its members' priorities merged by value (NULL when none has cmdprio) */
struct cmdprio_merged;
struct cmdprio_merged *cmdprio_merge(struct worker *const *ws, const struct options *const *os, const int *sync,
				     unsigned n);
/* the direction's "prios" list, when two priorities or more have samples (fio 3.33) */
void cmdprio_emit(struct jw *w, const struct cmdprio_merged *m, int ddir, const struct options *o, int jsonplus);
void cmdprio_merged_free(struct cmdprio_merged *m);

#endif
