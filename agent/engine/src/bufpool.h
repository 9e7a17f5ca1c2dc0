/* A database buffer pool of fixed 8 KiB pages over one file (--heap-btree, src/heapbtree.c).
 *
 * Replacement: CLOCK (second chance). Every access sets the frame's reference bit; a victim is
 * found by sweeping the hand over the frames, skipping pinned ones and clearing set bits. A dirty
 * victim is written back first (one pwrite). A page not in the pool is read with one pread: a
 * miss is exactly one device read. Pages are numbered 0, 1, ... in the order they are allocated;
 * page p lives at byte p x 8192 of the file (O_DIRECT when the file allows it).
 *
 * fd = -1 makes a memory-only pool without a frame limit (the sizing pass that counts how many
 * pages a structure has after the inserts, so a run's pool can be a fraction of them). */
#ifndef IOWATT_BUFPOOL_H
#define IOWATT_BUFPOOL_H

#include <stdint.h>

#define BP_PAGE 8192u
#define BP_NONE UINT32_MAX

struct bp_frame {
	unsigned char *data; /* BP_PAGE bytes, 4 KiB aligned */
	uint32_t page;       /* BP_NONE = free */
	uint16_t pins;
	uint8_t ref, dirty;
};

struct bp_stats {
	uint64_t hits;      /* accesses of a page found in the pool */
	uint64_t misses;    /* accesses of a page not in the pool (each one device read) */
	uint64_t reads;     /* preads of a page (device reads) */
	uint64_t writes;    /* pwrites of a page (dirty evictions and flushes) */
	uint64_t allocated; /* new pages (never read: they start zeroed in a frame) */
};

struct bufpool {
	int fd;              /* -1: memory only, unlimited frames */
	uint32_t cap;        /* frame limit */
	uint32_t nframes;    /* frames in use (<= cap) */
	uint32_t hand;       /* CLOCK hand */
	struct bp_frame *f;
	uint32_t fcap;       /* allocated entries of f */
	int32_t *where;      /* page -> frame, -1 = not in the pool */
	uint32_t wcap;       /* entries of where */
	uint32_t npages;     /* pages of the file (allocated so far) */
	struct bp_stats st;
	int err;             /* first error (negative errno); every later call fails */
	char errmsg[200];
};

/* 0 or -ENOMEM. cap >= 4 (a B+tree split pins two pages; the heap one). */
int bp_init(struct bufpool *bp, int fd, uint32_t cap);
void bp_free(struct bufpool *bp);
/* Pin page `page` (< npages) and return its bytes, *frame set; NULL after an error (bp->err). */
unsigned char *bp_get(struct bufpool *bp, uint32_t page, uint32_t *frame);
/* Allocate page npages (zeroed, dirty, pinned); NULL after an error. */
unsigned char *bp_new(struct bufpool *bp, uint32_t *page, uint32_t *frame);
void bp_unpin(struct bufpool *bp, uint32_t frame, int dirty);
/* Write every dirty page back (in page order) and fdatasync; 0 or negative errno. */
int bp_flush(struct bufpool *bp);

#endif
