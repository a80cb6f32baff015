/*
 * tree: the cohort forest and its quota arithmetic (kueue-scheduler.md §3,
 * Kueue's resource_node.go), on small integers.
 *
 * Every ClusterQueue and every Cohort is a node; a ClusterQueue is always
 * a leaf. Flavor x resource pairs are interned into dense ids ("fr"), so
 * quotas and usage are flat int64 arrays indexed by fr: no strings, no
 * hashing, no allocation on the admission path. Values are milli-units
 * (model/resources.h: resource_units_milli already rounded them as Kueue
 * counts).
 *
 * The tree owns its nodes and arrays. It is a plain value: tree_copy gives
 * an independent snapshot for a scheduling cycle or a what-if question,
 * and usage changes made for a what-if are undone with an undo log. Pure:
 * no I/O, no clock, no JSON, no global state; not thread-safe (each copy
 * belongs to one thread at a time).
 *
 * Invariants (tree_check): for every node and fr, usage >= 0; a cohort's
 * usage equals the sum over its children of max(0, child usage - child
 * local quota); subtree quotas follow their definition; parent links form
 * no cycle except for nodes flagged in_cycle, which admit nothing.
 * (Sums skip children that are themselves on a cycle: aggregation runs
 * over the forest left after cutting each cycle member's parent link.)
 */
#ifndef FLAVORS_TREE_H
#define FLAVORS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"

#define TREE_UNLIMITED INT64_MAX /* a nil borrowing/lending limit */

struct tree;

enum node_kind {
	NODE_CQ,     /* a ClusterQueue: a leaf that holds workload usage */
	NODE_COHORT, /* a Cohort, named by a CQ's cohort or a Cohort object */
};

/* Returns a new empty tree. */
struct tree *tree_new(void);
void tree_free(struct tree *t);
/* Returns a new independent deep copy (a cycle's snapshot). Copying is
 * O(nodes x fr) memcpy; keep the arrays flat so it stays cheap. */
struct tree *tree_copy(const struct tree *t);

/*
 * Interning. tree_fr returns the id of (flavor, resource), creating it:
 * ids are dense, stable for the tree's life, shared by copies made after.
 * tree_fr_find returns -1 when unknown. tree_nfr is the id count.
 */
int tree_fr(struct tree *t, const char *flavor, const char *resource);
int tree_fr_find(const struct tree *t, const char *flavor,
		 const char *resource);
size_t tree_nfr(const struct tree *t);
/* Borrowed names of an fr id, valid for the tree's life. */
const char *tree_fr_flavor(const struct tree *t, int fr);
const char *tree_fr_resource(const struct tree *t, int fr);

/*
 * Nodes. tree_node returns the id of the node (kind, name), creating it
 * with no parent and no quota. CQ and cohort names live in separate
 * namespaces, as in Kueue. tree_node_find returns -1 when absent.
 * Removing a cohort that still has children keeps it as an implicit
 * cohort (no quota) until its last child leaves, as Kueue does.
 * (Implicit: no parent, no quota; tree_set_parent, tree_set_quota or
 * tree_clear_quotas on it make it explicit again: an object arrived.
 * To model a cohort named only by CQs, remove it once it has a child.)
 */
int tree_node(struct tree *t, enum node_kind kind, const char *name);
int tree_node_find(const struct tree *t, enum node_kind kind,
		   const char *name);
void tree_node_remove(struct tree *t, int node);
enum node_kind tree_node_kind(const struct tree *t, int node);
/* Borrowed, valid until the next tree_node on t. */
const char *tree_node_name(const struct tree *t, int node);
/* Parent cohort id or -1. */
int tree_parent(const struct tree *t, int node);

/*
 * Sets node's parent cohort (-1: a root). A parent link that closes a
 * cycle is kept, and every node of the cycle and below it is flagged
 * in_cycle (Kueue disables them until the cycle is broken).
 */
void tree_set_parent(struct tree *t, int node, int parent);
bool tree_in_cycle(const struct tree *t, int node);

/*
 * Quota of node for fr: nominal >= 0; borrowing and lending are
 * TREE_UNLIMITED when nil. Cohorts may carry quota too (their own
 * resourceGroups). tree_clear_quotas drops every quota of node (then set
 * the new ones): a spec update.
 */
void tree_set_quota(struct tree *t, int node, int fr, int64_t nominal,
		    int64_t borrowing, int64_t lending);
void tree_clear_quotas(struct tree *t, int node);
int64_t tree_nominal(const struct tree *t, int node, int fr);
int64_t tree_borrowing_limit(const struct tree *t, int node, int fr);
int64_t tree_lending_limit(const struct tree *t, int node, int fr);
/* SubtreeQuota of §3 (CQ: nominal; cohort: own + children's lendable). */
int64_t tree_subtree_quota(const struct tree *t, int node, int fr);

/*
 * Usage of a CQ (workloads holding quota there), propagated up the tree
 * as §3's addUsage/removeUsage. Removal never drives usage below zero.
 */
void tree_add_usage(struct tree *t, int cq, int fr, int64_t v);
void tree_remove_usage(struct tree *t, int cq, int fr, int64_t v);
int64_t tree_usage(const struct tree *t, int node, int fr);
/* §3 LocalAvailable: max(0, localQuota - usage), the part of node's
 * capacity on fr that is never lent to its parent and still free. */
int64_t tree_local_available(const struct tree *t, int node, int fr);

/* §3 Available: free capacity for cq on fr now, including what it may
 * borrow through its ancestors, clamped at 0. */
int64_t tree_available(const struct tree *t, int cq, int fr);
/* §3 PotentialAvailable: capacity with zero usage everywhere, bounded
 * by borrowing limits (the "maximum capacity" of NoFit messages). */
int64_t tree_potential_available(const struct tree *t, int cq, int fr);
/* PotentialAvailable of any node, a cohort too (Kueue's
 * potentialAvailable on a cohort: the lendable capacity of fair
 * sharing's dominant resource share). */
int64_t tree_node_potential(const struct tree *t, int node, int fr);
/* max(0, usage - nominal) for a CQ with a cohort, else 0 (status
 * "borrowed"). */
int64_t tree_borrowed(const struct tree *t, int cq, int fr);

/*
 * §2.3 heightOfLowestSubtreeThatFits: the borrowing level when cq takes
 * val more of fr (0 = no borrowing; 1 = from its own cohort; ...), and
 * whether a cohort on the way has a parent (may reclaim in hierarchy).
 */
int tree_borrow_level(const struct tree *t, int cq, int fr, int64_t val,
		      bool *may_reclaim);
/* Height of a node: 0 for a CQ, 1 + max child height for a cohort
 * (0 for a cohort without children, as Kueue's getNodeHeight). */
int tree_height(const struct tree *t, int node);

/* One (fr, value) pair of a workload's usage. */
struct fr_val {
	int fr;
	int64_t v; /* milli-units, >= 0 */
};

/* True when every (fr, v) of usage fits cq now: v <= tree_available. */
bool tree_fits(const struct tree *t, int cq, const struct fr_val *usage,
	       size_t n);

/*
 * What-if changes: each add/remove made through these is recorded in undo
 * and reverted, newest first, by tree_undo (which also empties undo).
 * undo starts zeroed; tree_undo_release frees its storage.
 */
struct tree_undo {
	struct tree_undo_op *ops; /* owned */
	size_t n;
	size_t cap;
};

void tree_add_usage_undo(struct tree *t, int cq, const struct fr_val *usage,
			 size_t n, struct tree_undo *undo);
void tree_remove_usage_undo(struct tree *t, int cq,
			    const struct fr_val *usage, size_t n,
			    struct tree_undo *undo);
void tree_undo(struct tree *t, struct tree_undo *undo);
/* A savepoint: the position in undo now. tree_undo_to reverts only the
 * changes made since (newest first) and leaves the older ones, so a
 * cycle can simulate removals inside a round and roll back just them.
 * A savepoint beyond the log's end is a BUG. */
size_t tree_undo_savepoint(const struct tree_undo *undo);
void tree_undo_to(struct tree *t, struct tree_undo *undo, size_t savepoint);
void tree_undo_release(struct tree_undo *undo);

/*
 * Fair sharing weight of a node (spec.fairSharing.weight of its
 * ClusterQueue or Cohort object), milli-units; new nodes and implicit
 * cohorts have TREE_WEIGHT_DEFAULT (weight 1). Negative is taken as 0.
 */
#define TREE_WEIGHT_DEFAULT 1000
void tree_set_weight(struct tree *t, int node, int64_t milli);
int64_t tree_weight(const struct tree *t, int node);
/* Changes whenever a quota, weight, parent link or node set changes
 * (never for usage): caches of quota-only answers key on it. */
uint64_t tree_quota_gen(const struct tree *t);
/* Changes whenever node's usage changes (on any fr): with
 * tree_quota_gen, the key of caches of a node's usage-derived answers.
 * Stamps are unique across the tree, so a slot reused by another node
 * never repeats an old stamp. */
uint64_t tree_usage_stamp(const struct tree *t, int node);
/* Every node id is below this (for arrays indexed by node id). */
size_t tree_node_cap(const struct tree *t);
/* Whether node is a live node id (any id is accepted). */
bool tree_node_exists(const struct tree *t, int node);

/* Children of a cohort: fills up to max ids, returns the total count. */
size_t tree_children(const struct tree *t, int cohort, int *out, size_t max);
/* Root of node's tree (itself when it has no parent; -1 when in a cycle). */
int tree_root(const struct tree *t, int node);

/* STYLE P15: every invariant above; tests assert it after each change. */
bool tree_check(const struct tree *t);

#endif
