/*
 * tree_bench: micro-benchmark of flavors/tree.c, the cohort forest.
 * Not built by the Makefile; build and run from the top directory with:
 *
 *   cc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -I. test/bench/tree_bench.c flavors/tree.c base/alloc.c -o build/tree_bench && ./build/tree_bench
 *
 * Shape: 1,000 ClusterQueues in 10 cohorts under one root, 3 flavor x
 * resource pairs, some lending and borrowing limits. Measures tree_copy
 * (+ tree_free) of the whole tree, then 1,000,000 calls each of
 * tree_fits (3 pairs per call), tree_add_usage and tree_remove_usage,
 * and prints nanoseconds per operation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "flavors/tree.h"

#define NCOHORT 10
#define NCQ 1000
#define NOPS 1000000
#define NCOPY 20000
#define UNL TREE_UNLIMITED

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void)
{
	struct tree *t = tree_new();
	int fr[3], cq[NCQ], root;
	char name[32];
	double t0, t1;
	long fitted = 0;
	struct fr_val w[3];

	fr[0] = tree_fr(t, "on-demand", "cpu");
	fr[1] = tree_fr(t, "on-demand", "memory");
	fr[2] = tree_fr(t, "spot", "cpu");
	root = tree_node(t, NODE_COHORT, "root");
	for (int c = 0; c < NCOHORT; c++) {
		int co;

		snprintf(name, sizeof(name), "cohort-%d", c);
		co = tree_node(t, NODE_COHORT, name);
		tree_set_parent(t, co, root);
		tree_set_quota(t, co, fr[2], 50000, UNL, 10000);
		for (int i = 0; i < NCQ / NCOHORT; i++) {
			int id;

			snprintf(name, sizeof(name), "cq-%d-%d", c, i);
			id = tree_node(t, NODE_CQ, name);
			tree_set_parent(t, id, co);
			tree_set_quota(t, id, fr[0], 10000, 5000, UNL);
			tree_set_quota(t, id, fr[1], 64000, UNL, 32000);
			tree_set_quota(t, id, fr[2], 2000, UNL, UNL);
			cq[c * (NCQ / NCOHORT) + i] = id;
		}
	}
	if (!tree_check(t)) {
		fprintf(stderr, "tree_bench: tree_check failed\n");
		return 1;
	}

	t0 = now_ns();
	for (int i = 0; i < NCOPY; i++)
		tree_free(tree_copy(t));
	t1 = now_ns();
	printf("tree_copy+free (%d CQs, %d cohorts, 3 frs): %.0f ns/op\n",
	       NCQ, NCOHORT, (t1 - t0) / NCOPY);

	for (int k = 0; k < 3; k++)
		w[k].fr = fr[k];
	t0 = now_ns();
	for (int i = 0; i < NOPS; i++) {
		w[0].v = w[1].v = w[2].v = 1 + (i & 1023);
		fitted += tree_fits(t, cq[(i * 7) % NCQ], w, 3);
	}
	t1 = now_ns();
	printf("tree_fits (3 frs):   %.1f ns/op (%ld fitted)\n",
	       (t1 - t0) / NOPS, fitted);

	t0 = now_ns();
	for (int i = 0; i < NOPS; i++)
		tree_add_usage(t, cq[(i * 7) % NCQ], fr[i % 3], 1 + (i & 63));
	t1 = now_ns();
	printf("tree_add_usage:      %.1f ns/op\n", (t1 - t0) / NOPS);

	t0 = now_ns();
	for (int i = 0; i < NOPS; i++)
		tree_remove_usage(t, cq[(i * 7) % NCQ], fr[i % 3],
				  1 + (i & 63));
	t1 = now_ns();
	printf("tree_remove_usage:   %.1f ns/op\n", (t1 - t0) / NOPS);

	if (!tree_check(t) || tree_usage(t, root, fr[0]) != 0) {
		fprintf(stderr, "tree_bench: tree not back to zero\n");
		return 1;
	}
	tree_free(t);
	return 0;
}
