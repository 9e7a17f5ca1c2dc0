/* Random generators, the random-map permutation and access distributions. */
#include <errno.h>
#include <math.h>

#include "iowatt.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* A keyed bijection on [0, 2^bits): a Feistel network of PERM_ROUNDS rounds whose halves may
 * differ by one bit (the widths swap every round, which keeps each round invertible), with a
 * splitmix-style round function; cycle-walking restricts it to [0, n) (fewer than two steps on
 * average, as 2^bits < 2n). Four rounds of a good round function give a pseudo-random order even
 * for tiny regions: 16 blocks no longer come out nearly in sequence, as with the multiply/xorshift
 * bijection used before. O(1) memory, ~10 ns per offset. */
void perm_init(struct perm *p, uint64_t n, uint64_t key)
{
	p->n = n;
	p->bits = 0;
	while (p->bits < 64 && (1ull << p->bits) < n)
		p->bits++;
	uint64_t s = key;
	for (int i = 0; i < PERM_ROUNDS; i++)
		p->k[i] = splitmix64(&s);
}

static inline uint64_t perm_f(uint64_t x, uint64_t k)
{
	uint64_t z = (x ^ k) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 29)) * 0xbf58476d1ce4e5b9ull;
	return z ^ (z >> 32);
}

static inline uint64_t perm_round(const struct perm *p, uint64_t x)
{
	unsigned hi = p->bits / 2, lo = p->bits - hi; /* x = L (hi bits) : R (lo bits) */
	uint64_t l = x >> lo, r = x & ((1ull << lo) - 1);
	for (int i = 0; i < PERM_ROUNDS; i++) {
		/* (L, R) -> (R, L ^ F(R)): the new left half has R's width, the new right L's */
		uint64_t nr = (l ^ perm_f(r, p->k[i])) & ((1ull << hi) - 1);
		l = r;
		r = nr;
		unsigned t = hi;
		hi = lo;
		lo = t;
	}
	return (l << lo) | r;
}

uint64_t perm_at(const struct perm *p, uint64_t i)
{
	if (p->n <= 1)
		return 0;
	uint64_t y = perm_round(p, i);
	while (y >= p->n)
		y = perm_round(p, y);
	return y;
}

/* ---- zipf by rejection-inversion (Hoermann & Derflinger 1996) ---- */
static double helper1(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x / 3.0); }
static double helper2(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3.0); }
static double zH(const struct distgen *d, double x)
{
	double lx = log(x);
	return helper2((1.0 - d->param) * lx) * lx;
}
static double zHinv(const struct distgen *d, double x)
{
	double t = x * (1.0 - d->param);
	if (t < -1)
		t = -1;
	return exp(helper1(t) * x);
}
static double zh(const struct distgen *d, double x) { return exp(-d->param * log(x)); }

int distgen_init(struct distgen *d, enum dist kind, double param, uint64_t n)
{
	d->kind = kind;
	d->n = n;
	d->param = param;
	if (n == 0)
		return -EINVAL;
	switch (kind) {
	case DIST_RANDOM:
		return 0;
	case DIST_ZIPF:
		if (!(param > 0) || param == 1.0)
			return -EINVAL;
		d->hx0 = zH(d, 1.5) - 1.0;
		d->hn = zH(d, (double)n + 0.5);
		d->s = 2.0 - zHinv(d, zH(d, 2.5) - zh(d, 2.0));
		return 0;
	case DIST_PARETO:
		if (!(param > 0 && param < 1))
			return -EINVAL;
		d->s = log(param) / log(1.0 - param);
		return 0;
	case DIST_NORMAL:
		if (!(param > 0 && param <= 100))
			return -EINVAL;
		return 0;
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		return 0; /* drawn by src/patterns.c */
	}
	return -EINVAL;
}

/* Returns a rank in [0, n). For zipf/pareto rank 0 is the hottest; the caller scatters ranks
 * over the region with a permutation so hot blocks are not adjacent. */
uint64_t distgen_next(struct distgen *d, struct rng *r)
{
	switch (d->kind) {
	case DIST_RANDOM:
		return rng_below(r, d->n);
	case DIST_ZIPF:
		for (;;) {
			double u = d->hn + rng_unit(r) * (d->hx0 - d->hn);
			double x = zHinv(d, u);
			double kx = floor(x + 0.5);
			if (kx < 1)
				kx = 1;
			else if (kx > (double)d->n)
				kx = (double)d->n;
			if (kx - x <= d->s || u >= zH(d, kx + 0.5) - zh(d, kx))
				return (uint64_t)kx - 1;
		}
	case DIST_PARETO: {
		double v = (double)(d->n - 1) * pow(rng_unit(r), d->s);
		uint64_t k = (uint64_t)v;
		return k < d->n ? k : d->n - 1;
	}
	case DIST_NORMAL: {
		/* centred on the middle of the region, stddev = param % of it (Box-Muller) */
		double u1 = rng_unit(r), u2 = rng_unit(r);
		if (u1 < 1e-300)
			u1 = 1e-300;
		double z = sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2);
		double v = (double)d->n / 2.0 + z * (double)d->n * d->param / 100.0;
		if (v < 0)
			v = 0;
		uint64_t k = (uint64_t)v;
		return k < d->n ? k : d->n - 1;
	}
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		break;
	}
	return 0;
}
