/* fio-compatible log-linear latency histogram and running statistics.
 *
 * Values below 128 ns get one bucket each; above, each power of two [2^m, 2^(m+1)) is split
 * into 64 equal sub-buckets, so a bucket's width is at most 1/64 of its lower bound and the
 * midpoint we report is within 1/128 (0.78 %) of any value in it. 29 groups x 64 = 1856
 * buckets cover values up to 2^34 ns (~17 s); larger values land in the last bucket.
 * Index and value math are the same as fio's stat.c, so json+ "bins" keys match fio's. */
#include <math.h>
#include <string.h>

#include "iowatt.h"

const double default_percentiles[NPCT] = {
	1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0,
	99.0, 99.5, 99.9, 99.95, 99.99,
};

uint64_t hist_val(unsigned idx)
{
	if (idx >= HIST_NR)
		idx = HIST_NR - 1;
	if (idx < (HIST_VAL << 1))
		return idx;
	unsigned err = (idx >> HIST_BITS) - 1;
	uint64_t base = 1ull << (err + HIST_BITS);
	uint64_t k = idx % HIST_VAL;
	/* midpoint of the bucket: base + (k + 0.5) * 2^err */
	return base + (uint64_t)((k + 0.5) * (double)(1ull << err));
}

void hist_percentiles(const uint64_t *hist, uint64_t total, const double *pct, int npct, uint64_t *out)
{
	uint64_t sum = 0;
	int j = 0;
	for (int i = 0; i < npct; i++)
		out[i] = 0;
	if (!total || !npct)
		return;
	for (unsigned i = 0; i < HIST_NR && j < npct; i++) {
		sum += hist[i];
		while (j < npct && (long double)sum >= (long double)pct[j] / 100.0L * (long double)total) {
			out[j] = hist_val(i);
			j++;
		}
	}
}

void lstat_init(struct lstat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
}

void lstat_merge(struct lstat *dst, const struct lstat *src)
{
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double lstat_mean(const struct lstat *s)
{
	return s->n ? (double)s->sum / (double)s->n : 0.0;
}

double lstat_stddev(const struct lstat *s)
{
	if (s->n < 2)
		return 0.0;
	double mean = lstat_mean(s);
	double var = (s->sumsq - (double)s->n * mean * mean) / (double)(s->n - 1);
	return var > 0 ? sqrt(var) : 0.0;
}
