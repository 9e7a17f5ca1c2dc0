/* fio's dedupe options (src/dedupe.c): the write buffers' duplicate fraction. */
#ifndef IOWATT_DEDUPE_H
#define IOWATT_DEDUPE_H

#include <stdint.h>

#include "optable.h"

struct options;
struct worker;

extern const struct opt_choice dedupe_mode_choices[]; /* repeat, working_set */
void dedupe_finalize(struct options *o);              /* checks that need no target (exit 2) */
void dedupe_run_setup(const struct options *jobs, int njobs); /* run-wide thread numbers */
int dedupe_worker_init(struct worker *w);             /* 0 or -ENOMEM; nothing without dedupe */
void dedupe_worker_exit(struct worker *w);
void dedupe_fill(struct worker *w, unsigned char *b, uint32_t len); /* the next write buffer */

#endif
