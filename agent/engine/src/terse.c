/* fio's terse ("minimal") output, versions 3, 4 and 5, from the engine's JSON document: one
 * semicolon line per job, field for field as fio 3.33 writes it (HOWTO "Terse output"):
 *
 *   version;fio version;jobname;groupid;error;
 *   READ, WRITE (and TRIM for 4 and 5): io KiB;bw KiB/s;iops;runtime ms;
 *     slat min;max;mean;stdev (us);clat min;max;mean;stdev (us);20 percentile fields "P%=us"
 *     (lat's with lat_percentiles=1, else clat's, else none: unused fields "0%=0");
 *     lat min;max;mean;stdev (us);bw min;max;agg%;mean;stdev (KiB/s)
 *     [5: bw samples;iops min;max;mean;stdev;samples];
 *   cpu usr%;sys%;ctx;majf;minf;iodepth 1..>=64 (7, "%3.1f%%");latency us <=2..1000 (10, the ns
 *   buckets added into the first);latency ms <=2..>=2000 (12);
 *   per disk: name;read ios;write ios;read merges;write merges;read ticks;write ticks;in_queue;util%
 *   [;total errors;first error with continue_on_error][;description]
 *
 * min/max are integer microseconds (ns / 1000, truncated), means and deviations ns / 1000. */
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"
#include "output.h"

#define TERSE_PCT_FIELDS 20 /* fio's FIO_IO_U_LIST_MAX_LEN */

static void lat4(FILE *f, const struct jval *l)
{
	if (!l || !ju64(l, "N")) {
		fputs(";0;0;0.000000;0.000000", f);
		return;
	}
	fprintf(f, ";%llu;%llu;%f;%f", (unsigned long long)(ju64(l, "min") / 1000),
		(unsigned long long)(ju64(l, "max") / 1000), jnum(l, "mean") / 1000.0, jnum(l, "stddev") / 1000.0);
}

static int opt_on(const struct jval *job, const char *key, int dflt)
{
	const struct jval *v = jpath(job, "iowatt", "options");
	v = v ? json_get(v, key) : NULL;
	if (!v)
		return dflt;
	return v->t == J_BOOL ? v->b : v->t == J_NUM ? strcmp(v->s, "0") != 0 : dflt;
}

static void ddir(FILE *f, const struct jval *job, const char *key, int version)
{
	const struct jval *d = json_get(job, key);
	fprintf(f, ";%llu;%llu;%llu;%llu", (unsigned long long)ju64(d, "io_kbytes"), (unsigned long long)ju64(d, "bw"),
		(unsigned long long)jnum(d, "iops"), (unsigned long long)ju64(d, "runtime"));
	lat4(f, d ? json_get(d, "slat_ns") : NULL);
	lat4(f, d ? json_get(d, "clat_ns") : NULL);
	const struct jval *pl = NULL;
	if (opt_on(job, "lat_percentiles", 0))
		pl = jpath(d, "lat_ns", "percentile");
	else if (opt_on(job, "clat_percentiles", 1))
		pl = jpath(d, "clat_ns", "percentile");
	int on = opt_on(job, "lat_percentiles", 0) || opt_on(job, "clat_percentiles", 1);
	size_t n = pl && pl->t == J_OBJ ? pl->n : 0;
	/* no I/O in this direction: fio still names its percentiles, each = 0 */
	const struct jval *list = on && !n ? jpath(jpath(job, "iowatt", "options"), "percentile_list", NULL) : NULL;
	for (size_t i = 0; i < TERSE_PCT_FIELDS; i++) {
		if (list && list->t == J_ARR && i < list->n) {
			fprintf(f, ";%f%%=0", strtod(list->items[i]->s, NULL));
			continue;
		}
		if (i >= n) {
			fputs(";0%=0", f);
			continue;
		}
		const struct jval *v = pl->items[i];
		unsigned long long ns = v->t == J_NUM ? strtoull(v->s, NULL, 10) : 0;
		fprintf(f, ";%s%%=%llu", pl->keys[i], ns / 1000);
	}
	lat4(f, d ? json_get(d, "lat_ns") : NULL);
	uint64_t samples = ju64(d, "bw_samples");
	if (samples)
		fprintf(f, ";%llu;%llu;%f%%;%f;%f", (unsigned long long)ju64(d, "bw_min"),
			(unsigned long long)ju64(d, "bw_max"), jnum(d, "bw_agg"), jnum(d, "bw_mean"), jnum(d, "bw_dev"));
	else
		fputs(";0;0;0.000000%;0.000000;0.000000", f);
	if (version == 5) {
		fprintf(f, ";%llu", (unsigned long long)samples);
		if (ju64(d, "iops_samples"))
			fprintf(f, ";%llu;%llu;%f;%f;%llu", (unsigned long long)ju64(d, "iops_min"),
				(unsigned long long)ju64(d, "iops_max"), jnum(d, "iops_mean"), jnum(d, "iops_stddev"),
				(unsigned long long)ju64(d, "iops_samples"));
		else
			fputs(";0;0;0.000000;0.000000;0", f);
	}
}

/* fio's distributions: a non-zero share below the print resolution shows as that resolution */
static double floor_pct(double v, double res)
{
	return v > 0 && v < res ? res : v;
}

void terse_print(FILE *f, const struct jval *doc, int version)
{
	const struct jval *jobs = json_get(doc, "jobs");
	const struct jval *disks = json_get(doc, "disk_util");
	for (size_t j = 0; jobs && jobs->t == J_ARR && j < jobs->n; j++) {
		const struct jval *job = jobs->items[j];
		fprintf(f, "%d;%s;%s;%lld;%lld", version, jstr(doc, "fio version"), jstr(job, "jobname"),
			(long long)jnum(job, "groupid"), (long long)jnum(job, "error"));
		ddir(f, job, "read", version);
		ddir(f, job, "write", version);
		if (version >= 4)
			ddir(f, job, "trim", version);
		fprintf(f, ";%f%%;%f%%;%llu;%llu;%llu", jnum(job, "usr_cpu"), jnum(job, "sys_cpu"),
			(unsigned long long)ju64(job, "ctx"), (unsigned long long)ju64(job, "majf"),
			(unsigned long long)ju64(job, "minf"));
		const struct jval *lv = json_get(job, "iodepth_level");
		for (size_t i = 0; i < 7; i++)
			fprintf(f, ";%3.1f%%", lv && i < lv->n ? floor_pct(strtod(lv->items[i]->s, NULL), 0.1) : 0.0);
		const struct jval *ns = json_get(job, "latency_ns"), *us = json_get(job, "latency_us"),
				  *ms = json_get(job, "latency_ms");
		double ns_total = 0;
		for (size_t i = 0; ns && i < ns->n; i++)
			ns_total += strtod(ns->items[i]->s, NULL);
		for (size_t i = 0; i < 10; i++) {
			double v = us && i < us->n ? floor_pct(strtod(us->items[i]->s, NULL), 0.01) : 0.0;
			fprintf(f, ";%3.2f%%", i ? v : v + ns_total);
		}
		for (size_t i = 0; i < 12; i++)
			fprintf(f, ";%3.2f%%", ms && i < ms->n ? floor_pct(strtod(ms->items[i]->s, NULL), 0.01) : 0.0);
		for (size_t k = 0; disks && disks->t == J_ARR && k < disks->n; k++) {
			const struct jval *dk = disks->items[k];
			fprintf(f, ";%s;%llu;%llu;%llu;%llu;%llu;%llu;%llu;%3.2f%%", jstr(dk, "name"),
				(unsigned long long)ju64(dk, "read_ios"), (unsigned long long)ju64(dk, "write_ios"),
				(unsigned long long)ju64(dk, "read_merges"), (unsigned long long)ju64(dk, "write_merges"),
				(unsigned long long)ju64(dk, "read_ticks"), (unsigned long long)ju64(dk, "write_ticks"),
				(unsigned long long)ju64(dk, "in_queue"), jnum(dk, "util"));
		}
		if (json_get(job, "total_err")) /* continue_on_error */
			fprintf(f, ";%llu;%lld", (unsigned long long)ju64(job, "total_err"), (long long)jnum(job, "first_error"));
		if (jstr(job, "desc")[0])
			fprintf(f, ";%s", jstr(job, "desc"));
		fputc('\n', f);
	}
}
