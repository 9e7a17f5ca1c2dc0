/* fio's numa_cpu_nodes and numa_mem_policy without libnuma (src/numa.c). */
#ifndef IOWATT_NUMA_H
#define IOWATT_NUMA_H

#include <stddef.h>
#include <stdint.h>

#define NUMA_MAX_NODES 1024u      /* node numbers below this (the kernel's largest MAX_NUMNODES) */
#define NUMA_MASK_WORDS (NUMA_MAX_NODES / 64)

struct numa_opts {
	uint64_t cpu_nodes[NUMA_MASK_WORDS];  /* numa_cpu_nodes (all: filled by numa_check) */
	uint64_t mem_nodes[NUMA_MASK_WORDS];  /* numa_mem_policy's node list */
	int cpu_all, mem_all;                 /* "all" given */
	int mem_mode;                         /* 0 unset, 1 default, 2 prefer, 3 bind, 4 interleave, 5 local */
	char cpu_text[128], mem_text[128];    /* as given (the echo) */
};

struct options;
struct opt_def;
struct jw;
int numa_parse_list(const char *s, uint64_t *mask, unsigned limit); /* "0,2-3": 0, -1 syntax, -2 too large */
void numa_parse_cpu_nodes(void *base, const struct opt_def *d, const char *name, const char *val);
void numa_parse_mem_policy(void *base, const struct opt_def *d, const char *name, const char *val);
void numa_echo_cpu_nodes(struct jw *w, const struct options *o, const struct opt_def *d);
void numa_echo_mem_policy(struct jw *w, const struct options *o, const struct opt_def *d);
void numa_check(struct options *o);   /* the nodes against this host before the run (exit 2) */
int numa_thread_apply(const struct options *o, char *msg, size_t len); /* in a job thread: 0 or -errno */

#endif
