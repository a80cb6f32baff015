/*
 * fair: dominant resource shares, the measure of fair sharing
 * (kueue-scheduler.md §4.6, Kueue's fair_sharing.go), on a tree.
 *
 * The share of a node with a parent is, over the resources it borrows
 * (usage above its subtree quota on some flavor x resource, summed per
 * resource name over flavors), the largest of borrowed * 1000 / lendable,
 * lendable being what the parent could give on that resource with zero
 * usage everywhere (PotentialAvailable summed over flavors); divided by
 * the node's weight. A node that borrows nothing, a root, and a
 * ClusterQueue without cohort have share 0. A zero weight makes any
 * borrowing share infinite; such shares compare by their unweighted
 * ratio among themselves and above everything else.
 *
 * A share depends only on the node's own usage and on quotas, so a
 * usage change moves the shares of the nodes on its path to the root
 * and no other: what lets the fair tournament (sched_cycle.c) update
 * one path per decision. Lendable capacities are cached per node until
 * tree_quota_gen changes.
 *
 * Pure: no I/O, no clock; one struct fair per thread.
 */
#ifndef FLAVORS_FAIR_H
#define FLAVORS_FAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flavors/tree.h"

struct fair_drs {
	double ratio;   /* unweighted: 0 when not borrowing; -1 in
			   fair_drs_negative (below every real share) */
	int64_t weight; /* the node's weight, milli-units */
	int dominant;   /* fr id of the dominant resource, -1 when none */
	bool borrowing; /* usage above subtree quota on some fr */
};

struct fair; /* scratch and the lendable cache */

struct fair *fair_new(void);
void fair_free(struct fair *f);

/* The share of node with the tree's usage as it is now. */
void fair_drs(struct fair *f, const struct tree *t, int node,
	      struct fair_drs *out);
/* A share below every real one (Kueue's NegativeDRS). */
void fair_drs_negative(struct fair_drs *out);
/* Kueue's IsBorrowingOn: node (with a parent) uses more than its
 * subtree quota on some fr that req asks a positive amount of. */
bool fair_borrowing_on(const struct tree *t, int node,
		       const struct fr_val *req, size_t n);
/* Kueue's CompareDRS: < 0 when a is the lower (fairer to admit) share. */
int fair_cmp(const struct fair_drs *a, const struct fair_drs *b);
/* The weighted share: ratio / weight, 0 when not borrowing, +Inf for a
 * zero weight that borrows. */
double fair_share(const struct fair_drs *d);
/* status.fairSharing.weightedShare: ceil of fair_share, INT64_MAX for
 * a zero weight that borrows. */
int64_t fair_share_rounded(const struct fair_drs *d);

#endif
