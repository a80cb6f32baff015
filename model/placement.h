/*
 * placement: taints, tolerations and node affinity, and whether a pod set
 * may be placed on a ResourceFlavor.
 *
 * Kueue's rules, not the kube-scheduler's: a flavor is a set of node labels
 * and taints; only selector keys that the flavor's nodeLabels mention are
 * checked; NoSchedule and NoExecute taints must be tolerated by the pod's
 * tolerations or the flavor's own; PreferNoSchedule is ignored. No I/O.
 */
#ifndef MODEL_PLACEMENT_H
#define MODEL_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/selector.h"
#include "model/smap.h"

enum taint_effect {
	EFFECT_ALL = 0,            /* toleration with empty effect: all */
	EFFECT_NO_SCHEDULE,
	EFFECT_PREFER_NO_SCHEDULE,
	EFFECT_NO_EXECUTE,
};

struct taint {
	char *key;   /* owned; non-empty */
	char *value; /* owned; may be "" */
	enum taint_effect effect; /* never EFFECT_ALL */
	char *time_added; /* owned RFC 3339 text or NULL; kept for round trip */
};

enum tol_op {
	TOL_EQUAL = 0, /* the default when operator is empty */
	TOL_EXISTS,
};

struct toleration {
	char *key;   /* owned; "" with TOL_EXISTS tolerates every key */
	enum tol_op op;
	char *value; /* owned; "" for TOL_EXISTS */
	enum taint_effect effect; /* EFFECT_ALL matches any effect */
	bool has_seconds;
	int64_t seconds; /* tolerationSeconds; meaningful when has_seconds */
};

/* One nodeSelectorTerm: matchExpressions ANDed (matchFields kept only as a
 * count: Kueue ignores them for flavor matching). */
struct node_term {
	struct label_selector exprs; /* matchExpressions; may use Gt/Lt */
	size_t nfields;              /* number of matchFields entries */
};

/* requiredDuringSchedulingIgnoredDuringExecution: terms ORed. */
struct node_affinity {
	bool present;           /* false: no required node affinity */
	struct node_term *terms; /* owned */
	size_t n;
	size_t cap;
};

const char *taint_effect_name(enum taint_effect e); /* "" for EFFECT_ALL */
/* -1 when unknown; "" parses as EFFECT_ALL only when allow_all. */
int taint_effect_parse(const char *s, bool allow_all, enum taint_effect *out);

void taint_release(struct taint *t);
/* The copies overwrite dst without freeing it: dst must be empty. */
void taint_copy(struct taint *dst, const struct taint *src);
void toleration_release(struct toleration *t);
void toleration_copy(struct toleration *dst, const struct toleration *src);
bool toleration_equal(const struct toleration *a, const struct toleration *b);

/* core/v1 Toleration.ToleratesTaint. */
bool toleration_tolerates(const struct toleration *tol, const struct taint *t);

/*
 * Returns the first taint with effect NoSchedule or NoExecute that neither
 * tols_a nor tols_b tolerates, or NULL when all are tolerated (borrowed).
 */
const struct taint *taints_find_untolerated(const struct taint *taints,
					    size_t ntaints,
					    const struct toleration *tols_a,
					    size_t na,
					    const struct toleration *tols_b,
					    size_t nb);

void node_affinity_init(struct node_affinity *a);
/* Frees every term and leaves a initialised (present false). */
void node_affinity_release(struct node_affinity *a);
/* Replaces dst with a deep copy of src (no-op when dst == src). */
void node_affinity_copy(struct node_affinity *dst,
			const struct node_affinity *src);
/* Appends an empty term and returns it (borrowed, valid until the next
 * add). */
struct node_term *node_affinity_add_term(struct node_affinity *a);

/* Kubernetes semantics against a node's labels: terms ORed, a term with no
 * expressions matches nothing, Gt/Lt compare integers. */
bool node_affinity_matches(const struct node_affinity *a,
			   const struct smap *labels);

/*
 * Kueue's flavor check: true when the pod's nodeSelector and required node
 * affinity are compatible with a flavor's nodeLabels, considering only
 * keys present in node_labels. A term that loses every expression to that
 * filter makes the affinity match.
 */
bool flavor_matches_selectors(const struct smap *node_labels,
			      const struct smap *node_selector,
			      const struct node_affinity *affinity);

#endif
