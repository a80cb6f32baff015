/*
 * assign: the flavor assigner (kueue-scheduler.md §2.3-2.4, Kueue's
 * flavorassigner.go and podset_reducer.go) over precompiled, integer-only
 * inputs.
 *
 * For each pod set and each resource group it walks the group's flavors
 * in order, checks the flavor against the pod set (taints, node labels:
 * model/placement.h, cached per flavor generation), asks the cohort tree
 * whether the pod set's demand fits (tree_available / potential / borrow
 * level), applies flavorFungibility (whenCanBorrow, whenCanPreempt,
 * preference) and keeps the usage chosen for earlier pod sets. When the
 * full counts do not fit and a pod set has minCount, it binary-searches
 * the largest counts that fit (partial admission).
 *
 * Preemption seam: when a demand fits only after evicting something, the
 * assigner asks an oracle (assign_oracle_fn): sched's runs the classical
 * preemption search on that one flavor x resource (flavors/sched_preempt.c);
 * assign_oracle_none, the default, always answers "no candidates", which
 * yields Kueue's "insufficient unused quota ... N more needed" message.
 *
 * No strings are compared and nothing is allocated per call once the
 * caller's scratch (struct assign_result) has grown; messages are built only
 * on request (assign_message). Pure: no I/O, no globals; the tree is only
 * read.
 */
#ifndef FLAVORS_ASSIGN_H
#define FLAVORS_ASSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"

#include "flavors/tree.h"
#include "model/objects.h"

/* A ResourceFlavor as the assigner sees it (the caller's table, indexed
 * by a dense flavor id). */
struct assign_flavor {
	const char *name;                /* borrowed; never NULL */
	const struct resource_flavor *rf; /* borrowed; NULL when missing */
	uint32_t gen;                    /* changes whenever rf changes; > 0 */
};

/* One resourceGroup of a compiled ClusterQueue. */
struct assign_group {
	int *res;     /* owned; resource ids in coveredResources order */
	size_t nres;
	int *flv;     /* owned; flavor ids in preference order */
	size_t nflv;
	int *fr;      /* owned; [nflv * nres] tree fr ids, row per flavor */
};

/* A ClusterQueue compiled at sched_cq_set time. */
struct assign_cq {
	int node;                       /* tree node of the CQ */
	struct assign_group *groups;       /* owned */
	size_t ngroups;
	int16_t *group_of;              /* owned; resource id -> group, -1 */
	size_t ngroup_of;               /* ids >= this are undeclared */
	enum fungibility when_borrow;
	enum fungibility when_preempt;
	enum fungibility_preference pref;
	/* borrowWithinCohort.policy != Never (fair sharing is not built) */
	bool can_preempt_while_borrowing;
};

void assign_cq_release(struct assign_cq *c);

/* One per-pod request: a dense resource id and milli-units. */
struct assign_req {
	int res;
	int64_t milli; /* per pod, >= 0 */
};

/* A pod set of a pending workload, precompiled at sched_wl_set time. */
struct assign_podset {
	const struct pod_set *ps; /* borrowed (the workload's) */
	int32_t count;            /* effective count (minus reclaimable) */
	int32_t min_count;        /* == count when no minCount */
	struct assign_req *req;      /* owned; sorted by resource name */
	size_t nreq;
	/* Flavor match cache, indexed by flavor id: valid when mstamp
	 * equals the flavor's gen; mres is an enum assign_match. */
	uint32_t *mstamp;         /* owned */
	uint8_t *mres;            /* owned */
	size_t nm;
};

void assign_podset_release(struct assign_podset *p);

/* FlavorAssignmentMode, ordered so min() is the worst. */
enum assign_mode {
	ASSIGN_NOFIT = 0,
	ASSIGN_PREEMPT,
	ASSIGN_FIT,
};

/* Kueue's PreemptionPossibility. */
enum assign_preempt {
	ASSIGN_PP_NO_CANDIDATES = 0,
	ASSIGN_PP_PREEMPT,  /* victims in the same ClusterQueue */
	ASSIGN_PP_RECLAIM,  /* every victim in another ClusterQueue */
};

/* The preemption oracle: could evicting something make val of fr fit cq
 * for the preempting workload (env.preemptor: the caller's id of the
 * workload being assigned, whose priority and queue order decide who may
 * be preempted)? Sets *borrow_after to the borrowing level after those
 * evictions. */
typedef enum assign_preempt assign_oracle_fn(void *ctx,
					     const struct assign_cq *cq,
					     int32_t preemptor, int fr,
					     int64_t val, int *borrow_after);

/* Today's oracle: never any candidate (borrow_after 0), as Kueue answers
 * when nothing may be preempted. */
enum assign_preempt assign_oracle_none(void *ctx, const struct assign_cq *cq,
				       int32_t preemptor, int fr, int64_t val,
				       int *borrow_after);

struct assign_result;

struct assign_env {
	const struct tree *t;
	const struct assign_flavor *flavors; /* by flavor id */
	size_t nflavors;
	const char *const *res_names;     /* by resource id */
	size_t nres;
	int pods_res;                     /* id of "pods", or -1 */
	assign_oracle_fn *oracle;            /* NULL: assign_oracle_none */
	void *oracle_ctx;
	int32_t preemptor;                /* handed to the oracle: the
					     caller's id of the workload
					     being assigned (-1: none) */
	bool ignore_undeclared;
	bool partial_admission;
	/* Whether a Preempt assignment has victims (Kueue's "Preempt with
	 * targets"): the full counts are kept when it does, and the
	 * partial search accepts such counts as it accepts a Fit. NULL:
	 * never. */
	bool (*accept)(void *ctx, const struct assign_result *r);
	void *accept_ctx;
	/* Kueue's NominationMapping: when set, each pod set's resource
	 * group may only take the flavor these cells (an earlier
	 * assignment of the same workload) gave it. NULL: any. */
	const struct assign_cell *pin;
	size_t npin;
};

/* One assigned (pod set, resource): what status.admission records. */
struct assign_cell {
	int32_t ps;   /* pod set index */
	int32_t res;  /* resource id */
	int32_t flv;  /* flavor id */
	int32_t fr;   /* tree fr id */
	int64_t v;    /* per pod x count, milli-units */
	int8_t mode;  /* enum assign_mode of this cell: ASSIGN_PREEMPT when
			 this flavor x resource needs preemption */
};

enum assign_reason_kind {
	AR_UNAVAILABLE = 1, /* resource r unavailable in ClusterQueue */
	AR_NOT_FOUND,       /* flavor f not found */
	AR_TAINT,           /* untolerated taint ... in flavor f */
	AR_AFFINITY,        /* flavor f doesn't match node affinity */
	AR_MAX_CAPACITY,    /* a assumed + b request > c maximum capacity */
	AR_UNUSED,          /* a more needed */
	/* TopologyAwareScheduling (Kueue's checkPodSetAndFlavorMatchForTAS;
	 * cueue places no topology, so it never admits onto one): */
	AR_TAS_NO_SUPPORT,  /* a topology asked of flavor f without one */
	AR_TAS_ONLY,        /* flavor f has a topology, none was asked */
	AR_TAS_UNSUPPORTED, /* a topology asked of flavor f with one */
};

/* A reason a pod set did not fit cleanly, kept as data until asked for
 * as text (see assign_message for the wordings). */
struct assign_reason {
	int32_t ps;
	uint8_t kind;  /* enum assign_reason_kind */
	int32_t res;
	int32_t flv;
	int64_t a, b, c;
};

/*
 * The outcome of one assignment; a reusable scratch owned by the caller
 * (zero it once; assign_result_release frees it). Valid until the next
 * assign_flavors on it.
 */
struct assign_result {
	enum assign_mode mode;       /* representative: worst over pod sets */
	int borrowing;            /* §2.3 level: max over chosen flavors */
	size_t nps;               /* pod sets assigned (stops at a failure) */
	int32_t *count;           /* [nps] counts assigned (partial) */
	int8_t *ps_mode;          /* [nps] enum assign_mode per pod set */
	struct assign_cell *cells;   /* ordered by pod set */
	size_t ncells;
	struct fr_val *usage;     /* summed per fr, in first-use order */
	size_t nusage;
	struct assign_reason *reasons; /* grouped by pod set */
	size_t nreasons;
	/* private scratch */
	size_t cap_ps, cap_cells, cap_usage, cap_reasons;
	int32_t *counts_scratch;
	size_t cap_counts;
	struct assign_cell *best;
	size_t cap_best;
	struct assign_cell *cand;
	size_t cap_cand;
	struct assign_req *reqs;
	size_t cap_reqs;
	int32_t *group_flv;       /* per group: chosen flavor index, -1 */
	size_t cap_group;
	struct sbuf msg;          /* assign_message's sentences */
	size_t *offs;
	size_t cap_offs;
};

void assign_result_release(struct assign_result *r);

/*
 * Assigns flavors to every pod set of a workload for ClusterQueue cq
 * (§2.3), then, when that is not a Fit and partial admission is on and a
 * pod set has minCount below its count, searches reduced counts (§2.4)
 * and keeps the first Fit. out holds the result (the full-count one when
 * no reduction fits). ps match caches are filled as a side effect.
 * Returns out->mode.
 */
enum assign_mode assign_flavors(const struct assign_env *e,
				const struct assign_cq *cq,
				struct assign_podset *ps, size_t nps,
				struct assign_result *out);

/* Assigns with the given counts only (no partial search). */
enum assign_mode assign_flavors_with_counts(const struct assign_env *e,
					    const struct assign_cq *cq,
					    struct assign_podset *ps, size_t nps,
					    const int32_t *counts, struct assign_result *out);

/*
 * Kueue's Assignment.Message(): for each pod set that is not a clean fit,
 * "couldn't assign flavors to pod set <name>: <reasons sorted, joined
 * by ", ">", pod sets joined by "; ". Returns a new string ("" when
 * everything fits). r's scratch holds the sentences meanwhile.
 */
char *assign_message(const struct assign_env *e, const struct assign_podset *ps,
		     struct assign_result *r);

/* Appends reason rs's sentence (Kueue's wording) to b; p is the pod set
 * it is about. */
void assign_reason_append(struct sbuf *b, const struct assign_env *e,
			  const struct assign_podset *p,
			  const struct assign_reason *rs);

#endif
