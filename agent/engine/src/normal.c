/* fio's human ("normal") output from the engine's JSON document, in fio 3.33's layout: the job
 * header lines, one block per job (IOPS/BW line, slat/clat/lat lines in nsec, usec or msec as fio
 * picks them, percentile tables, bw/iops sample lines, latency distribution, cpu, I/O depths,
 * issued counts), then "Run status group N (all jobs)" per group and "Disk stats (read/write)". */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iowatt.h"
#include "output.h"

static int opt_on(const struct jval *job, const char *key, int dflt)
{
	const struct jval *v = jpath(job, "iowatt", "options");
	v = v ? json_get(v, key) : NULL;
	if (!v)
		return dflt;
	return v->t == J_BOOL ? v->b : v->t == J_NUM ? strcmp(v->s, "0") != 0 : dflt;
}

/* fio's unit choice for a latency line: usec when min > 2 us, max > 99.999 us and stdev > 1 us;
 * msec likewise three orders of magnitude up */
static void display_lat(FILE *f, const char *name, const struct jval *l)
{
	if (!l || !ju64(l, "N"))
		return;
	uint64_t mn = ju64(l, "min"), mx = ju64(l, "max");
	double mean = jnum(l, "mean"), dev = jnum(l, "stddev");
	const char *base = "(nsec)";
	if (mn > 2000000 && mx > 99999999ull && dev > 1000000.0) {
		mn /= 1000000;
		mx /= 1000000;
		mean /= 1e6;
		dev /= 1e6;
		base = "(msec)";
	} else if (mn > 2000 && mx > 99999 && dev > 1000.0) {
		mn /= 1000;
		mx /= 1000;
		mean /= 1e3;
		dev /= 1e3;
		base = "(usec)";
	}
	char a[32], b[32];
	num2str_fio(a, sizeof(a), mn, 6, 0, "");
	num2str_fio(b, sizeof(b), mx, 6, 0, "");
	fprintf(f, "    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base, a, b, mean, dev);
}

static void show_percentiles(FILE *f, const char *pre, const struct jval *pl)
{
	if (!pl || pl->t != J_OBJ || !pl->n)
		return;
	uint64_t mn = UINT64_MAX, mx = 0;
	for (size_t i = 0; i < pl->n; i++) {
		uint64_t v = strtoull(pl->items[i]->s, NULL, 10);
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	int scale = 0;
	uint64_t div = 1;
	const char *unit = "nsec";
	if (mn > 2000000 && mx > 99999999ull) {
		scale = 2, div = 1000000, unit = "msec";
	} else if (mn > 2000 && mx > 99999) {
		scale = 1, div = 1000, unit = "usec";
	}
	fprintf(f, "    %s percentiles (%s):\n     |", pre, unit);
	int width = (int)(log10((double)(mx / div ? mx / div : 1)) + 1);
	if (width < 5)
		width = 5;
	int per_line = (80 - 7) / (2 + 10 + width);
	for (size_t j = 0; j < pl->n; j++) {
		if (j && j % (size_t)per_line == 0)
			fputs("     |", f);
		uint64_t v = strtoull(pl->items[j]->s, NULL, 10);
		for (int s = 0; s < scale; s++)
			v = (v + 999) / 1000;
		int last = j == pl->n - 1;
		fprintf(f, " %5.2fth=[%*llu]%c", strtod(pl->keys[j], NULL), width, (unsigned long long)v, last ? '\n' : ',');
		if (last)
			break;
		if (j % (size_t)per_line == (size_t)per_line - 1)
			fputc('\n', f);
	}
}

static void show_ddir(FILE *f, const struct jval *job, const char *key)
{
	const struct jval *d = json_get(job, key);
	uint64_t runt = ju64(d, "runtime"), bytes = ju64(d, "io_bytes");
	if (!d || !runt || !bytes)
		return;
	char iops[32], bw[32], bwalt[32], io[32];
	uint64_t bwb = 1000 * bytes / runt;
	num2str_fio(iops, sizeof(iops), 1000 * ju64(d, "total_ios") / runt, 4, 0, "");
	num2str_fio(bw, sizeof(bw), bwb, 4, 1, "B/s");
	num2str_fio(bwalt, sizeof(bwalt), bwb, 4, 0, "B/s");
	num2str_fio(io, sizeof(io), bytes, 4, 1, "B");
	fprintf(f, "  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)%s\n", key, iops, bw, bwalt, io, (unsigned long long)runt,
		strcmp(key, "write") ? "" : "; 0 zone resets");
	display_lat(f, "slat", json_get(d, "slat_ns"));
	display_lat(f, "clat", json_get(d, "clat_ns"));
	display_lat(f, " lat", json_get(d, "lat_ns"));
	/* cmdprio_*: fio's lines per priority (the JSON's "prios": only when two or more have samples) */
	const struct jval *pr = json_get(d, "prios");
	int lat_p = opt_on(job, "lat_percentiles", 0);
	const char *ptype = lat_p ? "lat" : "clat", *pkey = lat_p ? "lat_ns" : "clat_ns";
	char pname[64];
	for (size_t i = 0; pr && pr->t == J_ARR && i < pr->n; i++) {
		snprintf(pname, sizeof(pname), "%s prio %llu/%llu", ptype, (unsigned long long)ju64(pr->items[i], "prioclass"),
			 (unsigned long long)ju64(pr->items[i], "prio"));
		display_lat(f, pname, json_get(pr->items[i], pkey));
	}
	if (opt_on(job, "slat_percentiles", 0))
		show_percentiles(f, "slat", jpath(d, "slat_ns", "percentile"));
	if (opt_on(job, "clat_percentiles", 1))
		show_percentiles(f, "clat", jpath(d, "clat_ns", "percentile"));
	if (lat_p)
		show_percentiles(f, "lat", jpath(d, "lat_ns", "percentile"));
	uint64_t all = ju64(json_get(d, pkey), "N");
	for (size_t i = 0; (lat_p || opt_on(job, "clat_percentiles", 1)) && pr && pr->t == J_ARR && i < pr->n; i++) {
		const struct jval *l = json_get(pr->items[i], pkey);
		snprintf(pname, sizeof(pname), "%s prio %llu/%llu (%.2f%% of IOs)", ptype,
			 (unsigned long long)ju64(pr->items[i], "prioclass"), (unsigned long long)ju64(pr->items[i], "prio"),
			 all ? 100.0 * (double)ju64(l, "N") / (double)all : 0.0);
		show_percentiles(f, pname, json_get(l, "percentile"));
	}
	if (ju64(d, "bw_samples")) {
		double mn = (double)ju64(d, "bw_min"), mx = (double)ju64(d, "bw_max"), mean = jnum(d, "bw_mean"),
		       dev = jnum(d, "bw_dev");
		const char *u = "KiB";
		if (mean > 1024.0 * 1024.0) {
			mn /= 1024, mx /= 1024, mean /= 1024, dev /= 1024;
			u = "MiB";
		}
		fprintf(f, "   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%llu\n", u,
			(unsigned long long)mn, (unsigned long long)mx, jnum(d, "bw_agg"), mean, dev,
			(unsigned long long)ju64(d, "bw_samples"));
	}
	if (ju64(d, "iops_samples"))
		fprintf(f, "   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
			(unsigned long long)ju64(d, "iops_min"), (unsigned long long)ju64(d, "iops_max"),
			jnum(d, "iops_mean"), jnum(d, "iops_stddev"), (unsigned long long)ju64(d, "iops_samples"));
}

static void show_lat_dist(FILE *f, const struct jval *m, const char *unit)
{
	int shown = 0, line = 0;
	for (size_t i = 0; m && i < m->n; i++) {
		double v = strtod(m->items[i]->s, NULL);
		if (v <= 0)
			continue;
		if (v < 0.01)
			v = 0.01;
		if (!shown || line == 5) {
			if (shown)
				fputc('\n', f);
			fprintf(f, "  lat (%s)   : ", unit);
			line = 0;
		}
		shown = 1;
		fprintf(f, "%s%s=%3.2f%%", line ? ", " : "", m->keys[i], v);
		line++;
	}
	if (shown)
		fputc('\n', f);
}

static void pct_line(FILE *f, const char *head, const struct jval *m)
{
	fputs(head, f);
	for (size_t i = 0; m && i < m->n; i++) {
		double v = strtod(m->items[i]->s, NULL);
		fprintf(f, "%s%s=%3.1f%%", i ? ", " : "", m->keys[i], v > 0 && v < 0.1 ? 0.1 : v);
	}
	fputc('\n', f);
}

static void show_job(FILE *f, const struct jval *job)
{
	const struct jval *o = jpath(job, "iowatt", "options");
	time_t now = time(NULL);
	char tbuf[64];
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", &tm);
	uint64_t members = o && ju64(o, "numjobs") ? ju64(o, "numjobs") : 1;
	long long err = (long long)jnum(job, "error");
	fprintf(f, "%s: (groupid=%lld, jobs=%llu): err=%2lld", jstr(job, "jobname"), (long long)jnum(job, "groupid"),
		(unsigned long long)members, err);
	if (err)
		fprintf(f, " (%s)", jstr(jpath(job, "iowatt", NULL), "error_message"));
	fprintf(f, ": pid=%d: %s\n", (int)getpid(), tbuf);
	if (jstr(job, "desc")[0])
		fprintf(f, "  Description  : [%s]\n", jstr(job, "desc"));
	show_ddir(f, job, "read");
	show_ddir(f, job, "write");
	show_ddir(f, job, "trim");
	show_lat_dist(f, json_get(job, "latency_ns"), "nsec");
	show_lat_dist(f, json_get(job, "latency_us"), "usec");
	show_lat_dist(f, json_get(job, "latency_ms"), "msec");
	const struct jval *sync = json_get(job, "sync");
	if (ju64(sync, "total_ios")) {
		fputs("  fsync/fdatasync/sync_file_range:\n", f);
		display_lat(f, "sync", json_get(sync, "lat_ns"));
	}
	fprintf(f, "  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%llu, majf=%llu, minf=%llu\n", jnum(job, "usr_cpu"),
		jnum(job, "sys_cpu"), (unsigned long long)ju64(job, "ctx"), (unsigned long long)ju64(job, "majf"),
		(unsigned long long)ju64(job, "minf"));
	pct_line(f, "  IO depths    : ", json_get(job, "iodepth_level"));
	pct_line(f, "     submit    : ", json_get(job, "iodepth_submit"));
	pct_line(f, "     complete  : ", json_get(job, "iodepth_complete"));
	const struct jval *r = json_get(job, "read"), *w = json_get(job, "write"), *t = json_get(job, "trim");
	fprintf(f, "     issued rwts: total=%llu,%llu,%llu,%llu short=%llu,%llu,%llu,0 dropped=%llu,%llu,%llu,0\n",
		(unsigned long long)ju64(r, "total_ios"), (unsigned long long)ju64(w, "total_ios"),
		(unsigned long long)ju64(t, "total_ios"), (unsigned long long)ju64(sync, "total_ios"),
		(unsigned long long)ju64(r, "short_ios"), (unsigned long long)ju64(w, "short_ios"),
		(unsigned long long)ju64(t, "short_ios"), (unsigned long long)ju64(r, "drop_ios"),
		(unsigned long long)ju64(w, "drop_ios"), (unsigned long long)ju64(t, "drop_ios"));
	if (json_get(job, "total_err"))
		fprintf(f, "     errors    : total=%llu, first_error=%lld\n", (unsigned long long)ju64(job, "total_err"),
			(long long)jnum(job, "first_error"));
	if (ju64(job, "latency_depth"))
		fprintf(f, "     latency   : target=%llu, window=%llu, percentile=%.2f%%, depth=%llu\n",
			(unsigned long long)ju64(job, "latency_target"), (unsigned long long)ju64(job, "latency_window"),
			jnum(job, "latency_percentile"), (unsigned long long)ju64(job, "latency_depth"));
}

/* "Run status group": per direction the group's bytes over its longest runtime (fio's agg), the
 * slowest and fastest job's bandwidth, and the shortest and longest runtime */
static void show_group(FILE *f, const struct jval *jobs, long long gid)
{
	static const char *const names[3] = { "   READ", "  WRITE", "   TRIM" };
	static const char *const keys[3] = { "read", "write", "trim" };
	fprintf(f, "\nRun status group %lld (all jobs):\n", gid);
	for (int d = 0; d < 3; d++) {
		uint64_t bytes = 0, min_bw = 0, max_bw = 0, min_run = 0, max_run = 0;
		int any = 0;
		for (size_t j = 0; j < jobs->n; j++) {
			const struct jval *job = jobs->items[j];
			if ((long long)jnum(job, "groupid") != gid)
				continue;
			const struct jval *dd = json_get(job, keys[d]);
			uint64_t run = ju64(dd, "runtime"), b = ju64(dd, "io_bytes");
			if (!run)
				continue;
			uint64_t bw = 1000 * b / run;
			if (!any || bw < min_bw)
				min_bw = bw;
			if (!any || bw > max_bw)
				max_bw = bw;
			if (!any || run < min_run)
				min_run = run;
			if (run > max_run)
				max_run = run;
			bytes += b;
			any = 1;
		}
		if (!any)
			continue;
		uint64_t agg = 1000 * bytes / max_run;
		char a[32], aa[32], mn[32], mna[32], mx[32], mxa[32], io[32], ioa[32];
		num2str_fio(a, sizeof(a), agg, 4, 1, "B/s");
		num2str_fio(aa, sizeof(aa), agg, 4, 0, "B/s");
		num2str_fio(mn, sizeof(mn), min_bw, 4, 1, "B/s");
		num2str_fio(mna, sizeof(mna), min_bw, 4, 0, "B/s");
		num2str_fio(mx, sizeof(mx), max_bw, 4, 1, "B/s");
		num2str_fio(mxa, sizeof(mxa), max_bw, 4, 0, "B/s");
		num2str_fio(io, sizeof(io), bytes, 4, 1, "B");
		num2str_fio(ioa, sizeof(ioa), bytes, 4, 0, "B");
		fprintf(f, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n", names[d], a, aa, mn, mx, mna,
			mxa, io, ioa, (unsigned long long)min_run, (unsigned long long)max_run);
	}
}

/* fio's min_bs[d]-max_bs[d] of the header line: bs, or a bssplit list's sizes (0 % entries too,
 * as fio counts them), or a bsrange */
static void bs_range(const struct jval *o, int d, uint64_t *mn, uint64_t *mx)
{
	*mn = *mx = ju64(o, d ? "bs_write_bytes" : "bs_read_bytes");
	const char *dir = d ? "write" : "read";
	int any = 0;
	const struct jval *l = json_get(o, "bssplit");
	for (size_t i = 0; l && l->t == J_ARR && i < l->n; i++) {
		if (strcmp(jstr(l->items[i], "ddir"), dir))
			continue;
		uint64_t b = ju64(l->items[i], "bs_bytes");
		if (!any || b < *mn)
			*mn = b;
		if (!any || b > *mx)
			*mx = b;
		any = 1;
	}
	l = json_get(o, "bsrange");
	for (size_t i = 0; !any && l && l->t == J_ARR && i < l->n; i++)
		if (!strcmp(jstr(l->items[i], "ddir"), dir)) {
			*mn = ju64(l->items[i], "min_bytes");
			*mx = ju64(l->items[i], "max_bytes");
		}
}

void normal_print(FILE *f, const struct jval *doc)
{
	const struct jval *jobs = json_get(doc, "jobs");
	if (!jobs || jobs->t != J_ARR)
		return;
	unsigned long long threads = 0;
	for (size_t j = 0; j < jobs->n; j++) {
		const struct jval *job = jobs->items[j], *o = jpath(job, "iowatt", "options");
		char b[4][32]; /* read min, max, write min, max; trim shows the write's, as fio's */
		for (int d = 0; d < 2; d++) {
			uint64_t mn, mx;
			bs_range(o, d, &mn, &mx);
			num2str_fio(b[2 * d], sizeof(b[0]), mn, 4, 1, "B");
			num2str_fio(b[2 * d + 1], sizeof(b[0]), mx, 4, 1, "B");
		}
		fprintf(f, "%s: (g=%lld): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%llu\n",
			jstr(job, "jobname"), (long long)jnum(job, "groupid"), jstr(o, "rw"), b[0], b[1], b[2], b[3],
			b[2], b[3], jstr(o, "ioengine"), (unsigned long long)ju64(o, "iodepth"));
		threads += ju64(o, "numjobs") ? ju64(o, "numjobs") : 1;
	}
	fprintf(f, "%s\nStarting %llu thread%s\n\n", jstr(doc, "fio version"), threads, threads == 1 ? "" : "s");
	for (size_t j = 0; j < jobs->n; j++)
		show_job(f, jobs->items[j]);
	long long last = -1;
	for (size_t j = 0; j < jobs->n; j++) {
		long long g = (long long)jnum(jobs->items[j], "groupid");
		int seen = 0;
		for (size_t k = 0; k < j; k++)
			seen |= (long long)jnum(jobs->items[k], "groupid") == g;
		if (!seen)
			show_group(f, jobs, g);
		last = g;
	}
	(void)last;
	const struct jval *disks = json_get(doc, "disk_util");
	if (disks && disks->t == J_ARR && disks->n) {
		fputs("\nDisk stats (read/write):\n", f); /* fio 3.33's fields (no sectors= yet) */
		for (size_t k = 0; k < disks->n; k++) {
			const struct jval *d = disks->items[k];
			fprintf(f, "  %s: ios=%llu/%llu, merge=%llu/%llu, ticks=%llu/%llu, in_queue=%llu, util=%3.2f%%\n",
				jstr(d, "name"), (unsigned long long)ju64(d, "read_ios"), (unsigned long long)ju64(d, "write_ios"),
				(unsigned long long)ju64(d, "read_merges"), (unsigned long long)ju64(d, "write_merges"),
				(unsigned long long)ju64(d, "read_ticks"), (unsigned long long)ju64(d, "write_ticks"),
				(unsigned long long)ju64(d, "in_queue"), jnum(d, "util"));
		}
	}
}
