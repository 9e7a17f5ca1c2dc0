/* Buffer pool with CLOCK replacement over one file of 8 KiB pages: see bufpool.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bufpool.h"

static int fail(struct bufpool *bp, int e, const char *what, uint32_t page)
{
	if (!bp->err) {
		bp->err = -e;
		snprintf(bp->errmsg, sizeof(bp->errmsg), "%s page %u: %s", what, page, strerror(e));
	}
	return -e;
}

int bp_init(struct bufpool *bp, int fd, uint32_t cap)
{
	memset(bp, 0, sizeof(*bp));
	bp->fd = fd;
	bp->cap = fd < 0 ? UINT32_MAX : (cap < 4 ? 4 : cap);
	bp->fcap = bp->cap < 1024 ? bp->cap : 1024;
	bp->f = calloc(bp->fcap, sizeof(*bp->f));
	bp->wcap = 1024;
	bp->where = malloc(bp->wcap * sizeof(*bp->where));
	if (!bp->f || !bp->where) {
		bp_free(bp);
		return -ENOMEM;
	}
	memset(bp->where, 0xff, bp->wcap * sizeof(*bp->where));
	if (fd >= 0) {
		/* a file's pool is allocated and touched up front, as a DBMS's: no page fault and no
		 * allocation inside the measured operations */
		free(bp->f);
		bp->fcap = bp->cap;
		bp->f = calloc(bp->fcap, sizeof(*bp->f));
		if (!bp->f) {
			bp_free(bp);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < bp->cap; i++) {
			if (posix_memalign((void **)&bp->f[i].data, 4096, BP_PAGE)) {
				bp->nframes = i; /* bp_free frees these */
				bp_free(bp);
				return -ENOMEM;
			}
			memset(bp->f[i].data, 0, BP_PAGE);
			bp->f[i].page = BP_NONE;
		}
	}
	return 0;
}

void bp_free(struct bufpool *bp)
{
	for (uint32_t i = 0; bp->f && i < bp->fcap; i++)
		free(bp->f[i].data);
	free(bp->f);
	free(bp->where);
	bp->f = NULL;
	bp->where = NULL;
	bp->nframes = 0;
}

static int write_page(struct bufpool *bp, struct bp_frame *fr)
{
	off_t off = (off_t)fr->page * BP_PAGE;
	size_t done = 0;
	while (done < BP_PAGE) {
		ssize_t n = pwrite(bp->fd, fr->data + done, BP_PAGE - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(bp, errno, "write", fr->page);
		}
		if (n == 0)
			return fail(bp, EIO, "write (no progress)", fr->page);
		done += (size_t)n;
	}
	bp->st.writes++;
	fr->dirty = 0;
	return 0;
}

static int read_page(struct bufpool *bp, struct bp_frame *fr, uint32_t page)
{
	off_t off = (off_t)page * BP_PAGE;
	size_t done = 0;
	while (done < BP_PAGE) {
		ssize_t n = pread(bp->fd, fr->data + done, BP_PAGE - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(bp, errno, "read", page);
		}
		if (n == 0)
			return fail(bp, EIO, "read (short file)", page);
		done += (size_t)n;
	}
	bp->st.reads++;
	return 0;
}

/* a frame to hold a page: a new one below the limit, else the CLOCK victim (written back
 * when dirty); its old page leaves the pool. Returns the frame index or -1 after an error. */
static int64_t take_frame(struct bufpool *bp)
{
	if (bp->nframes < bp->cap) {
		if (bp->nframes == bp->fcap) {
			uint32_t n = bp->fcap > bp->cap / 2 ? bp->cap : bp->fcap * 2;
			struct bp_frame *f = realloc(bp->f, (size_t)n * sizeof(*f));
			if (!f) {
				fail(bp, ENOMEM, "frame for", 0);
				return -1;
			}
			memset(f + bp->fcap, 0, (size_t)(n - bp->fcap) * sizeof(*f));
			bp->f = f;
			bp->fcap = n;
		}
		struct bp_frame *fr = &bp->f[bp->nframes];
		if (!fr->data) {
			memset(fr, 0, sizeof(*fr));
			fr->page = BP_NONE;
			if (posix_memalign((void **)&fr->data, 4096, BP_PAGE)) {
				fr->data = NULL;
				fail(bp, ENOMEM, "frame for", 0);
				return -1;
			}
		}
		return bp->nframes++;
	}
	/* every frame pinned twice over the sweep would loop: at most two full turns */
	for (uint64_t step = 0; step < 2ull * bp->nframes + 1; step++) {
		uint32_t i = bp->hand;
		bp->hand = bp->hand + 1 == bp->nframes ? 0 : bp->hand + 1;
		struct bp_frame *fr = &bp->f[i];
		if (fr->pins)
			continue;
		if (fr->ref) {
			fr->ref = 0;
			continue;
		}
		if (fr->dirty && write_page(bp, fr) < 0)
			return -1;
		bp->where[fr->page] = -1;
		fr->page = BP_NONE;
		return i;
	}
	fail(bp, EBUSY, "no unpinned frame for", 0);
	return -1;
}

static int grow_where(struct bufpool *bp, uint32_t page)
{
	if (page < bp->wcap)
		return 0;
	uint32_t n = bp->wcap;
	while (n <= page)
		n *= 2;
	int32_t *w = realloc(bp->where, (size_t)n * sizeof(*w));
	if (!w)
		return fail(bp, ENOMEM, "page table for", page);
	memset(w + bp->wcap, 0xff, (size_t)(n - bp->wcap) * sizeof(*w));
	bp->where = w;
	bp->wcap = n;
	return 0;
}

unsigned char *bp_get(struct bufpool *bp, uint32_t page, uint32_t *frame)
{
	if (bp->err)
		return NULL;
	if (page >= bp->npages) {
		fail(bp, EINVAL, "access beyond the file:", page);
		return NULL;
	}
	int32_t w = bp->where[page];
	if (w >= 0) {
		struct bp_frame *fr = &bp->f[w];
		bp->st.hits++;
		fr->ref = 1;
		fr->pins++;
		*frame = (uint32_t)w;
		return fr->data;
	}
	bp->st.misses++;
	int64_t i = take_frame(bp);
	if (i < 0)
		return NULL;
	struct bp_frame *fr = &bp->f[i];
	if (read_page(bp, fr, page) < 0)
		return NULL;
	fr->page = page;
	fr->ref = 1;
	fr->dirty = 0;
	fr->pins = 1;
	bp->where[page] = (int32_t)i;
	*frame = (uint32_t)i;
	return fr->data;
}

unsigned char *bp_new(struct bufpool *bp, uint32_t *page, uint32_t *frame)
{
	if (bp->err)
		return NULL;
	if (bp->npages == BP_NONE - 1) {
		fail(bp, EFBIG, "allocate", bp->npages);
		return NULL;
	}
	uint32_t p = bp->npages;
	if (grow_where(bp, p) < 0)
		return NULL;
	int64_t i = take_frame(bp);
	if (i < 0)
		return NULL;
	struct bp_frame *fr = &bp->f[i];
	memset(fr->data, 0, BP_PAGE);
	fr->page = p;
	fr->ref = 1;
	fr->dirty = 1;
	fr->pins = 1;
	bp->where[p] = (int32_t)i;
	bp->npages++;
	bp->st.allocated++;
	*page = p;
	*frame = (uint32_t)i;
	return fr->data;
}

void bp_unpin(struct bufpool *bp, uint32_t frame, int dirty)
{
	struct bp_frame *fr = &bp->f[frame];
	if (fr->pins)
		fr->pins--;
	if (dirty)
		fr->dirty = 1;
}

int bp_flush(struct bufpool *bp)
{
	if (bp->err)
		return bp->err;
	if (bp->fd < 0)
		return 0;
	for (uint32_t p = 0; p < bp->npages; p++) {
		int32_t w = bp->where[p];
		if (w >= 0 && bp->f[w].dirty && write_page(bp, &bp->f[w]) < 0)
			return bp->err;
	}
	if (fdatasync(bp->fd) < 0)
		return fail(bp, errno, "fdatasync after", bp->npages);
	return 0;
}
