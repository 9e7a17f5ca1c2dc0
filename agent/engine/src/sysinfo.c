/* Host facts, system-wide CPU from /proc/stat and disk counters from /proc/diskstats. */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "iowatt.h"

static const char *const cpu_fields[10] = { "user", "nice", "system", "idle", "iowait",
					    "irq", "softirq", "steal", "guest", "guest_nice" };

void cpustat_read(struct cpustat *c)
{
	memset(c, 0, sizeof(*c));
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	unsigned long long v[10] = { 0 };
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		for (int i = 0; i < 10; i++)
			c->v[i] = v[i];
		c->ok = 1;
	}
	fclose(f);
}

/* Percent of all CPUs' time between a and b, per /proc/stat field (guest time is already
 * inside user/nice, so it is not added to the total). */
void cpustat_emit(struct jw *w, const char *key, const struct cpustat *a, const struct cpustat *b)
{
	if (!a->ok || !b->ok) {
		jw_null(w, key);
		return;
	}
	uint64_t d[10], total = 0;
	for (int i = 0; i < 10; i++) {
		d[i] = b->v[i] >= a->v[i] ? b->v[i] - a->v[i] : 0;
		if (i < 8)
			total += d[i];
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	jw_obj(w, key);
	jw_i64(w, "ncpu", ncpu);
	jw_u64(w, "ticks_total", total);
	for (int i = 0; i < 8; i++) {
		char k[32];
		snprintf(k, sizeof(k), "%s_pct", cpu_fields[i]);
		jw_dbl(w, k, total ? 100.0 * (double)d[i] / (double)total : 0.0);
	}
	uint64_t busy = total - d[3] - d[4] - d[7];
	jw_dbl(w, "busy_cpus", total ? (double)busy / (double)total * (double)ncpu : 0.0);
	jw_obj_end(w);
}

void diskstat_read(const char *name, struct diskstat *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (!name[0])
		return;
	FILE *f = fopen("/proc/diskstats", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		char nm[64];
		unsigned long long v[17] = { 0 };
		int n = sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &ma, &mi, nm,
			       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]);
		if (n >= 14 && !strcmp(nm, name)) {
			for (int i = 0; i < 11; i++)
				d->f[i] = v[i];
			d->ok = 1;
			break;
		}
	}
	fclose(f);
}

void host_facts(struct jw *w)
{
	struct utsname u;
	char buf[512];
	jw_obj(w, "host");
	if (gethostname(buf, sizeof(buf)) == 0)
		jw_str(w, "hostname", buf);
	if (uname(&u) == 0) {
		jw_str(w, "kernel", u.release);
		jw_str(w, "arch", u.machine);
	}
	FILE *f = fopen("/etc/os-release", "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "PRETTY_NAME=", 12)) {
				char *v = buf + 12;
				size_t l = strlen(v);
				while (l && (v[l - 1] == '\n' || v[l - 1] == '"'))
					v[--l] = 0;
				if (*v == '"')
					v++;
				jw_str(w, "distro", v);
			}
		fclose(f);
	}
	int virt = 0;
	char model[256] = "";
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			if (!model[0] && !strncmp(buf, "model name", 10)) {
				char *c = strchr(buf, ':');
				if (c) {
					snprintf(model, sizeof(model), "%s", c + 2);
					size_t l = strlen(model);
					if (l && model[l - 1] == '\n')
						model[l - 1] = 0;
				}
			}
			if (!strncmp(buf, "flags", 5) && strstr(buf, " hypervisor"))
				virt = 1;
		}
		fclose(f);
	}
	jw_str(w, "cpu_model", model);
	jw_i64(w, "ncpu", sysconf(_SC_NPROCESSORS_ONLN));
	jw_u64(w, "mem_bytes", (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE));
	jw_bool(w, "virtualized", virt);
	if (read_sysfs_str("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, sizeof(buf)) == 0)
		jw_str(w, "clocksource", buf);
	else
		jw_null(w, "clocksource");
	jw_obj_end(w);
}
