/* CRC-32C, MD5 and SHA-256 for the verify family, written from the specifications (vhash.h). */
#include <string.h>

#include "vhash.h"

/* ---- CRC-32C: reflected polynomial 0x82F63B78, slicing by 8 tables built on first use ---- */
static uint32_t crc_tab[8][256];
static int crc_ready;        /* 1 tables built, 2 hardware */

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
	int hw = 0;
#if defined(__x86_64__)
	__builtin_cpu_init();
	hw = __builtin_cpu_supports("sse4.2");
#endif
	/* racing threads all compute the same tables and the same answer */
	__atomic_store_n(&crc_ready, hw ? 2 : 1, __ATOMIC_RELEASE);
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* little-endian hosts (x86-64, arm64) */
		v ^= crc;
		crc = crc_tab[7][v & 0xff] ^ crc_tab[6][(v >> 8) & 0xff] ^ crc_tab[5][(v >> 16) & 0xff] ^
		      crc_tab[4][(v >> 24) & 0xff] ^ crc_tab[3][(v >> 32) & 0xff] ^ crc_tab[2][(v >> 40) & 0xff] ^
		      crc_tab[1][(v >> 48) & 0xff] ^ crc_tab[0][v >> 56];
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t crc32c_update(uint32_t crc, const void *p, size_t len)
{
	int r = __atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE);
	if (!r) {
		crc_init();
		r = crc_ready;
	}
#if defined(__x86_64__)
	if (r == 2)
		return crc_hw(crc, p, len);
#endif
	return crc_sw(crc, p, len);
}

int crc32c_hw(void)
{
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	return crc_ready == 2;
}

/* ---- MD5, RFC 1321 ---- */
static inline uint32_t rol32(uint32_t x, unsigned s) { return (x << s) | (x >> (32 - s)); }
static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* T[i] = floor(2^32 * |sin(i + 1)|) (RFC 1321 §3.4) */
static const uint32_t md5_t[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const unsigned char md5_s[4][4] = { { 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 }, { 6, 10, 15, 21 } };

static void md5_block(uint32_t h[4], const unsigned char *p)
{
	uint32_t x[16];
	for (int i = 0; i < 16; i++)
		x[i] = le32(p + 4 * i);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int k, r = i >> 4;
		switch (r) {
		case 0: f = (b & c) | (~b & d); k = i; break;
		case 1: f = (b & d) | (c & ~d); k = (5 * i + 1) & 15; break;
		case 2: f = b ^ c ^ d; k = (3 * i + 5) & 15; break;
		default: f = c ^ (b | ~d); k = (7 * i) & 15; break;
		}
		uint32_t t = d;
		d = c;
		c = b;
		b = b + rol32(a + f + md5_t[i] + x[k], md5_s[r][i & 3]);
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

/* MD5 and SHA-256 share the Merkle–Damgård framing: 64-byte blocks through a partial buffer */
typedef void (*block_fn)(uint32_t *h, const unsigned char *blk);

static void md_update(uint32_t *h, unsigned char *buf, uint64_t *n, block_fn block, const void *data,
		      size_t len)
{
	const unsigned char *p = data;
	size_t have = (size_t)(*n & 63);
	*n += len;
	if (have) {
		size_t take = 64 - have < len ? 64 - have : len;
		memcpy(buf + have, p, take);
		p += take;
		len -= take;
		if (have + take < 64)
			return;
		block(h, buf);
	}
	for (; len >= 64; len -= 64, p += 64)
		block(h, p);
	memcpy(buf, p, len);
}

void md5_init(struct md5_ctx *c)
{
	c->h[0] = 0x67452301;
	c->h[1] = 0xefcdab89;
	c->h[2] = 0x98badcfe;
	c->h[3] = 0x10325476;
	c->n = 0;
}

void md5_update(struct md5_ctx *c, const void *data, size_t len)
{
	md_update(c->h, c->buf, &c->n, md5_block, data, len);
}

void md5_final(struct md5_ctx *c, unsigned char out[16])
{
	uint64_t bits = c->n * 8;
	unsigned char pad[72] = { 0x80 };
	size_t have = (size_t)(c->n & 63), np = have < 56 ? 56 - have : 120 - have;
	for (int i = 0; i < 8; i++)
		pad[np + (size_t)i] = (unsigned char)(bits >> (8 * i));
	md5_update(c, pad, np + 8);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (unsigned char)(c->h[i] >> (8 * k));
}

/* ---- SHA-256, FIPS 180-4 §6.2 ---- */
/* K: first 32 bits of the fractional parts of the cube roots of the first 64 primes (§4.2.2) */
static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
static inline uint32_t ror32(uint32_t x, unsigned s) { return (x >> s) | (x << (32 - s)); }

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = be32(p + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror32(w[t - 15], 7) ^ ror32(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ror32(w[t - 2], 17) ^ ror32(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = hh + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[t] + w[t];
		uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void sha256_init(struct sha256_ctx *c)
{
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(c->h, h0, sizeof(h0));
	c->n = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	md_update(c->h, c->buf, &c->n, sha256_block, data, len);
}

void sha256_final(struct sha256_ctx *c, unsigned char out[32])
{
	uint64_t bits = c->n * 8;
	unsigned char pad[72] = { 0x80 };
	size_t have = (size_t)(c->n & 63), np = have < 56 ? 56 - have : 120 - have;
	for (int i = 0; i < 8; i++)
		pad[np + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(c, pad, np + 8);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (unsigned char)(c->h[i] >> (24 - 8 * k));
}
