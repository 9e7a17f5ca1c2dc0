/* Checksums of the verify family (src/vhash.c), written from the published specifications:
 * CRC-32C (Castagnoli, RFC 3720 B.4; SSE4.2 crc32 instruction when the CPU has it), MD5 (RFC 1321),
 * SHA-256 (FIPS 180-4). Test vectors: tests/unit.c (make check). */
#ifndef IOWATT_VHASH_H
#define IOWATT_VHASH_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C register after `len` bytes, from `crc` (no inversion in or out): the standard
 * CRC-32C of a buffer is ~crc32c_update(~0u, p, n); fio stores crc32c_update(~0u, p, n). */
uint32_t crc32c_update(uint32_t crc, const void *p, size_t len);
static inline uint32_t crc32c(const void *p, size_t len) { return ~crc32c_update(~0u, p, len); }
int crc32c_hw(void); /* 1 when the SSE4.2 instruction is used */

struct md5_ctx {
	uint32_t h[4];
	uint64_t n;             /* bytes so far */
	unsigned char buf[64];
};
void md5_init(struct md5_ctx *c);
void md5_update(struct md5_ctx *c, const void *p, size_t len);
void md5_final(struct md5_ctx *c, unsigned char out[16]);

struct sha256_ctx {
	uint32_t h[8];
	uint64_t n;
	unsigned char buf[64];
};
void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *p, size_t len);
void sha256_final(struct sha256_ctx *c, unsigned char out[32]);

#endif
