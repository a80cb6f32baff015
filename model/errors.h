/*
 * errors: the two error carriers of cueue.
 *
 * struct err holds one complete message for an expected runtime failure
 * (P6): a function returns -1 (or NULL) and fills it; on success it is
 * untouched, so calls can be chained and the message of the first failure
 * survives.
 *
 * struct field_errors collects every problem of one object, like Kueue's
 * field.ErrorList, each rendered in Kubernetes' wording:
 *   spec.queueingStrategy: Unsupported value: "X": supported values: "A", "B"
 * Validators and decoders add to it; the webhook and the devserver print
 * them all in one answer.
 */
#ifndef MODEL_ERRORS_H
#define MODEL_ERRORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"

#define ERR_MAX 512

struct err {
	char msg[ERR_MAX]; /* NUL-terminated; "" until the first err_set */
};

/* Sets err's message like printf unless err is NULL. Returns -1 so that
 * `return err_set(err, ...)` reads as a failure return. */
int err_set(struct err *err, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* The kinds of field.Error, in Kubernetes' order; each renders its own
 * wording (see fe_add). */
enum fe_kind {
	FE_NOT_FOUND,    /* Not found: <value> */
	FE_REQUIRED,     /* Required value[: detail] */
	FE_DUPLICATE,    /* Duplicate value: <value> */
	FE_INVALID,      /* Invalid value: <value>: detail */
	FE_UNSUPPORTED,  /* Unsupported value: <value>: supported values: ... */
	FE_FORBIDDEN,    /* Forbidden: detail */
	FE_TOO_LONG,     /* Too long: may not be more than N bytes */
	FE_TOO_MANY,     /* Too many: <value>: must have at most N items */
	FE_TYPE,         /* Invalid value: <value>: must be of type T */
	FE_INTERNAL,     /* Internal error: detail */
};

struct field_error {
	enum fe_kind kind;
	char *path; /* owned; e.g. "spec.resourceGroups[0].flavors[1].name" */
	char *text; /* owned; the whole line "path: Kind: detail" */
};

struct field_errors {
	struct field_error *v; /* owned array of n entries */
	size_t n;
	size_t cap;
};

#define FIELD_ERRORS_INIT { NULL, 0, 0 }

/* init makes fe empty; release frees every entry and leaves fe empty. */
void field_errors_init(struct field_errors *fe);
void field_errors_release(struct field_errors *fe);

/*
 * Adds one error. value is the offending value as text or NULL when the
 * kind shows none; with quote set it is printed as a Go %q string
 * ("Borrow"), otherwise verbatim (numbers: 5). detail is a printf format
 * (may be NULL). Per kind:
 *   FE_UNSUPPORTED: detail is the already-joined list `"A", "B"`
 *   FE_TOO_LONG:    detail is the limit ("253")
 *   FE_TOO_MANY:    detail is the limit ("8")
 *   FE_TYPE:        detail is the expected type ("integer")
 */
void fe_add(struct field_errors *fe, enum fe_kind kind, const char *path,
	    const char *value, bool quote, const char *detail, ...)
	PRINTF_LIKE(6, 7);

/* Shorthands for the common cases. */
void fe_required(struct field_errors *fe, const char *path, const char *detail);
void fe_invalid(struct field_errors *fe, const char *path, const char *value,
		const char *detail);
void fe_invalid_num(struct field_errors *fe, const char *path, int64_t value,
		    const char *detail);
/* supported: NULL-terminated list of the allowed values. */
void fe_unsupported(struct field_errors *fe, const char *path,
		    const char *value, const char *const *supported);
void fe_forbidden(struct field_errors *fe, const char *path, const char *detail);
void fe_duplicate(struct field_errors *fe, const char *path, const char *value);
void fe_too_long(struct field_errors *fe, const char *path, size_t max);
void fe_too_many(struct field_errors *fe, const char *path, size_t have,
		 size_t max);

/* Moves every entry of src to the end of dst; src is left empty. */
void field_errors_take_all(struct field_errors *dst, struct field_errors *src);

/* True when some entry's path equals path (tests use it). */
bool field_errors_has_path(const struct field_errors *fe, const char *path);

/*
 * Returns a new string joining all texts the way Go's
 * ErrorList.ToAggregate().Error() does: one error alone as is, several as
 * "[a, b, c]". Returns a new "" when empty.
 */
char *field_errors_aggregate(const struct field_errors *fe);

/* Writes s quoted as Go's %q would (ASCII subset: \" \\ \n \t \xNN) into a
 * new string. */
char *go_quote(const char *s);

/*
 * Shortens s in place so that it does not end inside a UTF-8 sequence, as
 * a byte cut (snprintf's, or a length cap) can leave it; returns the new
 * length. Every message and path that is cut goes through it, so what the
 * webhook or the devserver puts in JSON stays valid UTF-8.
 */
size_t utf8_trim_tail(char *s);

#endif
