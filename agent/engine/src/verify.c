/* The verify family: fio's verification header and checksums, the write phase's fill, the
 * read-back phases and the checks (README § Verification).
 *
 * On-disk format: fio 3.33's, so files written by either tool verify with the other (crc32c,
 * md5, meta, pattern; sha256 differs, README): each verify interval (default: the block) starts
 * with a 40-byte header -- magic 0xacca (u16), type (u16), len (u32), rand_seed (u64), offset
 * (u64), time_sec, time_nsec (u32), thread, numberio (u16), crc32 (u32: CRC-32C register of the
 * 36 bytes before it, no final inversion) -- then the type's checksum of the rest of the interval
 * (crc32c: 4 bytes, the register as for the header; md5: 16; sha256: a 64-byte field), then
 * data: random, or verify_pattern repeated from the block's first byte (the header written over
 * it). verify_offset swaps header+checksum with the bytes at that offset of the interval.
 *
 * Replay instead of a log: fio keeps an entry per written block in memory for the verify phase;
 * here the verify phase re-runs the workload's own offset generator from its state at the start
 * of the write phase (a copy: the "cursor") and reads what each write wrote, so memory does not
 * grow with the data written (verify_backlog batches advance the same cursor). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verify.h"
#include "multifile.h"
#include "patterns.h"
#include "vhash.h"
#include "vsum.h"

#define POOL_BYTES (256u << 10)
#define POOL_SEED 0x7e51f1ca7105eedull /* fixed: any run regenerates what another wrote */

struct vjob {
	int type;
	uint32_t interval, hsz, csz;
	uint64_t nonce;                 /* per run: the seeds of this run's blocks */
	unsigned char *pool;
	uint64_t pool_len;
	int check_seq;                  /* each block written once per worker: numberio and seed known */
	/* numjobs > 1: every clone finishes writing before any reads back */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned arrived;
	int dirfd;                      /* verify_dump: the target's directory, -1 = none */
	_Atomic unsigned dumps;
	char dumped[VERIFY_DUMP_MAX][320];
	char base[256];                 /* the target's file name, for dump names */
};

static const struct { const char *name; int type; uint32_t csz; } vtypes[] = {
	{ "0", VT_NONE, 0 }, { "md5", VT_MD5, 16 }, { "crc32c", VT_CRC32C, 4 }, { "crc32c-intel", VT_CRC32C, 4 },
	{ "sha256", VT_SHA256, 64 }, { "meta", VT_META, 0 }, { "pattern", VT_PATTERN_NOHDR, 0 },
	{ "pattern", VT_PATTERN, 0 }, { "null", VT_NULL, 0 },
	/* the rest of fio's checksums (src/vsum.c); the sizes are fio's fields */
	{ "crc64", VT_CRC64, 8 }, { "crc32", VT_CRC32, 4 }, { "crc16", VT_CRC16, 2 }, { "crc7", VT_CRC7, 1 },
	{ "sha1", VT_SHA1, 20 }, { "sha512", VT_SHA512, 128 }, { "sha3-224", VT_SHA3_224, 28 },
	{ "sha3-256", VT_SHA3_256, 32 }, { "sha3-384", VT_SHA3_384, 48 }, { "sha3-512", VT_SHA3_512, 64 },
	{ "xxhash", VT_XXHASH, 4 },
};

const char *verify_type_name(int t)
{
	for (size_t i = 0; i < sizeof(vtypes) / sizeof(vtypes[0]); i++)
		if (vtypes[i].type == t)
			return t == VT_PATTERN ? "pattern+header" : vtypes[i].name;
	return "?";
}

static uint32_t csum_bytes(int t)
{
	for (size_t i = 0; i < sizeof(vtypes) / sizeof(vtypes[0]); i++)
		if (vtypes[i].type == t)
			return vtypes[i].csz;
	return 0;
}

static uint32_t hdr_bytes(int t)
{
	return t == VT_PATTERN_NOHDR || t == VT_NULL ? 0 : VERIFY_HDR_BYTES + csum_bytes(t);
}

static inline int isxdigit_c(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* ---- verify_pattern: fio's syntax ----
 * 0xHEX (bytes as written), a decimal number (little-endian in as few bytes as it needs; a
 * negative one as 4 bytes), "string" or 'string', %o (the block's offset, 8 bytes LE); pieces
 * may follow each other directly or with blanks between them. */
int verify_pattern_parse(const char *s, struct vpattern *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	size_t n = 0;
#define PUT(byte) do { if (n >= VERIFY_PATTERN_MAX) goto toolong; p->b[n++] = (unsigned char)(byte); } while (0)
	while (*s) {
		if (*s == ' ' || *s == '\t') {
			s++;
		} else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			const char *h = s + 2;
			size_t k = 0;
			while (isxdigit_c(h[k]))
				k++;
			if (!k) {
				snprintf(err, errlen, "'0x' without hex digits");
				return -EINVAL;
			}
			for (size_t i = 0; i < k;) {
				unsigned v = 0;
				size_t take = (i == 0 && (k & 1)) ? 1 : 2; /* odd count: the first byte is one digit */
				for (size_t t = 0; t < take; t++, i++)
					v = v * 16 + (unsigned)(h[i] <= '9' ? h[i] - '0' : (h[i] | 0x20) - 'a' + 10);
				PUT(v);
			}
			s = h + k;
		} else if (*s == '"' || *s == '\'') {
			const char q = *s++, *e = strchr(s, q);
			if (!e) {
				snprintf(err, errlen, "unterminated string");
				return -EINVAL;
			}
			if (e == s) {
				snprintf(err, errlen, "empty string");
				return -EINVAL;
			}
			for (; s < e; s++)
				PUT(*s);
			s++;
		} else if (s[0] == '%' && s[1] == 'o') {
			if (p->noff >= VERIFY_PATTERN_OFFS) {
				snprintf(err, errlen, "more than %d %%o", VERIFY_PATTERN_OFFS);
				return -EINVAL;
			}
			if (n + 8 > VERIFY_PATTERN_MAX)
				goto toolong;
			p->off_at[p->noff++] = (uint16_t)n;
			for (int i = 0; i < 8; i++)
				PUT(0);
			s += 2;
		} else if (*s == '-' || (*s >= '0' && *s <= '9')) {
			int neg = *s == '-';
			const char *d = s + neg;
			uint64_t v = 0;
			size_t k = 0;
			for (; d[k] >= '0' && d[k] <= '9'; k++) {
				if (v > (UINT32_MAX - (unsigned)(d[k] - '0')) / 10) {
					snprintf(err, errlen, "decimal number larger than 32 bits (use 0x...)");
					return -EINVAL;
				}
				v = v * 10 + (unsigned)(d[k] - '0');
			}
			if (!k) {
				snprintf(err, errlen, "'-' without a number");
				return -EINVAL;
			}
			if (neg) {
				if (v > 0x80000000ull) {
					snprintf(err, errlen, "negative number below -2^31");
					return -EINVAL;
				}
				uint32_t u = (uint32_t)(0u - (uint32_t)v);
				for (int i = 0; i < 4; i++)
					PUT(u >> (8 * i));
			} else {
				do {
					PUT(v & 0xff);
					v >>= 8;
				} while (v);
			}
			s = d + k;
		} else {
			snprintf(err, errlen, "unexpected '%c' (0xHEX, a number, \"text\" or %%o)", *s);
			return -EINVAL;
		}
	}
#undef PUT
	if (!n) {
		snprintf(err, errlen, "empty pattern");
		return -EINVAL;
	}
	p->len = (uint16_t)n;
	return 0;
toolong:
	snprintf(err, errlen, "longer than %d bytes", VERIFY_PATTERN_MAX);
	return -EINVAL;
}

void verify_parse_pattern(struct options *o, const char *name, const char *val)
{
	char err[128];
	if (strlen(val) >= sizeof(o->verify_pattern_text))
		die_usage(name, "longer than %zu characters", sizeof(o->verify_pattern_text) - 1);
	if (verify_pattern_parse(val, &o->verify_pattern, err, sizeof(err)) < 0)
		die_usage(name, "%s in '%s'", err, val);
	strcpy(o->verify_pattern_text, val);
}

/* the block size(s) the checks see: the writes' (the verify phase replays them), a read job's reads */
static void verified_bs(const struct options *o, uint64_t *mn, uint64_t *mx)
{
	int d = rw_writes(o->rw) ? 1 : 0;
	*mn = UINT64_MAX;
	*mx = 0;
	if (o->nbssplit[d]) {
		for (int i = 0; i < o->nbssplit[d]; i++) { /* 0 % entries too: fio's min_bs and max_bs */
			if (o->bssplit[d][i].bs < *mn)
				*mn = o->bssplit[d][i].bs;
			if (o->bssplit[d][i].bs > *mx)
				*mx = o->bssplit[d][i].bs;
		}
	} else {
		*mn = *mx = o->bs[d];
	}
}

void verify_finalize(struct options *o)
{
	if (o->verify_pattern.len && !o->verify_set)
		o->verify = VT_PATTERN; /* fio: verify_pattern alone verifies the pattern, header included */
	if (o->verify == VT_NONE) {
		if (o->verify_only)
			die_usage("verify_only", "needs verify=TYPE (what to check)");
		return;
	}
	if (o->verify_state_save)
		die_usage("verify_state_save", "verify state files are not implemented (no trigger support): give 0");
	if (o->verify_state_load)
		die_usage("verify_state_load", "verify state files are not implemented (no trigger support): give 0");
	if (o->verify == VT_PATTERN_NOHDR && !o->verify_pattern.len)
		die_usage("verify", "pattern needs verify_pattern=... (the bytes to check)");
	if (o->zero_buffers)
		die_usage("zero_buffers", "cannot be combined with verify (the blocks carry verifiable data)");
	if (o->compress_pct)
		die_usage("buffer_compress_percentage", "cannot be combined with verify (the blocks carry verifiable data)");
	if (o->verify_only && o->time_based)
		die_usage("verify_only", "cannot replay a time_based workload (fio refuses it too)");
	if (o->verify_only && !rw_writes(o->rw))
		o->verify_only = 0; /* a read job verifies what it reads anyway */
	uint64_t mn, mx;
	verified_bs(o, &mn, &mx);
	uint64_t iv = o->verify_interval ? o->verify_interval : mn;
	uint32_t hsz = hdr_bytes(o->verify);
	if (iv > UINT32_MAX)
		die_usage("verify_interval", "larger than 4 GiB");
	if (hsz && iv <= hsz)
		die_usage(o->verify_interval ? "verify_interval" : "bs",
			  "the verify interval (%llu bytes) must be larger than the %s header (%u bytes)",
			  (unsigned long long)iv, verify_type_name(o->verify), hsz);
	for (int d = 0; d < 2; d++) {
		if (o->nbssplit[d]) {
			for (int i = 0; i < o->nbssplit[d]; i++)
				if (o->bssplit[d][i].pct && o->bssplit[d][i].bs % iv)
					die_usage("verify_interval", "%llu does not divide the block size %llu",
						  (unsigned long long)iv, (unsigned long long)o->bssplit[d][i].bs);
		} else if ((d == 1 ? rw_writes(o->rw) : rw_reads(o->rw)) && o->bs[d] % iv) {
			die_usage("verify_interval", "%llu does not divide the block size %llu", (unsigned long long)iv,
				  (unsigned long long)o->bs[d]);
		}
	}
	if (o->verify_offset && (!hsz || o->verify_offset + hsz > iv))
		die_usage("verify_offset", "%llu + the %u-byte header does not fit in the %llu-byte verify interval",
			  (unsigned long long)o->verify_offset, hsz, (unsigned long long)iv);
	if (o->norandommap && rw_is_random(o->rw) && opt_max_bs(o) != opt_min_bs(o))
		die_usage("norandommap", "with verify and variable block sizes, later writes partly overwrite earlier "
			  "blocks, which then fail (fio: \"verify limited\")");
	if (!o->verify_backlog_batch)
		o->verify_backlog_batch = o->verify_backlog;
}

/* fio 3.33's job loop (thread_main, keep_running) writes one pass, reads it back, and then
 * starts another pass while the job's bytes, the read-back's included, are short of io_size (or
 * size). The engine does so for hole patterns (the pattern generator's passes) and for plain
 * rw=write and randwrite of one block size (verify_io_passes: io_size=1m, size=256k, bs=16k is
 * 32 writes and 32 reads in both, where one write phase was 64 and 64). Refused where it is not
 * fio's loop: randwrite with norandommap writes io_size in one pass and reads back only the
 * latest write of each block (fio's verify list drops overlapped writes: 64 writes, 8 reads),
 * mixed jobs, trims and the other patterns, several block sizes */
int verify_io_passes(const struct options *o)
{
	return o->verify != VT_NONE && o->do_verify && !o->verify_only && !o->time_based && o->io_size > o->size &&
	       (o->rw == RW_WRITE || (o->rw == RW_RANDWRITE && !o->norandommap)) && !pat_active(o) &&
	       opt_min_bs(o) == opt_max_bs(o);
}

/* trimwrite and randtrimwrite with io_size > size: the pattern generator's passes (patterns.c's
 * new_pass, fio's keep_running with the read-back's bytes counted), the writes read back at the
 * end: 64k, io_size=256k is 2 passes, 32 trims, writes and reads, as fio's. One block size
 * (trims take the writes' size) */
static int trimwrite_passes(const struct options *o)
{
	return rw_trimwrite(o->rw) && !o->rw_seq_add && opt_min_bs(o) == opt_max_bs(o);
}

void verify_validate(const struct options *o, const struct target *t)
{
	if (o->verify != VT_NONE && o->verify_dump && t->is_blk)
		die_usage("verify_dump", "the target is a block device: no directory to write the dumps in");
	if (o->verify == VT_NONE || !o->do_verify || o->verify_only || o->time_based || !rw_writes(o->rw))
		return;
	/* randwrite with norandommap: fio writes io_size in one pass and reads back each block once,
	 * as verify_latest_only does */
	if (o->io_size > o->size && o->rw_seq_add <= 0 && !verify_io_passes(o) && !trimwrite_passes(o) &&
	    !(o->rw == RW_RANDWRITE && verify_latest_only(o)))
		die_usage("io_size", "%llu is larger than size (%llu) with verify: implemented for rw=write, "
			  "randwrite, trimwrite and randtrimwrite of one block size (fio's passes, each read back "
			  "before the next; randwrite with norandommap one pass, each block read back once), not "
			  "for mixed jobs, the other patterns or verify_backlog with norandommap",
			  (unsigned long long)o->io_size, (unsigned long long)o->size);
}

/* ---- the data ---- */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t block_seed(const struct vjob *vj, unsigned thread, uint64_t seq)
{
	return mix64(vj->nonce ^ ((uint64_t)thread << 48) ^ mix64(seq + 1)) | 1; /* 0 = pattern */
}

uint64_t verify_block_seed(const struct job *j, unsigned thread, uint64_t seq)
{
	return block_seed(j->vj, thread, seq);
}

/* random data of a seed: pool bytes from a seed-chosen place, XORed with a seed-made key */
static void fill_random(const struct vjob *vj, unsigned char *b, uint32_t len, uint64_t seed)
{
	uint64_t span = vj->pool_len - len + 1, key = mix64(seed ^ 0x5eed);
	const unsigned char *src = vj->pool + ((mix64(seed) % span) & ~7ull);
	uint32_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, src + i, 8);
		v ^= key;
		memcpy(b + i, &v, 8);
	}
	for (; i < len; i++)
		b[i] = src[i] ^ (unsigned char)(key >> (8 * (i & 7)));
}

static void fill_pattern(const struct vpattern *p, unsigned char *b, uint32_t len, uint64_t off)
{
	unsigned char period[VERIFY_PATTERN_MAX];
	memcpy(period, p->b, p->len);
	for (int k = 0; k < p->noff; k++)
		for (int i = 0; i < 8; i++)
			period[p->off_at[k] + i] = (unsigned char)(off >> (8 * i));
	for (uint32_t i = 0; i < len; i += p->len)
		memcpy(b + i, period, len - i < p->len ? len - i : p->len);
}

static inline void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void checksum(int type, const unsigned char *p, uint32_t len, unsigned char *out)
{
	switch (type) {
	case VT_CRC32C:
		put32(out, crc32c_update(~0u, p, len));
		break;
	case VT_MD5: {
		struct md5_ctx c;
		md5_init(&c);
		md5_update(&c, p, len);
		md5_final(&c, out);
		break;
	}
	case VT_SHA256: {
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, p, len);
		sha256_final(&c, out);
		memset(out + 32, 0, 32); /* fio's field is 64 bytes */
		break;
	}
	/* as fio 3.33 stores them: little-endian CRCs, sha1's five words little-endian (fio keeps
	 * them as host words), XXH32 with seed 1; sha512 as FIPS (then 64 zero bytes of its 128) */
	case VT_CRC64:
		put64(out, crc64_jones(p, len));
		break;
	case VT_CRC32:
		put32(out, crc32_msb(p, len));
		break;
	case VT_CRC16:
		put16(out, crc16_arc(p, len));
		break;
	case VT_CRC7:
		out[0] = crc7_msb(p, len);
		break;
	case VT_SHA1: {
		unsigned char d[20];
		sha1_digest(p, len, d);
		for (int i = 0; i < 20; i++)
			out[i] = d[(i & ~3) + 3 - (i & 3)];
		break;
	}
	case VT_SHA512:
		sha512_digest(p, len, out);
		memset(out + 64, 0, 64);
		break;
	case VT_SHA3_224:
	case VT_SHA3_256:
	case VT_SHA3_384:
	case VT_SHA3_512:
		sha3_digest(p, len, out, csum_bytes(type));
		break;
	case VT_XXHASH:
		put32(out, xxh32(p, len, 1));
		break;
	default:
		break;
	}
}

static void swap_bytes(unsigned char *a, unsigned char *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned char t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

void verify_fill_block(const struct job *j, unsigned thread, unsigned char *buf, uint32_t len, uint64_t off,
		       uint64_t seq, uint64_t seed)
{
	const struct vjob *vj = j->vj;
	const struct options *o = j->o;
	if (o->verify_pattern.len) {
		fill_pattern(&o->verify_pattern, buf, len, off);
		seed = 0;
	} else {
		fill_random(vj, buf, len, seed);
	}
	if (!vj->hsz)
		return;
	uint64_t t = now_ns() - j->t_start;
	for (uint32_t p = 0; p + vj->interval <= len; p += vj->interval) {
		unsigned char *h = buf + p;
		put16(h, VERIFY_MAGIC);
		put16(h + 2, (uint16_t)vj->type);
		put32(h + 4, vj->interval);
		put64(h + 8, seed);
		put64(h + 16, off + p);
		put32(h + 24, (uint32_t)(t / 1000000000ull));
		put32(h + 28, (uint32_t)(t % 1000000000ull));
		put16(h + 32, (uint16_t)thread);
		put16(h + 34, (uint16_t)seq);
		put32(h + 36, crc32c_update(~0u, h, 36));
		if (vj->csz)
			checksum(vj->type, h + vj->hsz, vj->interval - vj->hsz, h + VERIFY_HDR_BYTES);
		if (o->verify_offset)
			swap_bytes(h, h + o->verify_offset, vj->hsz);
	}
}

/* ---- the checks ---- */
static void hexs(char *out, size_t outlen, const unsigned char *p, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 3 <= outlen; i++)
		k += (size_t)snprintf(out + k, outlen - k, "%02x", p[i]);
}

static void dump_file(struct worker *w, const char *kind, uint64_t off, const unsigned char *p, uint32_t n)
{
	struct vjob *vj = w->job->vj;
	if (vj->dirfd < 0)
		return;
	unsigned k = atomic_fetch_add(&vj->dumps, 1);
	if (k >= VERIFY_DUMP_MAX)
		return;
	char name[sizeof(vj->dumped[0])];
	snprintf(name, sizeof(name), "%s.%llu.%s", vj->base, (unsigned long long)off, kind);
	int fd = openat(vj->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		warnmsg("%s: verify_dump: %s: %s", w->job->o->name, name, strerror(errno));
		return;
	}
	ssize_t r = write(fd, p, n);
	if (r != (ssize_t)n)
		warnmsg("%s: verify_dump: %s: short write", w->job->o->name, name);
	close(fd);
	str_copy(vj->dumped[k], sizeof(vj->dumped[k]), name);
}

static void record(struct worker *w, struct vfail *f, const unsigned char *iv, const unsigned char *expect)
{
	struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	f->file = w->job->mf ? v->cur_file : -1;
	char in[PATH_MAX + 8] = "";
	if (f->file >= 0)
		snprintf(in, sizeof(in), " in %s", w->job->mf->files[f->file].tgt.path);
	v->bad_intervals++;
	if (v->nfails < VERIFY_FAILS_KEPT)
		v->fails[v->nfails++] = *f;
	if (v->printed < VERIFY_STDERR_LINES) {
		char extra[96] = "";
		if (f->first_bad >= 0)
			snprintf(extra, sizeof(extra), "; first differing byte at offset %lld (%llu bytes differ)",
				 (long long)f->first_bad, (unsigned long long)f->bad_bytes);
		warnmsg("%s: verify: %s mismatch%s at offset %llu, length %u (block at %llu, length %u): expected %s, "
			"received %s%s", o->name, f->what, in, (unsigned long long)f->offset, f->length,
			(unsigned long long)f->block_offset, f->block_length, f->expected, f->actual, extra);
		v->printed++;
	}
	if (o->verify_dump) {
		dump_file(w, "received", f->offset, iv, f->length);
		if (expect)
			dump_file(w, "expected", f->offset, expect, f->length);
	}
	if (o->verify_fatal && !w->err) {
		w->err = -EILSEQ;
		snprintf(w->errmsg, sizeof(w->errmsg), "verify: %s mismatch%s at offset %llu (verify_fatal)", f->what, in,
			 (unsigned long long)f->offset);
	}
}

/* compare the data region [from, len) of an interval with what should be there */
static void diff_data(struct vfail *f, const unsigned char *got, const unsigned char *want, uint32_t from,
		      uint32_t len, uint64_t ivoff)
{
	uint64_t bad = 0;
	int64_t first = -1;
	for (uint32_t i = from; i < len; i++)
		if (got[i] != want[i]) {
			if (first < 0)
				first = i;
			bad++;
		}
	/* far too many differences: not data this generator made (another tool, another seed) */
	if (first >= 0 && bad <= (len - from) / 4) {
		f->first_bad = (int64_t)ivoff + first;
		f->bad_bytes = bad;
	}
}

/* Check one block read back (len bytes at off): 0, or the number of bad intervals. */
int verify_check_block(struct worker *w, const unsigned char *rbuf, uint32_t len, uint64_t off, uint64_t seq,
		       int check_seq)
{
	struct vworker *v = w->vw;
	const struct job *j = w->job;
	const struct vjob *vj = j->vj;
	const struct options *o = j->o;
	unsigned char *exp = v->scratch;            /* expected block (data part) */
	unsigned char *ivb = v->scratch + j->max_bs; /* one interval as written (verify_offset undone) */
	const uint32_t ivl = vj->interval, hsz = vj->hsz;
	int nbad = 0, have_exp = 0;
	v->blocks++;
	v->bytes += len;
	if (vj->type == VT_NULL)
		return 0;
	for (uint32_t p = 0; p + ivl <= len; p += ivl) {
		v->intervals++;
		memcpy(ivb, rbuf + p, ivl);
		if (o->verify_offset)
			swap_bytes(ivb, ivb + o->verify_offset, hsz);
		struct vfail f = { .offset = off + p, .length = ivl, .block_offset = off, .block_length = len,
				   .first_bad = -1 };
		if (!have_exp && (o->verify_pattern.len || vj->type == VT_PATTERN_NOHDR)) {
			fill_pattern(&o->verify_pattern, exp, len, off);
			have_exp = 1;
		}
		if (vj->type == VT_PATTERN_NOHDR) {
			if (memcmp(ivb, exp + p, ivl)) {
				f.what = "pattern";
				for (uint32_t i = 0; i < ivl; i++)
					if (ivb[i] != exp[p + i]) {
						if (f.first_bad < 0) {
							f.first_bad = (int64_t)(off + p + i);
							hexs(f.expected, sizeof(f.expected), exp + p + i, ivl - i < 16 ? ivl - i : 16);
							hexs(f.actual, sizeof(f.actual), ivb + i, ivl - i < 16 ? ivl - i : 16);
						}
						f.bad_bytes++;
					}
				record(w, &f, ivb, exp + p);
				nbad++;
				if (o->verify_fatal)
					break;
			}
			continue;
		}
		/* the header, in fio's order */
		uint64_t want_seed = check_seq ? block_seed(vj, w->id + 1, seq) : 0;
		if (get16(ivb) != VERIFY_MAGIC) {
			f.what = "magic";
			snprintf(f.expected, sizeof(f.expected), "%04x", VERIFY_MAGIC);
			snprintf(f.actual, sizeof(f.actual), "%04x", get16(ivb));
		} else if (get32(ivb + 4) != ivl) {
			f.what = "len";
			snprintf(f.expected, sizeof(f.expected), "%u", ivl);
			snprintf(f.actual, sizeof(f.actual), "%u", get32(ivb + 4));
		} else if (get64(ivb + 16) != off + p) {
			f.what = "offset";
			snprintf(f.expected, sizeof(f.expected), "%llu", (unsigned long long)(off + p));
			snprintf(f.actual, sizeof(f.actual), "%llu", (unsigned long long)get64(ivb + 16));
		} else if (crc32c_update(~0u, ivb, 36) != get32(ivb + 36)) {
			f.what = "header_crc";
			snprintf(f.expected, sizeof(f.expected), "%08x", crc32c_update(~0u, ivb, 36));
			snprintf(f.actual, sizeof(f.actual), "%08x", get32(ivb + 36));
		} else if (check_seq && !o->verify_pattern.len && get64(ivb + 8) != want_seed) {
			/* a block of another write (an earlier run, a lost write): right place, wrong data */
			f.what = "rand_seed";
			snprintf(f.expected, sizeof(f.expected), "%016llx", (unsigned long long)want_seed);
			snprintf(f.actual, sizeof(f.actual), "%016llx", (unsigned long long)get64(ivb + 8));
		} else if (check_seq && get16(ivb + 34) != (uint16_t)seq) {
			f.what = "numberio";
			snprintf(f.expected, sizeof(f.expected), "%u", (unsigned)(uint16_t)seq);
			snprintf(f.actual, sizeof(f.actual), "%u", get16(ivb + 34));
		}
		if (f.what) {
			record(w, &f, ivb, NULL);
			nbad++;
			if (o->verify_fatal)
				break;
			continue;
		}
		/* the data: checksum, then the pattern when one was written */
		if (vj->csz) {
			unsigned char sum[128];
			checksum(vj->type, ivb + hsz, ivl - hsz, sum);
			if (memcmp(sum, ivb + VERIFY_HDR_BYTES, vj->csz)) {
				f.what = verify_type_name(vj->type);
				uint32_t shown = vj->type == VT_SHA256 || vj->type == VT_SHA512 ? vj->csz / 2 : vj->csz;
				hexs(f.expected, sizeof(f.expected), ivb + VERIFY_HDR_BYTES, shown); /* stored when written */
				hexs(f.actual, sizeof(f.actual), sum, shown);                        /* of the data read */
			}
		}
		if (!f.what && o->verify_pattern.len && memcmp(ivb + hsz, exp + p + hsz, ivl - hsz)) {
			f.what = "pattern";
			for (uint32_t i = hsz; i < ivl; i++)
				if (ivb[i] != exp[p + i]) {
					hexs(f.expected, sizeof(f.expected), exp + p + i, ivl - i < 16 ? ivl - i : 16);
					hexs(f.actual, sizeof(f.actual), ivb + i, ivl - i < 16 ? ivl - i : 16);
					break;
				}
		}
		if (!f.what)
			continue;
		/* where: regenerate what was written (the header's seed) and compare */
		const unsigned char *want = NULL;
		if (o->verify_pattern.len) {
			want = exp + p;
		} else {
			uint64_t seed = get64(ivb + 8);
			if (seed) {
				unsigned char *blk = exp; /* the whole block's data: its random fill is one piece */
				fill_random(vj, blk, len, seed);
				want = blk + p;
				have_exp = 0;
			}
		}
		if (want) {
			unsigned char tmp[VERIFY_HDR_BYTES + 128]; /* the largest field: sha512 */
			memcpy(tmp, want, hsz);
			memcpy((unsigned char *)want, ivb, hsz); /* header as read: the dump shows only data differences */
			diff_data(&f, ivb, want, hsz, ivl, off + p);
			record(w, &f, ivb, want);
			memcpy((unsigned char *)want, tmp, hsz);
		} else {
			record(w, &f, ivb, NULL);
		}
		nbad++;
		if (o->verify_fatal)
			break;
	}
	return nbad;
}

/* ---- phases ---- */
int verify_job_init(struct job *j)
{
	const struct options *o = j->o;
	struct vjob *vj = calloc(1, sizeof(*vj));
	if (!vj)
		return -ENOMEM;
	vj->dirfd = -1;
	j->vj = vj;
	vj->type = o->verify;
	uint64_t mn, mx;
	verified_bs(o, &mn, &mx);
	vj->interval = (uint32_t)(o->verify_interval ? o->verify_interval : mn);
	vj->hsz = hdr_bytes(o->verify);
	vj->csz = csum_bytes(o->verify);
	vj->nonce = mix64(now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)j->index);
	vj->pool_len = POOL_BYTES + j->max_bs;
	vj->pool = malloc(vj->pool_len);
	if (!vj->pool)
		return -ENOMEM;
	struct rng r;
	rng_seed(&r, POOL_SEED);
	for (uint64_t i = 0; i + 8 <= vj->pool_len; i += 8) {
		uint64_t v = rng_next(&r);
		memcpy(vj->pool + i, &v, 8);
	}
	/* numberio and the seed are checked only where each block is written exactly once by one
	 * thread (as fio checks numberio: fixed block size, not time_based, not verify_only) */
	vj->check_seq = o->numjobs == 1 && o->loops == 1 && !o->time_based && opt_min_bs(o) == opt_max_bs(o) &&
			o->dist == DIST_RANDOM && !(rw_is_random(o->rw) && o->norandommap) &&
			(!o->io_size || o->io_size <= o->size) && !o->verify_only &&
			!pat_active(o); /* holes that wrap, repeated offsets (src/patterns.c) */
	pthread_mutex_init(&vj->mu, NULL);
	pthread_cond_init(&vj->cv, NULL);
	if (o->verify_dump) {
		/* the dumps go beside the target: its directory, beneath DIR when confined */
		const struct tfile *tf = j->tgt.f;
		const char *path = o->filename, *slash = strrchr(path, '/');
		str_copy(vj->base, sizeof(vj->base), slash ? slash + 1 : path);
		if (tf && tf->dirfd >= 0) {
			char rel[PATH_MAX];
			const char *leaf;
			str_copy(rel, sizeof(rel), tf->rel);
			int pfd = confined_parent(tf->dirfd, rel, &leaf);
			if (pfd >= 0) {
				vj->dirfd = pfd == tf->dirfd ? dup(pfd) : pfd;
			}
		} else {
			char dir[PATH_MAX];
			str_copy(dir, sizeof(dir), path);
			char *s = strrchr(dir, '/');
			if (s == dir)
				s[1] = 0;
			else if (s)
				*s = 0;
			else
				strcpy(dir, ".");
			vj->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (vj->dirfd < 0)
			warnmsg("%s: verify_dump: cannot open the target's directory: %s", o->name, strerror(errno));
	}
	return 0;
}

void verify_job_free(struct job *j)
{
	struct vjob *vj = j->vj;
	if (!vj)
		return;
	if (vj->dirfd >= 0)
		close(vj->dirfd);
	pthread_mutex_destroy(&vj->mu);
	pthread_cond_destroy(&vj->cv);
	free(vj->pool);
	free(vj);
	j->vj = NULL;
}

/* fio 3.33 logs each write for its read-back (log_io_piece): with a random map in a list, without
 * one (sequential jobs, norandommap) in a tree by offset that drops an earlier write the new one
 * overlaps, so a block written several times in a phase is read back once, as its latest write,
 * and the read-back goes in offset order. Where that can happen here (random writes with
 * norandommap, backwards holes: rw=write:-N) the read-back is each written block once, in offset
 * order, from a bitmap of the region's blocks (1 bit per block; the replay cursor elsewhere needs
 * none). Measured beside fio: rw=write:-8k, bs=4k, size=64k 16 writes and 15 reads in both (the
 * cursor replayed 16); -12k 8, -16k 5, -4k 1 (the same block 16 times). Not with verify_backlog
 * (fio's batches come from that tree too), loops, verify_only, several files or block sizes */
int verify_latest_only(const struct options *o)
{
	return o->verify != VT_NONE && o->do_verify && !o->verify_only && !o->verify_backlog && o->loops == 1 &&
	       ((rw_is_random(o->rw) && o->norandommap) || o->rw_seq_add < 0) &&
	       (o->rw == RW_WRITE || o->rw == RW_RANDWRITE) && opt_min_bs(o) == opt_max_bs(o) && !mf_wanted(o);
}

int verify_worker_init(struct worker *w)
{
	struct vworker *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->vw = v;
	v->fills = w->job->vj->type != VT_NULL;
	v->cur_file = -1;
	/* the log only where a read-back follows (a time-based job's runtime ends its writes: none) */
	v->logged = w->mfw && w->mfw->n > 1 && w->job->o->do_verify && !w->job->o->time_based;
	v->scratch = malloc(2 * w->job->max_bs + 64);
	if (!v->scratch)
		return -ENOMEM;
	if (w->map) {
		v->map = calloc((w->nblocks + 63) / 64, sizeof(uint64_t));
		if (!v->map)
			return -ENOMEM;
	}
	if (w->pat && !(v->pat = pat_clone(w->pat))) /* the pattern's state as the writes begin */
		return -ENOMEM;
	if (verify_latest_only(w->job->o) && !w->mfw && w->nblocks &&
	    !(v->wmap = calloc((w->nblocks + 63) / 64, sizeof(uint64_t))))
		return -ENOMEM;
	return 0;
}

/* verify_latest_only's read-back: the next block written, in offset order, once; 1 when none is left */
static int latest_next(struct worker *w, struct io_req *r)
{
	struct vworker *v = w->vw;
	const uint64_t words = (w->nblocks + 63) / 64;
	for (uint64_t k = v->wmap_i / 64; k < words && !g_stop; k++) {
		uint64_t bits = v->wmap[k] & (~0ull << (k == v->wmap_i / 64 ? v->wmap_i % 64 : 0));
		if (!bits)
			continue;
		uint64_t i = k * 64 + (uint64_t)__builtin_ctzll(bits);
		v->wmap[k] &= ~(1ull << (i % 64));
		v->wmap_i = i + 1;
		r->ddir = DDIR_READ;
		r->off = w->roff + i * w->minbs;
		r->len = (uint32_t)w->minbs;
		r->vseq = v->replayed++;
		r->vcheck = w->job->vj->type == VT_NULL ? 0 : 1;
		return 0;
	}
	return 1;
}

void verify_worker_free(struct worker *w)
{
	if (!w->vw)
		return;
	free(w->vw->scratch);
	free(w->vw->map);
	free(w->vw->pat);
	free(w->vw->wmap);
	free(w->vw->log);
	free(w->vw);
	w->vw = NULL;
}

/* several files per clone: log a write (0, or -ENOMEM) */
static int log_write(struct worker *w, const struct io_req *r)
{
	struct vworker *v = w->vw;
	if (v->nlog == v->logcap) {
		/* one entry per smallest block of the clone's bytes at most (loops and io_size > size are
		 * refused with several files; writes in ramp_time come on top): libs/policy's memory
		 * rule counts 24 bytes per block */
		uint64_t most = w->budget / (w->minbs ? w->minbs : 1) + 1;
		uint64_t cap = v->logcap ? v->logcap * 2 : 1024;
		if (cap > most && most > v->nlog)
			cap = most;
		struct vlogent *n = realloc(v->log, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		v->log = n;
		v->logcap = cap;
	}
	v->log[v->nlog++] = (struct vlogent){ .off = r->off, .vseq = r->vseq, .len = r->len, .fidx = r->fidx };
	return 0;
}

static int log_cmp(const void *a, const void *b)
{
	const struct vlogent *x = a, *y = b;
	if (x->fidx != y->fidx)
		return x->fidx < y->fidx ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->vseq < y->vseq ? -1 : x->vseq > y->vseq;
}

/* fio 3.33's log_io_piece: with a random map (rw random, not norandommap) the writes are read
 * back in the order written; otherwise from a tree by file and offset where a write replaces an
 * earlier one at its offset (the writes have one block size with several files: patterns.c) */
static void log_order(struct worker *w)
{
	struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	v->log_i = 0;
	if (rw_is_random(o->rw) && !o->norandommap)
		return;
	qsort(v->log, v->nlog, sizeof(*v->log), log_cmp);
	uint64_t k = 0;
	for (uint64_t i = 0; i < v->nlog; i++) {
		if (k && v->log[k - 1].fidx == v->log[i].fidx && v->log[k - 1].off == v->log[i].off)
			k--; /* the later write of the same block replaces the earlier */
		v->log[k++] = v->log[i];
	}
	v->nlog = k;
}

/* the log's next write, as a read to check; 1 when all are read back */
static int log_next(struct worker *w, struct io_req *r)
{
	struct vworker *v = w->vw;
	if (v->log_i >= v->nlog || g_stop)
		return 1;
	const struct vlogent *e = &v->log[v->log_i++];
	int err = mf_verify_file(w, r, e->fidx);
	if (err) {
		w->err = err;
		return 1;
	}
	r->ddir = DDIR_READ;
	r->off = e->off;
	r->len = e->len;
	r->vseq = e->vseq;
	v->replayed++;
	r->vcheck = w->job->vj->type == VT_NULL ? 0 : 1;
	return 0;
}

/* the cursor starts from the worker's generator state (copied, not swapped) */
static void cursor_copy(struct vworker *v, const struct worker *w)
{
	v->rng = w->rng;
	v->perm = w->perm;
	v->perm_i = w->perm_i;
	v->seq_pos[0] = w->seq_pos[0];
	v->seq_pos[1] = w->seq_pos[1];
	v->issued = w->issued;
	v->nios = w->nios;
}

/* swap the worker's generator state with the cursor's */
static void cursor_swap(struct worker *w)
{
	struct vworker *v = w->vw;
	struct rng r = w->rng;
	w->rng = v->rng;
	v->rng = r;
	struct perm p = w->perm;
	w->perm = v->perm;
	v->perm = p;
	uint64_t t = w->perm_i;
	w->perm_i = v->perm_i;
	v->perm_i = t;
	for (int d = 0; d < 2; d++) {
		t = w->seq_pos[d];
		w->seq_pos[d] = v->seq_pos[d];
		v->seq_pos[d] = t;
	}
	t = w->issued;
	w->issued = v->issued;
	v->issued = t;
	t = w->nios;
	w->nios = v->nios;
	v->nios = t;
	uint64_t *m = w->map;
	w->map = v->map;
	v->map = m;
	struct patgen *pg = w->pat;
	w->pat = v->pat;
	v->pat = pg;
}

void verify_start(struct worker *w)
{
	struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	cursor_copy(v, w);
	if (!rw_writes(o->rw)) {
		v->mode = VM_READ;
	} else if (o->verify_only) {
		v->mode = VM_VERIFY; /* fio's verify_only: the writes' offsets, read and checked, nothing written */
		v->wcount = UINT64_MAX;
	} else {
		v->mode = VM_WRITE;
		if (verify_io_passes(o)) { /* fio's job loop: a pass is the region once (verify_next_pass) */
			v->pass_bytes = w->nblocks * w->minbs;
			v->pass_until = w->issued + v->pass_bytes;
			v->passes = 1;
		}
	}
}

/* the cursor's next write, as a read to check; 1 when the writes are all replayed */
static int replay_one(struct worker *w, struct io_req *r)
{
	struct vworker *v = w->vw;
	for (;;) {
		if (v->replayed >= v->wcount || g_stop)
			return 1;
		if (worker_gen_raw(w, r))
			return 1;
		if (r->ddir != DDIR_WRITE)
			continue;
		r->vseq = v->replayed++;
		r->ddir = DDIR_READ;
		r->vcheck = w->job->vj->type == VT_NULL ? 0 : 1;
		return 0;
	}
}

int verify_hold(struct worker *w)
{
	struct vworker *v = w->vw;
	if (v->backlog_state == 1 || v->backlog_state == 3) {
		if (w->inflight)
			return 1;
		v->backlog_state = v->backlog_state == 1 ? 2 : 0;
	}
	return 0;
}

int verify_gen(struct worker *w, struct io_req *r)
{
	struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	r->vcheck = 0;
	switch (v->mode) {
	case VM_READ:
		if (worker_gen_raw(w, r))
			return 1;
		r->vcheck = r->ddir == DDIR_READ && w->job->vj->type != VT_NULL;
		r->vseq = 0;
		return 0;
	case VM_VERIFY:
		return v->logged ? log_next(w, r) : v->wmap ? latest_next(w, r) : replay_one(w, r);
	case VM_WRITE:
		break;
	}
	if (o->verify_backlog) {
		/* a drain ends here (async engines hold in verify_hold until nothing is in flight; a
		 * sync engine never has anything in flight when it asks for the next I/O) */
		verify_hold(w);
		if (v->backlog_state == 2) {
			/* the cursor never passes the writer: at most what was written is read back */
			if (v->batch_left && v->replayed < v->wcount) {
				cursor_swap(w);
				int done = replay_one(w, r);
				cursor_swap(w);
				if (!done) {
					/* fio's exceeds_number_ios (backend.c) counts every I/O of the job,
					 * the backlog's reads too (io_blocks): number_ios=10, backlog 4 is
					 * 6 writes, as fio's */
					w->nios += w->measuring;
					if (--v->batch_left == 0 || v->replayed >= v->wcount)
						v->backlog_state = 3;
					return 0;
				}
			}
			v->backlog_state = 0;
		}
	}
	if (v->pass_bytes && w->issued >= v->pass_until)
		return 1; /* this pass's writes are issued: its read-back next (verify_next_pass) */
	int g = worker_gen_raw(w, r);
	if (g)
		return g; /* 2: several files, none can take an I/O now (reap first) */
	if (r->ddir == DDIR_WRITE) {
		r->vseq = v->wcount++;
		if (v->logged && log_write(w, r) < 0) {
			w->err = -ENOMEM;
			snprintf(w->errmsg, sizeof(w->errmsg), "verify: out of memory for the log of %llu writes",
				 (unsigned long long)v->nlog);
			return 1;
		}
		if (v->wmap) { /* verify_latest_only: this block is read back once, whatever wrote it last */
			uint64_t i = (r->off - w->roff) / w->minbs;
			v->wmap[i / 64] |= 1ull << (i % 64);
		}
		if (o->verify_backlog && ++v->since >= o->verify_backlog) {
			/* fio: after N writes, read back a batch of them (the oldest not yet verified) */
			v->since = 0;
			v->batch_left = o->verify_backlog_batch;
			v->backlog_state = 1;
		}
		if (v->fills)
			verify_fill_block(w->job, w->id + 1, r->buf, r->len, r->off, r->vseq,
					  block_seed(w->job->vj, w->id + 1, r->vseq));
	}
	return 0;
}

void verify_done(struct worker *w, struct io_req *r)
{
	if (r->res < 0)
		return; /* an I/O error: the job's error already */
	if ((uint64_t)r->res != r->len) {
		struct vfail f = { .offset = r->off + (uint64_t)r->res, .length = r->len - (uint32_t)r->res,
				   .block_offset = r->off, .block_length = r->len, .what = "short read", .first_bad = -1 };
		snprintf(f.expected, sizeof(f.expected), "%u", r->len);
		snprintf(f.actual, sizeof(f.actual), "%lld", (long long)r->res);
		w->vw->blocks++;
		record(w, &f, r->buf, NULL);
		return;
	}
	const struct vjob *vj = w->job->vj;
	if (w->mfw)
		w->vw->cur_file = (int32_t)w->mfw->st[r->fidx].file;
	verify_check_block(w, r->buf, r->len, r->off, r->vseq, r->vcheck && vj->check_seq && w->vw->mode != VM_READ);
}

int verify_next_phase(struct worker *w)
{
	struct vworker *v = w->vw;
	struct job *j = w->job;
	struct vjob *vj = j->vj;
	const struct options *o = j->o;
	if (v->mode != VM_WRITE)
		return 0;
	uint64_t wend = v->t_wend = now_ns(); /* the write phase's end (fio's do_io returns) */
	/* numjobs > 1: the clones write the same blocks; read back once all have written (the first
	 * pass: a hole pattern's later passes are each clone's own, as fio's processes) */
	if (!v->phases++) {
		pthread_mutex_lock(&vj->mu);
		if (++vj->arrived == o->numjobs)
			pthread_cond_broadcast(&vj->cv);
		while (vj->arrived < o->numjobs)
			pthread_cond_wait(&vj->cv, &vj->mu);
		pthread_mutex_unlock(&vj->mu);
	}
	if (!o->do_verify || w->err || g_stop || w->filled)
		return 0;
	/* fio 3.33: the runtime bounds the whole job. A write phase the runtime ended has no read-back
	 * (fio's runtime check terminates the job: a time_based job never reads back), and the
	 * read-back stops at the runtime too (w->deadline stays) */
	if (w->deadline != UINT64_MAX && wend >= w->deadline)
		return 0;
	v->t_vstart = now_ns(); /* fio's do_verify: td->start is reset, its fsync and cache drop count */
	/* as fio before its verify phase: the writes reach the file, the page cache is dropped (fio's
	 * do_verify: every open file of the job) */
	if (v->logged) {
		for (unsigned i = 0; i < w->mfw->n; i++) {
			int fd = w->mfw->st[i].fd;
			if (fd < 0)
				continue;
			if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
				w->err = -errno;
				snprintf(w->errmsg, sizeof(w->errmsg), "verify: fsync: %s", strerror(errno));
				return 0;
			}
			if (!o->direct && o->invalidate)
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		}
		log_order(w);
	} else {
		if (fsync(w->fd) < 0 && errno != EINVAL && errno != EROFS) {
			w->err = -errno;
			snprintf(w->errmsg, sizeof(w->errmsg), "verify: fsync: %s", strerror(errno));
			return 0;
		}
		if (!o->direct && o->invalidate)
			posix_fadvise(w->fd, (off_t)w->roff, (off_t)w->rsize, POSIX_FADV_DONTNEED);
	}
	cursor_swap(w); /* from here the worker runs the cursor */
	v->mode = VM_VERIFY;
	v->pace_on = w->pace.on;
	w->pace.on = 0; /* no rate, thinktime or latency search in the read-back (pace.c) */
	return 1;
}

/* fio's job loop with a hole pattern (rw=write:N): its pass ends at the file's end, is read back
 * (do_verify), and keep_running starts another while the passes are fewer than loops or the job's
 * bytes, the read-backs' included, are short of io_size (else size) by a block or more. Only
 * positive holes: measured beside fio (examples/cross-stripe-verify.fio, capped: 35 writes and
 * 35 reads per clone, passes of 7 writes, io_size 1 MiB); the other patterns' passes hold at
 * least half of size, so fio never loops again there. */
int verify_pass_ends_phase(const struct worker *w)
{
	const struct options *o = w->job->o;
	return w->vw->mode == VM_WRITE && o->do_verify && !o->verify_only && !o->time_based && o->rw_seq_add > 0;
}

int verify_next_pass(struct worker *w)
{
	struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	uint64_t passes, now = now_ns();
	if (v->mode != VM_VERIFY || w->err || g_stop || w->filled || atomic_load(&w->job->stop) || now >= w->deadline)
		return 0;
	if (v->pat ? !pat_pass_ended(v->pat, &passes) : !v->pass_bytes)
		return 0;
	if (!v->pat)
		passes = v->passes;
	if (passes >= o->loops) {
		uint64_t done = w->d[DDIR_READ].bytes + w->d[DDIR_WRITE].bytes, limit = o->io_size ? o->io_size : o->size;
		if (done >= limit || limit - done < opt_max_bs(o))
			return 0;
	}
	/* the finished pass's times; the next write phase starts now */
	if (v->phases == 1)
		v->t_wend1 = v->t_wend;
	else
		v->w_ns += v->t_wend - v->t_pass;
	v->v_ns += now - v->t_vstart;
	v->t_vstart = 0;
	v->t_pass = now;
	cursor_swap(w); /* the writer's state back, then its next pass, copied to the cursor */
	if (v->pat) {
		pat_restart(w);
		cursor_copy(v, w);
		pat_copy(v->pat, w->pat);
	} else { /* verify_io_passes: the sequential position wraps, the random order is drawn anew */
		v->passes++;
		v->pass_until = w->issued + v->pass_bytes;
		cursor_copy(v, w);
	}
	v->since = v->batch_left = 0;
	v->backlog_state = 0;
	v->mode = VM_WRITE;
	w->pace.on = v->pace_on;
	return 1;
}

void verify_finish(struct worker *w)
{
	struct vworker *v = w->vw;
	if (!v || !v->bad_intervals || w->err)
		return;
	const struct vfail *f = &v->fails[0];
	w->err = -EILSEQ; /* fio's error for a verify failure (84) */
	if (snprintf(w->errmsg, sizeof(w->errmsg), "verify: %llu of %llu intervals failed, first at offset %llu%s%s (%s)",
		 (unsigned long long)v->bad_intervals, (unsigned long long)v->intervals, (unsigned long long)f->offset,
		     f->file >= 0 ? " of " : "", f->file >= 0 ? w->job->mf->files[f->file].tgt.path : "",
		     f->what) >= (int)sizeof(w->errmsg))
		w->errmsg[sizeof(w->errmsg) - 2] = '~'; /* cut: the JSON's failures name the file whole */
}

void verify_dir_ns(const struct worker *w, uint64_t t0, uint64_t meas_ns, uint64_t out[3])
{
	const struct vworker *v = w->vw;
	const struct options *o = w->job->o;
	out[0] = out[1] = out[2] = meas_ns;
	if (!v || !v->t_wend)
		return; /* no write phase (a read job, verify_only): one phase, as before */
	uint64_t wph = v->t_wend > t0 ? v->t_wend - t0 : 0, vph = 0;
	if (v->t_wend1) /* several passes (verify_next_pass): the sums of their phases */
		wph = (v->t_wend1 > t0 ? v->t_wend1 - t0 : 0) + v->w_ns + (v->t_wend > v->t_pass ? v->t_wend - v->t_pass : 0);
	if (v->t_vstart) {
		uint64_t from = v->t_vstart > t0 ? v->t_vstart : t0;
		vph = w->t_end > from ? w->t_end - from : 0;
	}
	vph += v->v_ns;
	out[1] = out[2] = wph;
	/* fio 3.33's thread_main: a job that reads (rw, randrw) adds the write phase to the read
	 * runtime, then do_verify adds the read-back's; verify_backlog's reads in the write phase do
	 * not count it (measured: read.runtime is the final read-back's) */
	out[0] = (rw_reads(o->rw) ? wph : 0) + vph;
}

void verify_report(struct jw *jw, const struct job *j, unsigned first, unsigned n)
{
	const struct vjob *vj = j->vj;
	const struct options *o = j->o;
	if (!vj || !j->workers)
		return;
	uint64_t blocks = 0, bytes = 0, ivs = 0, bad = 0, written = 0;
	for (unsigned i = first; i < first + n && i < o->numjobs; i++) {
		const struct vworker *v = j->workers[i].vw;
		if (!v)
			continue;
		blocks += v->blocks;
		bytes += v->bytes;
		ivs += v->intervals;
		bad += v->bad_intervals;
		written += v->wcount == UINT64_MAX ? 0 : v->wcount;
	}
	jw_obj(jw, "verify");
	jw_str(jw, "type", verify_type_name(vj->type));
	jw_u64(jw, "interval_bytes", vj->interval);
	jw_u64(jw, "header_bytes", vj->hsz);
	jw_bool(jw, "verify_only", o->verify_only);
	jw_bool(jw, "numberio_checked", vj->check_seq && rw_writes(o->rw));
	jw_bool(jw, "crc32c_hw", crc32c_hw());
	jw_u64(jw, "blocks_written", written);
	jw_u64(jw, "blocks_verified", blocks);
	jw_u64(jw, "bytes_verified", bytes);
	jw_u64(jw, "intervals_verified", ivs);
	jw_u64(jw, "failed_intervals", bad);
	jw_arr(jw, "failures");
	for (unsigned i = first; i < first + n && i < o->numjobs; i++) {
		const struct vworker *v = j->workers[i].vw;
		for (unsigned k = 0; v && k < v->nfails; k++) {
			const struct vfail *f = &v->fails[k];
			jw_obj(jw, NULL);
			jw_u64(jw, "thread", i);
			if (f->file >= 0)
				jw_str(jw, "file", j->mf->files[f->file].tgt.path);
			else
				jw_null(jw, "file");
			jw_u64(jw, "offset", f->offset);
			jw_u64(jw, "length", f->length);
			jw_u64(jw, "block_offset", f->block_offset);
			jw_u64(jw, "block_length", f->block_length);
			jw_str(jw, "field", f->what);
			jw_str(jw, "expected", f->expected);
			jw_str(jw, "actual", f->actual);
			if (f->first_bad >= 0) {
				jw_u64(jw, "first_bad_byte_offset", (uint64_t)f->first_bad);
				jw_u64(jw, "bad_bytes", f->bad_bytes);
			} else {
				jw_null(jw, "first_bad_byte_offset");
				jw_null(jw, "bad_bytes");
			}
			jw_obj_end(jw);
		}
	}
	jw_arr_end(jw);
	jw_arr(jw, "dumps");
	unsigned nd = atomic_load(&((struct vjob *)vj)->dumps);
	for (unsigned k = 0; k < nd && k < VERIFY_DUMP_MAX; k++)
		if (vj->dumped[k][0])
			jw_str(jw, NULL, vj->dumped[k]);
	jw_arr_end(jw);
	jw_obj_end(jw);
}
