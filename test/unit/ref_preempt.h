/*
 * ref_preempt: a naive reference of Kueue's classical preemption decision
 * (kueue-scheduler.md §3 quota arithmetic, §2.3 fitsResourceQuota and
 * §4.1-4.4) for one preemptor, one flavor and one or two resources (cpu,
 * memory), used by check_preempt.c to judge flavors/sched.
 *
 * Written from the spec alone and sharing no code with flavors/: plain
 * arrays, and every quantity (subtree quota, usage, available) recomputed
 * from scratch over the whole cohort tree each time it is asked, so the
 * incremental bookkeeping of the real scheduler is never mirrored. Test
 * code only; slow on purpose.
 */
#ifndef TEST_UNIT_REF_PREEMPT_H
#define TEST_UNIT_REF_PREEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/objects.h"

#define REF_PREEMPT_NRES 2      /* 0 cpu, 1 memory */
#define REF_PREEMPT_MAX_NODES 24
#define REF_PREEMPT_MAX_WL 32

/* A Cohort or a ClusterQueue of the tree. Quantities in the milli-units
 * of model/resources.h. */
struct ref_preempt_node {
	char name[24];
	int parent;     /* index of a cohort node; -1: root / no cohort */
	bool is_cq;
	int64_t nominal[REF_PREEMPT_NRES]; /* 0 when not listed */
	bool has_borrow[REF_PREEMPT_NRES];
	int64_t borrow[REF_PREEMPT_NRES];  /* borrowingLimit */
	bool has_lend[REF_PREEMPT_NRES];
	int64_t lend[REF_PREEMPT_NRES];    /* lendingLimit */
	/* ClusterQueues only: spec.preemption */
	enum preempt_within_cq within;
	enum reclaim_within_cohort reclaim;
	enum borrow_within_cohort borrow_policy;
	bool has_threshold;
	int32_t threshold;                 /* maxPriorityThreshold */
};

/* An admitted workload (candidate) or the preemptor. */
struct ref_preempt_wl {
	char name[24];
	int cq;              /* node index of its ClusterQueue */
	int32_t prio;
	int64_t created_ms;  /* queue-order timestamp */
	int64_t admitted_ms; /* QuotaReserved lastTransitionTime */
	bool evicted;        /* Evicted=True */
	/* admitted: usage in the flavor; preemptor: total request; 0 =
	 * the resource is not used / requested */
	int64_t use[REF_PREEMPT_NRES];
};

struct ref_preempt_scn {
	size_t nres;    /* 1: cpu; 2: cpu and memory */
	struct ref_preempt_node node[REF_PREEMPT_MAX_NODES];
	size_t nnodes;
	struct ref_preempt_wl adm[REF_PREEMPT_MAX_WL]; /* uid "uid-<name>" */
	size_t nadm;
	struct ref_preempt_wl pre;
};

enum ref_preempt_outcome {
	REF_PREEMPT_NOFIT,         /* cannot be admitted, no preemption
				      is even tried (§2.3 noFit) */
	REF_PREEMPT_NO_CANDIDATES, /* needs preemption, no target set */
	REF_PREEMPT_FITS,          /* admitted as it is */
	REF_PREEMPT_VICTIMS,       /* preempts victim[] */
};

struct ref_preempt_result {
	enum ref_preempt_outcome outcome;
	size_t nvictims;
	int victim[REF_PREEMPT_MAX_WL];         /* indexes into adm[] */
	const char *reason[REF_PREEMPT_MAX_WL]; /* static: Preempted reason */
};

/* The decision for s->pre given everything in s->adm holding quota. */
void ref_preempt_decide(const struct ref_preempt_scn *s,
			struct ref_preempt_result *r);

/* Available quota of ClusterQueue node cq for resource res (§3, clamped
 * at 0), with every admitted workload holding quota: the generators use
 * it to build consistent states. */
int64_t ref_preempt_available(const struct ref_preempt_scn *s, int cq,
			      size_t res);

/* A readable dump of s (and of r when not NULL), for failure messages. */
void ref_preempt_dump(FILE *f, const struct ref_preempt_scn *s,
		      const struct ref_preempt_result *r);
const char *ref_preempt_outcome_name(enum ref_preempt_outcome o);

#endif
