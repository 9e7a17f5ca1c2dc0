/* The rest of fio's verify checksums (src/vsum.c), written from the published specifications;
 * the parameters (polynomial, initial value, reflection, byte order of the stored value) are what
 * fio 3.33 stores, found by checking its files (README § Verification). One-shot: a verify
 * interval is checked whole. Test vectors: tests/unit.c (make check). */
#ifndef IOWATT_VSUM_H
#define IOWATT_VSUM_H

#include <stddef.h>
#include <stdint.h>

uint64_t crc64_jones(const void *p, size_t len); /* ECMA "Jones" 0xad93d23594c935a9, reflected, init 0 */
uint32_t crc32_msb(const void *p, size_t len);   /* 0x04c11db7, MSB first, init 0, no final xor */
uint16_t crc16_arc(const void *p, size_t len);   /* CRC-16/ARC: 0x8005 reflected, init 0 */
uint8_t crc7_msb(const void *p, size_t len);     /* CRC-7 (MMC) 0x09, MSB first, init 0 */
void sha1_digest(const void *p, size_t len, unsigned char out[20]);     /* FIPS 180-4 */
void sha512_digest(const void *p, size_t len, unsigned char out[64]);   /* FIPS 180-4 */
void sha3_digest(const void *p, size_t len, unsigned char *out, unsigned outlen); /* FIPS 202: 28/32/48/64 */
uint32_t xxh32(const void *p, size_t len, uint32_t seed);              /* XXH32 (xxHash spec) */

#endif
