/* B+tree on 8 KiB pages through the buffer pool (layout in btree.h).
 *
 * An insert descends from the root remembering the page and child index of every level (pages
 * are unpinned on the way down, so at most two pages are pinned at any time); a full leaf splits
 * in half and the separator (the right half's first key) goes into the parent, which is fetched
 * again by its page number (it may have been evicted meanwhile: that is a miss, as in a DBMS); a
 * full internal node splits the same way, and a split root makes a new root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"

#define T_LEAF 1
#define T_INT 2
#define MAX_DEPTH 32

struct hdr {
	uint16_t type, n;
	uint32_t next;
	uint64_t rsv;
};
_Static_assert(sizeof(struct hdr) == HB_HDR, "page header is 16 bytes");

#define H(p) ((struct hdr *)(void *)(p))
#define RECS(p) ((struct hb_rec *)(void *)((p) + HB_HDR))
#define KEYS(p) ((uint64_t *)(void *)((p) + HB_HDR))
#define KIDS(p) ((uint32_t *)(void *)((p) + HB_INT_CHILD_OFF))

/* first i with r[i].key >= k */
static unsigned leaf_lb(const struct hb_rec *r, unsigned n, uint64_t k)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (r[mid].key < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the child for k: first i with k < keys[i] (n if none) */
static unsigned int_child(const uint64_t *keys, unsigned n, uint64_t k)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (keys[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bt_create(struct btree *t, struct bufpool *bp)
{
	memset(t, 0, sizeof(*t));
	t->bp = bp;
	uint32_t fr;
	unsigned char *p = bp_new(bp, &t->root, &fr);
	if (!p)
		return bp->err;
	H(p)->type = T_LEAF;
	H(p)->next = BP_NONE;
	bp_unpin(bp, fr, 1);
	t->height = 1;
	return 0;
}

int bt_find(struct btree *t, uint64_t key, struct hb_rec *out)
{
	struct bufpool *bp = t->bp;
	uint32_t page = t->root, fr;
	for (unsigned lvl = 1; lvl < t->height; lvl++) {
		unsigned char *p = bp_get(bp, page, &fr);
		if (!p)
			return bp->err;
		uint32_t child = KIDS(p)[int_child(KEYS(p), H(p)->n, key)];
		bp_unpin(bp, fr, 0);
		page = child;
	}
	unsigned char *p = bp_get(bp, page, &fr);
	if (!p)
		return bp->err;
	unsigned n = H(p)->n, i = leaf_lb(RECS(p), n, key);
	int found = i < n && RECS(p)[i].key == key;
	if (found)
		*out = RECS(p)[i];
	bp_unpin(bp, fr, 0);
	return found;
}

int bt_insert(struct btree *t, const struct hb_rec *r)
{
	struct bufpool *bp = t->bp;
	uint32_t path[MAX_DEPTH];
	unsigned pidx[MAX_DEPTH], d = 0;
	uint32_t page = t->root, fr;
	for (unsigned lvl = 1; lvl < t->height; lvl++) {
		unsigned char *p = bp_get(bp, page, &fr);
		if (!p)
			return bp->err;
		unsigned i = int_child(KEYS(p), H(p)->n, r->key);
		uint32_t child = KIDS(p)[i];
		bp_unpin(bp, fr, 0);
		path[d] = page;
		pidx[d] = i;
		d++;
		page = child;
	}
	unsigned char *p = bp_get(bp, page, &fr);
	if (!p)
		return bp->err;
	unsigned n = H(p)->n, i = leaf_lb(RECS(p), n, r->key);
	if (i < n && RECS(p)[i].key == r->key) {
		bp_unpin(bp, fr, 0);
		return 1;
	}
	t->records++;
	if (n < HB_LEAF_CAP) {
		memmove(&RECS(p)[i + 1], &RECS(p)[i], (size_t)(n - i) * HB_REC);
		RECS(p)[i] = *r;
		H(p)->n = (uint16_t)(n + 1);
		bp_unpin(bp, fr, 1);
		return 0;
	}
	/* leaf split: 205 records, 102 stay, 103 move right */
	uint32_t rp, rfr;
	unsigned char *q = bp_new(bp, &rp, &rfr);
	if (!q) {
		bp_unpin(bp, fr, 0);
		return bp->err;
	}
	struct hb_rec tmp[HB_LEAF_CAP + 1];
	memcpy(tmp, RECS(p), (size_t)i * HB_REC);
	tmp[i] = *r;
	memcpy(&tmp[i + 1], &RECS(p)[i], (size_t)(n - i) * HB_REC);
	unsigned left = (HB_LEAF_CAP + 1) / 2, right_n = HB_LEAF_CAP + 1 - left;
	memcpy(RECS(p), tmp, (size_t)left * HB_REC);
	H(p)->n = (uint16_t)left;
	H(q)->type = T_LEAF;
	H(q)->n = (uint16_t)right_n;
	memcpy(RECS(q), &tmp[left], (size_t)right_n * HB_REC);
	H(q)->next = H(p)->next;
	H(p)->next = rp;
	uint64_t sep = RECS(q)[0].key;
	bp_unpin(bp, fr, 1);
	bp_unpin(bp, rfr, 1);
	t->splits++;
	uint32_t right = rp;

	while (d > 0) {
		d--;
		page = path[d];
		i = pidx[d];
		p = bp_get(bp, page, &fr);
		if (!p)
			return bp->err;
		n = H(p)->n;
		uint64_t *keys = KEYS(p);
		uint32_t *kids = KIDS(p);
		if (n < HB_INT_CAP) {
			memmove(&keys[i + 1], &keys[i], (size_t)(n - i) * sizeof(*keys));
			keys[i] = sep;
			memmove(&kids[i + 2], &kids[i + 1], (size_t)(n - i) * sizeof(*kids));
			kids[i + 1] = right;
			H(p)->n = (uint16_t)(n + 1);
			bp_unpin(bp, fr, 1);
			return 0;
		}
		/* internal split: 682 keys and 683 children; 341 keys stay, one goes up, 340 move */
		q = bp_new(bp, &rp, &rfr);
		if (!q) {
			bp_unpin(bp, fr, 0);
			return bp->err;
		}
		uint64_t tk[HB_INT_CAP + 1];
		uint32_t tc[HB_INT_CAP + 2];
		memcpy(tk, keys, (size_t)i * sizeof(*tk));
		tk[i] = sep;
		memcpy(&tk[i + 1], &keys[i], (size_t)(n - i) * sizeof(*tk));
		memcpy(tc, kids, (size_t)(i + 1) * sizeof(*tc));
		tc[i + 1] = right;
		memcpy(&tc[i + 2], &kids[i + 1], (size_t)(n - i) * sizeof(*tc));
		unsigned total = HB_INT_CAP + 1, m = total / 2;
		memcpy(keys, tk, (size_t)m * sizeof(*tk));
		memcpy(kids, tc, (size_t)(m + 1) * sizeof(*tc));
		H(p)->n = (uint16_t)m;
		H(q)->type = T_INT;
		H(q)->next = BP_NONE;
		H(q)->n = (uint16_t)(total - 1 - m);
		memcpy(KEYS(q), &tk[m + 1], (size_t)(total - 1 - m) * sizeof(*tk));
		memcpy(KIDS(q), &tc[m + 1], (size_t)(total - m) * sizeof(*tc));
		sep = tk[m];
		bp_unpin(bp, fr, 1);
		bp_unpin(bp, rfr, 1);
		t->splits++;
		right = rp;
	}
	/* the root split: a new root above it */
	if (t->height >= MAX_DEPTH)
		return -EFBIG;
	q = bp_new(bp, &rp, &rfr);
	if (!q)
		return bp->err;
	H(q)->type = T_INT;
	H(q)->next = BP_NONE;
	H(q)->n = 1;
	KEYS(q)[0] = sep;
	KIDS(q)[0] = t->root;
	KIDS(q)[1] = right;
	bp_unpin(bp, rfr, 1);
	t->root = rp;
	t->height++;
	return 0;
}

/* ---- full walk ---- */

struct walk {
	struct btree *t;
	struct bt_check *c;
	uint32_t pending_next; /* the previous leaf's next pointer */
	int seen_leaf;
	uint64_t last_key;
	uint64_t leaf_recs;
};

static void violate(struct bt_check *c, int *flag, const char *fmt, unsigned a, unsigned b)
{
	*flag = 0;
	if (!c->why[0])
		snprintf(c->why, sizeof(c->why), fmt, a, b);
}

static int walk_node(struct walk *w, uint32_t page, unsigned depth, uint64_t lo, int has_lo, uint64_t hi,
		     int has_hi)
{
	struct bufpool *bp = w->t->bp;
	struct bt_check *c = w->c;
	if (depth > w->t->height || depth > MAX_DEPTH) {
		violate(c, &c->depth_equal, "page %u below the tree's height (%u)", page, w->t->height);
		return 0;
	}
	uint32_t fr;
	unsigned char *p = bp_get(bp, page, &fr);
	if (!p)
		return bp->err;
	unsigned char *copy = malloc(BP_PAGE);
	if (!copy) {
		bp_unpin(bp, fr, 0);
		return -ENOMEM;
	}
	memcpy(copy, p, BP_PAGE);
	bp_unpin(bp, fr, 0);
	int root = depth == 1, rc = 0;
	unsigned n = H(copy)->n;
	if (H(copy)->type == T_LEAF) {
		c->leaf_pages++;
		if (depth != w->t->height)
			violate(c, &c->depth_equal, "leaf %u at depth %u", page, depth);
		if (!root && n < HB_LEAF_CAP / 2)
			violate(c, &c->fill_ok, "leaf %u holds %u records (under half)", page, n);
		if (n > HB_LEAF_CAP)
			violate(c, &c->fill_ok, "leaf %u holds %u records (over capacity)", page, n);
		if (w->seen_leaf && w->pending_next != page)
			violate(c, &c->chain_ok, "leaf chain skips leaf %u (went to %u)", page, w->pending_next);
		const struct hb_rec *r = RECS(copy);
		for (unsigned i = 0; i < n && i <= HB_LEAF_CAP; i++) {
			if ((has_lo && r[i].key < lo) || (has_hi && r[i].key >= hi))
				violate(c, &c->bounded, "leaf %u record %u outside its parent's range", page, i);
			if (w->leaf_recs && r[i].key <= w->last_key)
				violate(c, &c->sorted, "leaf %u record %u not after the previous key", page, i);
			w->last_key = r[i].key;
			w->leaf_recs++;
		}
		w->seen_leaf = 1;
		w->pending_next = H(copy)->next;
	} else if (H(copy)->type == T_INT) {
		c->internal_pages++;
		if ((root && n < 1) || (!root && n < HB_INT_CAP / 2))
			violate(c, &c->fill_ok, "internal page %u holds %u keys (under half)", page, n);
		if (n > HB_INT_CAP) {
			violate(c, &c->fill_ok, "internal page %u holds %u keys (over capacity)", page, n);
			n = HB_INT_CAP;
		}
		const uint64_t *k = KEYS(copy);
		const uint32_t *kid = KIDS(copy);
		for (unsigned i = 0; i < n; i++) {
			if (i && k[i] <= k[i - 1])
				violate(c, &c->sorted, "internal page %u key %u not increasing", page, i);
			if ((has_lo && k[i] < lo) || (has_hi && k[i] >= hi))
				violate(c, &c->bounded, "internal page %u key %u outside its parent's range", page, i);
		}
		for (unsigned i = 0; i <= n && rc == 0; i++) {
			uint64_t clo = i ? k[i - 1] : lo, chi = i < n ? k[i] : hi;
			int chas_lo = i ? 1 : has_lo, chas_hi = i < n ? 1 : has_hi;
			if (kid[i] >= bp->npages) {
				violate(c, &c->bounded, "internal page %u points past the file (child %u)", page, i);
				continue;
			}
			rc = walk_node(w, kid[i], depth + 1, clo, chas_lo, chi, chas_hi);
		}
	} else {
		violate(c, &c->sorted, "page %u has no node type (%u)", page, H(copy)->type);
	}
	free(copy);
	return rc;
}

int bt_check(struct btree *t, struct bt_check *c)
{
	memset(c, 0, sizeof(*c));
	c->sorted = c->bounded = c->fill_ok = c->depth_equal = c->chain_ok = 1;
	c->height = t->height;
	struct walk w = { .t = t, .c = c, .pending_next = BP_NONE };
	int rc = walk_node(&w, t->root, 1, 0, 0, 0, 0);
	if (rc < 0)
		return rc;
	if (w.pending_next != BP_NONE)
		violate(c, &c->chain_ok, "the last leaf points on to page %u (of %u pages)", w.pending_next, t->bp->npages);
	c->records = w.leaf_recs;
	c->leaf_fill = c->leaf_pages ? (double)w.leaf_recs / ((double)c->leaf_pages * HB_LEAF_CAP) : 0;
	c->ok = c->sorted && c->bounded && c->fill_ok && c->depth_equal && c->chain_ok;
	return 0;
}
