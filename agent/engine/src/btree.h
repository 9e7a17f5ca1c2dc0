/* The two storage structures of --heap-btree (the P3608 report's § 1.4): a heap file (sequential
 * array) and a B+tree keyed on the record key, both on 8 KiB pages through the buffer pool (bufpool.h).
 *
 * A record has 5 attributes, 40 bytes, stored unpadded in this order:
 *   key     uint64  unique, random (a bijection of the insertion number: no two alike)
 *   seq     uint64  insertion number 0..N-1 (lets a check prove that every record is there)
 *   amount  double  random in [0, 1e6)
 *   qty     int32   random in [0, 1000)
 *   tag     char[12] random letters, NUL-padded
 *
 * Heap page: 16-byte header (uint32 records, uint32 magic 'HEAP'), then 204 records.
 * B+tree leaf: 16-byte header (uint16 type 1, uint16 count, uint32 next leaf, 8 reserved), then
 * up to 204 records sorted by key. Internal node: header (type 2, count), then 681 uint64 keys and
 * 682 uint32 child pages; child i holds keys k with key[i-1] <= k < key[i]. Splits move half of a
 * full node (leaf 205 -> 102 + 103, internal 682 keys -> 341 + 1 up + 340), so every node but the
 * root holds at least half its capacity. */
#ifndef IOWATT_BTREE_H
#define IOWATT_BTREE_H

#include <stdint.h>

#include "bufpool.h"

#define HB_REC 40u
#define HB_HDR 16u
#define HB_HEAP_CAP ((BP_PAGE - HB_HDR) / HB_REC)              /* 204 */
#define HB_LEAF_CAP ((BP_PAGE - HB_HDR) / HB_REC)              /* 204 */
#define HB_INT_CAP ((BP_PAGE - HB_HDR - 4u) / 12u)             /* 681 */
#define HB_INT_CHILD_OFF (HB_HDR + 8u * HB_INT_CAP)            /* 5464 */

struct hb_rec {
	uint64_t key, seq;
	double amount;
	int32_t qty;
	char tag[12];
};
_Static_assert(sizeof(struct hb_rec) == HB_REC, "record is 40 bytes");

struct btree {
	struct bufpool *bp;
	uint32_t root;
	unsigned height;   /* levels: 1 = the root is a leaf */
	uint64_t records;
	uint64_t splits;
};

/* An empty tree (one leaf page); 0 or negative errno (bp->err). */
int bt_create(struct btree *t, struct bufpool *bp);
/* 0 inserted, 1 the key was there already (not changed), negative errno */
int bt_insert(struct btree *t, const struct hb_rec *r);
/* 1 found (*out filled), 0 not found, negative errno */
int bt_find(struct btree *t, uint64_t key, struct hb_rec *out);

struct bt_check {
	int ok;                 /* all below hold */
	int sorted;             /* keys strictly increasing in every node and along the leaf chain */
	int bounded;            /* every key inside its parent's separator range */
	int fill_ok;            /* every node but the root at least half full */
	int depth_equal;        /* every leaf at the same depth (= height) */
	int chain_ok;           /* the leaf chain visits the leaves in key order and ends */
	uint64_t records;       /* records found in the leaves */
	uint64_t leaf_pages, internal_pages;
	unsigned height;
	double leaf_fill;       /* mean records per leaf / capacity */
	char why[160];          /* first violation, "" if none */
};
/* Full walk through the pool; 0 or negative errno. */
int bt_check(struct btree *t, struct bt_check *c);

#endif
