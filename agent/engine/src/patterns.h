/* fio's I/O patterns beyond plain sequential and random offsets (src/patterns.c): rw=X:N (holes,
 * backwards strides, a new random offset every N I/Os) with rw_sequencer, bsrange / bs_unaligned,
 * blockalign, the zoned and zoned_abs distributions, random_generator, percentage_random and
 * number_ios. The worker hands a job to pat_next() only when one of them is in use, so the plain
 * offset generator (worker.c) keeps its speed. */
#ifndef IOWATT_PATTERNS_H
#define IOWATT_PATTERNS_H

#include "iowatt.h"
#include "optable.h"

/* option rows (opts[] in options.c) */
void pat_rw_modifier(struct options *o, const char *name, const char *val, const char *mod);
void pat_echo_rw_modifier(struct jw *w, const struct options *o);
void pat_parse_bsrange(void *base, const struct opt_def *d, const char *name, const char *val);
void pat_echo_bsrange(struct jw *w, const struct options *o, const struct opt_def *d);
void pat_parse_blockalign(void *base, const struct opt_def *d, const char *name, const char *val);
void pat_echo_blockalign(struct jw *w, const struct options *o, const struct opt_def *d);
void pat_parse_pct_random(void *base, const struct opt_def *d, const char *name, const char *val);
void pat_echo_pct_random(struct jw *w, const struct options *o, const struct opt_def *d);
/* random_distribution=zoned:A/S:A/S... (abs: zoned_abs, S a size) */
void pat_parse_zoned(struct options *o, const char *name, const char *val, const char *list, int abs);
void pat_echo_zones(struct jw *w, const struct options *o);
void pat_finalize(struct options *o); /* checks that need no target (options_finalize) */

/* worker side */
int pat_active(const struct options *o);
int pat_setup(struct worker *w);                   /* 0 or -errno; sets w->pat when active */
int pat_next(struct worker *w, struct io_req *r);  /* direction, size, offset; 1 = no more I/O */
void pat_free(struct worker *w);
struct patgen *pat_clone(const struct patgen *p); /* verify's replay cursor: a copy, or NULL (no memory) */
/* verify with a hole pattern (verify.c): did the pass end (with I/O in it), the passes started;
 * the next pass; the cursor's copy of the writer's state */
int pat_pass_ended(const struct patgen *p, uint64_t *passes);
void pat_restart(struct worker *w);
void pat_copy(struct patgen *dst, const struct patgen *src);

/* from worker.c: the plain generator's pieces the patterns reuse */
uint64_t worker_pick_bs(struct worker *w, int ddir);
uint64_t worker_rand_off(struct worker *w, uint64_t *bs, int ddir);
#define OFF_PASS_END UINT64_MAX /* worker_rand_off: fio would end the pass here (map_claim_units) */
int pat_trims_only(const struct options *o); /* trims of the writes' sizes and offsets, nothing else */
/* a size drawn from the direction's bsrange, as fio (pick_size) */
uint64_t pat_bsrange_draw(struct worker *w, int d);

#endif
