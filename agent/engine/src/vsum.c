/* The rest of fio's verify checksums (vsum.h): CRC-64 (Jones), CRC-32 (MSB first), CRC-16/ARC,
 * CRC-7, SHA-1 and SHA-512 (FIPS 180-4), SHA-3 (FIPS 202), XXH32. Written from the published
 * algorithm descriptions; the constants tables below were computed from the specifications'
 * definitions (SHA-512: the fractional parts of the cube and square roots of the first primes;
 * Keccak: the rc(t) LFSR and the rho offsets of FIPS 202 § 3.2). */
#include "vsum.h"

#include <pthread.h>
#include <string.h>

static uint64_t t64[256];
static uint32_t t32[256];
static uint16_t t16[256];
static uint8_t t7[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint64_t c64 = i;
		uint16_t c16 = (uint16_t)i;
		uint32_t c32 = (uint32_t)i << 24;
		uint8_t c7 = (uint8_t)i;
		for (int k = 0; k < 8; k++) {
			c64 = c64 & 1 ? (c64 >> 1) ^ 0x95ac9329ac4bc9b5ull : c64 >> 1; /* 0xad93d23594c935a9 reflected */
			c16 = c16 & 1 ? (uint16_t)((c16 >> 1) ^ 0xa001) : (uint16_t)(c16 >> 1);  /* 0x8005 reflected */
			c32 = c32 & 0x80000000u ? (c32 << 1) ^ 0x04c11db7u : c32 << 1;
			c7 = c7 & 0x80 ? (uint8_t)((c7 << 1) ^ 0x12) : (uint8_t)(c7 << 1);       /* 0x09, left-aligned */
		}
		t64[i] = c64;
		t16[i] = c16;
		t32[i] = c32;
		t7[i] = c7;
	}
}

uint64_t crc64_jones(const void *p, size_t len)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *b = p;
	uint64_t c = 0;
	while (len--)
		c = t64[(c ^ *b++) & 0xff] ^ (c >> 8);
	return c;
}

uint32_t crc32_msb(const void *p, size_t len)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *b = p;
	uint32_t c = 0;
	while (len--)
		c = t32[((c >> 24) ^ *b++) & 0xff] ^ (c << 8);
	return c;
}

uint16_t crc16_arc(const void *p, size_t len)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *b = p;
	uint16_t c = 0;
	while (len--)
		c = (uint16_t)(t16[(c ^ *b++) & 0xff] ^ (c >> 8));
	return c;
}

uint8_t crc7_msb(const void *p, size_t len)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *b = p;
	uint8_t c = 0; /* the 7-bit register, kept shifted left by one */
	while (len--)
		c = t7[c ^ *b++];
	return (uint8_t)(c >> 1);
}

static inline uint32_t rol32(uint32_t x, unsigned r) { return (x << r) | (x >> (32 - r)); }
static inline uint64_t ror64(uint64_t x, unsigned r) { return (x >> r) | (x << (64 - r)); }
static inline uint64_t rol64(uint64_t x, unsigned r) { return r ? (x << r) | (x >> (64 - r)) : x; }
static inline uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be64(const unsigned char *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }
static inline uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
/* the digest's output: n state words of `bytes` bytes each, big endian (SHA-1, SHA-512) */
static void put_be_words(unsigned char *out, const void *words, int n, int bytes)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = bytes == 4 ? ((const uint32_t *)words)[i] : ((const uint64_t *)words)[i];
		for (int k = 0; k < bytes; k++)
			out[bytes * i + k] = (unsigned char)(v >> (8 * (bytes - 1 - k)));
	}
}

/* Merkle-Damgard padding shared by SHA-1 and SHA-512: the message, 0x80, zeros, the bit length
 * (big endian) in the last `lenbytes` of the final block; block() gets each block in turn. */
static void md_blocks(const unsigned char *p, size_t len, size_t bsz, size_t lenbytes, void *st,
		      void (*block)(void *st, const unsigned char *b))
{
	size_t full = len / bsz * bsz;
	for (size_t i = 0; i < full; i += bsz)
		block(st, p + i);
	unsigned char tail[256];
	size_t rest = len - full;
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	size_t n = rest + 1 + lenbytes <= bsz ? bsz : 2 * bsz;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
	for (size_t i = 0; i < n; i += bsz)
		block(st, tail + i);
}

static void sha1_block(void *st, const unsigned char *b)
{
	uint32_t *h = st, w[80];
	for (int i = 0; i < 16; i++)
		w[i] = be32(b + 4 * i);
	for (int i = 16; i < 80; i++)
		w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (bb & c) | (~bb & d);
			k = 0x5a827999u;
		} else if (i < 40) {
			f = bb ^ c ^ d;
			k = 0x6ed9eba1u;
		} else if (i < 60) {
			f = (bb & c) | (bb & d) | (c & d);
			k = 0x8f1bbcdcu;
		} else {
			f = bb ^ c ^ d;
			k = 0xca62c1d6u;
		}
		uint32_t t = rol32(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol32(bb, 30);
		bb = a;
		a = t;
	}
	h[0] += a;
	h[1] += bb;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

static const uint64_t sha512_k[80] = {
	0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull,
	0x3956c25bf348b538ull, 0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull,
	0xd807aa98a3030242ull, 0x12835b0145706fbeull, 0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull,
	0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull, 0xc19bf174cf692694ull,
	0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
	0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull,
	0x983e5152ee66dfabull, 0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull,
	0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull, 0x06ca6351e003826full, 0x142929670a0e6e70ull,
	0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull, 0x53380d139d95b3dfull,
	0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
	0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull,
	0xd192e819d6ef5218ull, 0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull,
	0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull, 0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull,
	0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull, 0x682e6ff3d6b2b8a3ull,
	0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
	0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull,
	0xca273eceea26619cull, 0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull,
	0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull, 0x113f9804bef90daeull, 0x1b710b35131c471bull,
	0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull, 0x431d67c49c100d4cull,
	0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull,
};
static const uint64_t sha512_h0[8] = {
	0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
	0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull,
};

static void sha512_block(void *st, const unsigned char *b)
{
	uint64_t *h = st, w[80];
	for (int i = 0; i < 16; i++)
		w[i] = be64(b + 8 * i);
	for (int i = 16; i < 80; i++) {
		uint64_t s0 = ror64(w[i - 15], 1) ^ ror64(w[i - 15], 8) ^ (w[i - 15] >> 7);
		uint64_t s1 = ror64(w[i - 2], 19) ^ ror64(w[i - 2], 61) ^ (w[i - 2] >> 6);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint64_t v[8];
	memcpy(v, h, sizeof(v));
	for (int i = 0; i < 80; i++) {
		uint64_t S1 = ror64(v[4], 14) ^ ror64(v[4], 18) ^ ror64(v[4], 41);
		uint64_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
		uint64_t t1 = v[7] + S1 + ch + sha512_k[i] + w[i];
		uint64_t S0 = ror64(v[0], 28) ^ ror64(v[0], 34) ^ ror64(v[0], 39);
		uint64_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + S0 + maj;
	}
	for (int i = 0; i < 8; i++)
		h[i] += v[i];
}

/* SHA-1 and SHA-512: the padded message's blocks (md_blocks), then the state words big endian */
void sha1_digest(const void *p, size_t len, unsigned char out[20])
{
	uint32_t h[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
	md_blocks(p, len, 64, 8, h, sha1_block);
	put_be_words(out, h, 5, 4);
}

void sha512_digest(const void *p, size_t len, unsigned char out[64])
{
	uint64_t h[8];
	memcpy(h, sha512_h0, sizeof(h));
	md_blocks(p, len, 128, 16, h, sha512_block);
	put_be_words(out, h, 8, 8);
}

static const uint64_t keccak_rc[24] = {
	0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
	0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
	0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
	0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
	0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
	0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};
static const unsigned keccak_rho[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14};

static void keccak_f(uint64_t a[25])
{
	for (int r = 0; r < 24; r++) {
		uint64_t c[5], d, b[25];
		for (int x = 0; x < 5; x++)
			c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
		for (int x = 0; x < 5; x++) {
			d = c[(x + 4) % 5] ^ rol64(c[(x + 1) % 5], 1);
			for (int y = 0; y < 25; y += 5)
				a[y + x] ^= d;
		}
		for (int x = 0; x < 5; x++) /* rho and pi: B[y, 2x+3y] = rot(A[x, y]) */
			for (int y = 0; y < 5; y++)
				b[y + 5 * ((2 * x + 3 * y) % 5)] = rol64(a[x + 5 * y], keccak_rho[x + 5 * y]);
		for (int y = 0; y < 25; y += 5) /* chi */
			for (int x = 0; x < 5; x++)
				a[y + x] = b[y + x] ^ (~b[y + (x + 1) % 5] & b[y + (x + 2) % 5]);
		a[0] ^= keccak_rc[r]; /* iota */
	}
}

void sha3_digest(const void *p, size_t len, unsigned char *out, unsigned outlen)
{
	const unsigned char *m = p;
	size_t rate = 200 - 2 * (size_t)outlen;
	uint64_t a[25] = { 0 };
	unsigned char blk[200];
	for (;;) {
		size_t n = len < rate ? len : rate;
		memset(blk, 0, rate);
		memcpy(blk, m, n);
		if (n < rate) { /* the SHA-3 domain bits 01, then pad10*1 */
			blk[n] ^= 0x06;
			blk[rate - 1] ^= 0x80;
		}
		for (size_t i = 0; i < rate / 8; i++)
			a[i] ^= le64(blk + 8 * i);
		keccak_f(a);
		if (n < rate)
			break;
		m += n;
		len -= n;
	}
	for (unsigned i = 0; i < outlen; i++)
		out[i] = (unsigned char)(a[i / 8] >> (8 * (i % 8)));
}

#define XP1 2654435761u
#define XP2 2246822519u
#define XP3 3266489917u
#define XP4 668265263u
#define XP5 374761393u

uint32_t xxh32(const void *p, size_t len, uint32_t seed)
{
	const unsigned char *b = p, *end = b + len;
	uint32_t h;
	if (len >= 16) {
		uint32_t v[4] = { seed + XP1 + XP2, seed + XP2, seed, seed - XP1 };
		for (; end - b >= 16; b += 16)
			for (int k = 0; k < 4; k++)
				v[k] = rol32(v[k] + le32(b + 4 * k) * XP2, 13) * XP1;
		h = rol32(v[0], 1) + rol32(v[1], 7) + rol32(v[2], 12) + rol32(v[3], 18);
	} else {
		h = seed + XP5;
	}
	h += (uint32_t)len;
	for (; end - b >= 4; b += 4)
		h = rol32(h + le32(b) * XP3, 17) * XP4;
	for (; b < end; b++)
		h = rol32(h + *b * XP5, 11) * XP1;
	h ^= h >> 15;
	h *= XP2;
	h ^= h >> 13;
	h *= XP3;
	h ^= h >> 16;
	return h;
}
