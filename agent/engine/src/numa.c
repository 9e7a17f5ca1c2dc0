/* fio's numa_cpu_nodes and numa_mem_policy (HOWTO "Threads, processes and job synchronization")
 * without libnuma: the nodes and their CPUs come from /sys/devices/system/node/, the CPU binding
 * is sched_setaffinity(2) and the memory policy set_mempolicy(2) through syscall(2), each in the
 * job's own threads before their buffers are allocated (so the buffers follow the policy; the
 * offload pool's threads, created later, inherit both).
 *
 * Values: numa_cpu_nodes=LIST, numa_mem_policy=MODE[:LIST], LIST = comma-separated node numbers
 * and A-B ranges, or "all" (every online node); MODE default | prefer (one node) | bind |
 * interleave (a LIST) | local (no LIST). The parse checks the syntax only (the server parses jobs
 * for hosts it is not); the run checks the nodes against this host (numa_check: a node that is
 * not online, or a CPU node without CPUs this process may use, exits 2 naming the option). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iowatt.h"
#include "numa.h"
#include "optable.h"

#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#define MPOL_PREFERRED 1
#define MPOL_BIND 2
#define MPOL_INTERLEAVE 3
#define MPOL_LOCAL 4
#endif

static const char *const mode_names[] = { "default", "prefer", "bind", "interleave", "local" };
static const int mode_mpol[] = { MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL };

static void set_bit(uint64_t *m, unsigned b) { m[b / 64] |= 1ull << (b % 64); }
static int has_bit(const uint64_t *m, unsigned b) { return (int)(m[b / 64] >> (b % 64)) & 1; }

/* "0,2-3" into bits below limit; 0 ok, -1 bad syntax, -2 a number at or past limit */
int numa_parse_list(const char *s, uint64_t *mask, unsigned limit)
{
	if (!*s)
		return -1;
	for (;;) {
		unsigned long a = 0, b;
		int n = 0;
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9') {
			a = a * 10 + (unsigned long)(*s++ - '0');
			if (a >= limit || ++n > 10)
				return -2;
		}
		b = a;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				return -1;
			b = 0;
			n = 0;
			while (*s >= '0' && *s <= '9') {
				b = b * 10 + (unsigned long)(*s++ - '0');
				if (b >= limit || ++n > 10)
					return -2;
			}
			if (b < a)
				return -1;
		}
		for (unsigned long i = a; i <= b; i++)
			set_bit(mask, (unsigned)i);
		if (!*s)
			return 0;
		if (*s != ',' || !s[1])
			return -1;
		s++;
	}
}

/* a node list of an option: "all" or LIST */
static void parse_nodes(const char *name, const char *val, uint64_t *mask, int *all)
{
	memset(mask, 0, NUMA_MASK_WORDS * sizeof(uint64_t));
	*all = !strcmp(val, "all");
	if (*all)
		return;
	int r = numa_parse_list(val, mask, NUMA_MAX_NODES);
	if (r == -2)
		die_usage(name, "node numbers must be below %u, got '%s'", NUMA_MAX_NODES, val);
	if (r)
		die_usage(name, "invalid node list '%s' (N, A-B, comma-separated, or all)", val);
}

void numa_parse_cpu_nodes(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	if (strlen(val) >= sizeof(o->numa.cpu_text))
		die_usage(name, "longer than %zu bytes", sizeof(o->numa.cpu_text) - 1);
	parse_nodes(name, val, o->numa.cpu_nodes, &o->numa.cpu_all);
	str_copy(o->numa.cpu_text, sizeof(o->numa.cpu_text), val);
}

void numa_parse_mem_policy(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	if (strlen(val) >= sizeof(o->numa.mem_text))
		die_usage(name, "longer than %zu bytes", sizeof(o->numa.mem_text) - 1);
	const char *colon = strchr(val, ':');
	size_t kl = colon ? (size_t)(colon - val) : strlen(val);
	int mode = -1;
	for (int i = 0; i < 5; i++)
		if (strlen(mode_names[i]) == kl && !strncmp(val, mode_names[i], kl))
			mode = i;
	if (mode < 0)
		die_usage(name, "unknown mode in '%s' (default, prefer, bind, interleave, local)", val);
	memset(o->numa.mem_nodes, 0, sizeof(o->numa.mem_nodes));
	o->numa.mem_all = 0;
	if (mode == 0 || mode == 4) {
		if (colon)
			die_usage(name, "'%s' takes no node list: '%s'", mode_names[mode], val);
	} else {
		if (!colon)
			die_usage(name, "'%s' needs a node list: '%s'", mode_names[mode], val);
		parse_nodes(name, colon + 1, o->numa.mem_nodes, &o->numa.mem_all);
		if (mode == 1) {
			int n = 0;
			for (unsigned i = 0; i < NUMA_MAX_NODES; i++)
				n += has_bit(o->numa.mem_nodes, i);
			if (n != 1 || o->numa.mem_all)
				die_usage(name, "prefer takes exactly one node: '%s'", val);
		}
	}
	o->numa.mem_mode = mode + 1;
	str_copy(o->numa.mem_text, sizeof(o->numa.mem_text), val);
}

void numa_echo_cpu_nodes(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str_or_null(w, d->key, o->numa.cpu_text[0] ? o->numa.cpu_text : NULL);
}

void numa_echo_mem_policy(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str_or_null(w, d->key, o->numa.mem_text[0] ? o->numa.mem_text : NULL);
}

/* a small sysfs file into buf (NUL-terminated, trailing newline dropped); -1 when absent */
static int read_sys(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return 0;
}

/* the online nodes of this host; 0 or -1 (no /sys/devices/system/node: one node, 0) */
static void online_nodes(uint64_t *mask)
{
	char buf[4096];
	memset(mask, 0, NUMA_MASK_WORDS * sizeof(uint64_t));
	if (read_sys("/sys/devices/system/node/online", buf, sizeof(buf)) || numa_parse_list(buf, mask, NUMA_MAX_NODES))
		set_bit(mask, 0); /* a kernel without NUMA: node 0 holds everything */
}

/* the CPUs of `nodes` this process may run on */
static void node_cpus(const uint64_t *nodes, cpu_set_t *set)
{
	cpu_set_t allowed;
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (unsigned n = 0; n < NUMA_MAX_NODES; n++) {
		if (!has_bit(nodes, n))
			continue;
		char path[96], buf[4096];
		uint64_t cpus[CPU_SETSIZE / 64] = { 0 };
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", n);
		if (read_sys(path, buf, sizeof(buf))) {
			if (n == 0 && access("/sys/devices/system/node", F_OK)) /* no NUMA: every CPU */
				for (unsigned c = 0; c < CPU_SETSIZE; c++)
					if (CPU_ISSET(c, &allowed))
						CPU_SET(c, set);
			continue;
		}
		if (!buf[0] || numa_parse_list(buf, cpus, CPU_SETSIZE))
			continue;
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (has_bit(cpus, c) && CPU_ISSET(c, &allowed))
				CPU_SET(c, set);
	}
}

static void resolve(const uint64_t *given, int all, const uint64_t *online, uint64_t *out, const char *opt,
		    const char *text)
{
	for (unsigned i = 0; i < NUMA_MASK_WORDS; i++)
		out[i] = all ? online[i] : given[i];
	for (unsigned n = 0; n < NUMA_MAX_NODES; n++)
		if (has_bit(given, n) && !has_bit(online, n))
			die_usage(opt, "node %u is not an online NUMA node of this host ('%s')", n, text);
}

void numa_check(struct options *o)
{
	if (!o->numa.cpu_text[0] && !o->numa.mem_mode)
		return;
	uint64_t online[NUMA_MASK_WORDS];
	online_nodes(online);
	if (o->numa.cpu_text[0]) {
		resolve(o->numa.cpu_nodes, o->numa.cpu_all, online, o->numa.cpu_nodes, "numa_cpu_nodes", o->numa.cpu_text);
		cpu_set_t set;
		node_cpus(o->numa.cpu_nodes, &set);
		if (!CPU_COUNT(&set))
			die_usage("numa_cpu_nodes", "no CPU of node(s) '%s' is available to this process", o->numa.cpu_text);
	}
	if (o->numa.mem_mode > 1 && o->numa.mem_mode < 5)
		resolve(o->numa.mem_nodes, o->numa.mem_all, online, o->numa.mem_nodes, "numa_mem_policy", o->numa.mem_text);
}

int numa_thread_apply(const struct options *o, char *msg, size_t len)
{
	if (o->numa.cpu_text[0]) {
		cpu_set_t set;
		node_cpus(o->numa.cpu_nodes, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			int e = errno;
			snprintf(msg, len, "numa_cpu_nodes: sched_setaffinity: %s", strerror(e));
			return -e;
		}
	}
	if (o->numa.mem_mode) {
		int m = mode_mpol[o->numa.mem_mode - 1];
		const uint64_t *mask = m == MPOL_DEFAULT || m == MPOL_LOCAL ? NULL : o->numa.mem_nodes;
		/* maxnode counts one bit more than the mask holds (the kernel drops the last) */
		if (syscall(SYS_set_mempolicy, m, mask, mask ? (unsigned long)NUMA_MAX_NODES + 1 : 0ul)) {
			int e = errno;
			snprintf(msg, len, "numa_mem_policy: set_mempolicy: %s", strerror(e));
			return -e;
		}
	}
	return 0;
}
