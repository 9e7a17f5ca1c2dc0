/* iowatt-engine --postmark=FILE: PostMark 1.5's small-file benchmark, run natively. */
#ifndef IOWATT_POSTMARK_H
#define IOWATT_POSTMARK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* 1 when argv asks for the PostMark mode (a --postmark=FILE flag). */
int postmark_requested(int argc, char **argv);
/* Parse the flags and the command file, run, print the report; returns the exit code
 * (0 ok, 1 run-time failure such as ENOSPC, 2 usage is an exit from inside). */
int postmark_main(int argc, char **argv, const volatile sig_atomic_t *signo);

/* Parse a command file's len bytes as --postmark=FILE --parse-only does (exits 2 naming the line
 * on bad input; parse_guarded turns that into a return): the fuzz target's entry. */
void postmark_parse_text(const char *text, size_t len);

struct jw;
/* --limits' "postmark": each set command's range and default (src/limits.c) */
void postmark_limits(struct jw *w);

/* PostMark 1.5's generator: the Mersenne Twister MT19937 seeded as Matsumoto and Nishimura's
 * 1999 "sgenrand" (Knuth's 69069 congruential fill, two steps per word, 16 high bits each). */
struct pm_mt {
	uint32_t s[624];
	unsigned i;
};
void pm_mt_seed(struct pm_mt *m, uint32_t seed);
uint32_t pm_mt_next(struct pm_mt *m);

#endif
