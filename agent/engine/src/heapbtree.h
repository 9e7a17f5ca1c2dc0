/* iowatt-engine --heap-btree: heap file vs B+tree, inserts and point queries with a buffer pool
 * holding a fraction of the data pages (the P3608 report's § 1.4, Table 3). */
#ifndef IOWATT_HEAPBTREE_H
#define IOWATT_HEAPBTREE_H

#include <signal.h>

/* 1 when argv asks for the heap/B-tree mode (a --heap-btree flag). */
int heapbtree_requested(int argc, char **argv);
/* Parse the flags, run the sweep, print the report; returns the exit code (0 ok, 1 run-time
 * failure such as ENOSPC; usage errors exit 2 from inside). */
int heapbtree_main(int argc, char **argv, const volatile sig_atomic_t *signo);

/* Only the flags' parse and checks (exits 2 on bad input; parse_guarded turns that into a
 * return): the fuzz target's entry. */
void heapbtree_parse_args(int argc, char **argv);

struct jw;
/* --limits' "heap_btree": the flags' ranges, defaults and choices (src/limits.c) */
void heapbtree_limits(struct jw *w);

#endif
