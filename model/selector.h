/*
 * selector: label selectors (metav1.LabelSelector and the string form of
 * labels.Selector).
 *
 * A selector is an AND of requirements. matchLabels {a: b} becomes the
 * requirement "a In (b)"; the string form "a=b,c in (d,e),!f,g!=h,i"
 * parses into the same structure, so one matcher serves the CRD field,
 * kubectl's ?labelSelector= and the devserver. An empty selector matches
 * everything; a selector that must match nothing is expressed by the
 * owner (e.g. a nil namespaceSelector), not here.
 */
#ifndef MODEL_SELECTOR_H
#define MODEL_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "model/smap.h"

enum sel_op {
	SEL_IN,             /* key has one of values */
	SEL_NOT_IN,         /* key absent or has none of values */
	SEL_EXISTS,         /* key present; no values */
	SEL_DOES_NOT_EXIST, /* key absent; no values */
	SEL_GT,             /* node affinity only: value > the one integer */
	SEL_LT,             /* node affinity only: value < the one integer */
};

struct sel_req {
	char *key;     /* owned */
	enum sel_op op;
	char **values; /* owned array of owned strings */
	size_t nvalues;
};

struct label_selector {
	struct sel_req *reqs; /* owned; ANDed */
	size_t n;
	size_t cap;
};

#define LABEL_SELECTOR_INIT { NULL, 0, 0 }

void label_selector_init(struct label_selector *s);
/* Frees every requirement and leaves s empty (initialised). */
void label_selector_release(struct label_selector *s);
/* Replaces dst with a deep copy of src (no-op when dst == src). */
void label_selector_copy(struct label_selector *dst,
			 const struct label_selector *src);
/* Appends a requirement; copies key and values. */
void label_selector_add(struct label_selector *s, const char *key,
			enum sel_op op, const char *const *values,
			size_t nvalues);

/* True when labels satisfy req / every requirement of s. */
bool sel_req_matches(const struct sel_req *req, const struct smap *labels);
bool label_selector_matches(const struct label_selector *s,
			    const struct smap *labels);

/*
 * Parses the string form used by ?labelSelector= and kubectl -l:
 * "a=b", "a==b", "a!=b", "a in (b,c)", "a notin (b)", "a", "!a", joined by
 * commas, whitespace allowed around tokens, also "k>5" / "k<5". out must
 * be initialised; it is replaced on success and untouched on failure.
 * Returns 0, or -1 with err describing the problem in Kubernetes' words
 * (keys and values are syntax-checked).
 */
int label_selector_parse(const char *text, struct label_selector *out,
			 struct err *err) MUST_CHECK;

/* Returns the string form as a new string (Kubernetes' ordering: the
 * requirements sorted by key, values sorted). */
char *label_selector_string(const struct label_selector *s);

/*
 * Adds field errors for keys that are not qualified names, values that
 * are not label values, In/NotIn without values and Exists/DoesNotExist
 * with values, as metav1validation.ValidateLabelSelector does. path is the
 * selector's own path ("spec.namespaceSelector").
 */
void label_selector_validate(const struct label_selector *s, const char *path,
			     struct field_errors *fe);

/* Name of an operator as written in YAML ("In", "NotIn", ...). */
const char *sel_op_name(enum sel_op op);
/* Parses an operator name; -1 when unknown. allow_gt_lt admits Gt/Lt. */
int sel_op_parse(const char *name, bool allow_gt_lt, enum sel_op *out);

#endif
