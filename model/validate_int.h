/*
 * validate_int: what validate.c, validate_workload.c and validate_job.c
 * share (STYLE P1: a private header because three .c files of one module
 * need it). Nothing here is visible outside model/validate*.c.
 *
 * Two families of errors are rendered here, each in the exact form the
 * Kubernetes component that reports it uses:
 *   - the CRD schema (OpenAPI markers and CEL rules), rendered as the
 *     apiextensions-apiserver does: "x in body should match '<re>'",
 *     "Too many: 9: must have at most 8 items", CEL failures as
 *     `Invalid value: "object": <message>`;
 *   - Kueue's webhooks, rendered as field.ErrorList entries.
 * Where both would report one rule, the callers report it once.
 */
#ifndef MODEL_VALIDATE_INT_H
#define MODEL_VALIDATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "model/objects.h"

/* The path of a root-level CEL rule: Kubernetes prints a nil field.Path. */
#define VALIDATE_ROOT_PATH "<nil>"

#define VALIDATE_PATH_MAX 1024

/*
 * A field path built in place while walking an object:
 *   size_t m = validate_path_push(&p, ".flavors[%zu]", j);
 *   ...
 *   validate_path_pop(&p, m);
 * Never overflows: a path longer than VALIDATE_PATH_MAX - 1 is cut.
 */
struct validate_path {
	char s[VALIDATE_PATH_MAX]; /* NUL-terminated */
	size_t n;                  /* strlen(s) */
};

void validate_path_init(struct validate_path *p, const char *root);
/* Appends; returns the length before, for validate_path_pop. */
size_t validate_path_push(struct validate_path *p, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
void validate_path_pop(struct validate_path *p, size_t mark);

/* The two name patterns Kueue's reference types carry in the CRD. */
enum validate_ref {
	REF_SUBDOMAIN, /* MaxLength 253, DNS-1123 subdomain pattern */
	REF_LABEL,     /* MaxLength 63, DNS-1123 label pattern */
};

/*
 * A reference-name field as the CRD schema checks it: Too long past the
 * maximum, and "<path> in body should match '<pattern>'" when the pattern
 * fails (the empty string fails it too). s NULL = field absent = no error.
 */
void validate_ref_name(struct field_errors *fe, const char *path,
		       const char *s, enum validate_ref kind);

/* metadata.name and metadata.generateName of a Kueue object: DNS-1123
 * subdomain (generateName as a prefix), as the apiserver's
 * ValidateObjectMeta checks them; one of the two is required. */
void validate_object_name(const struct object_meta *m,
			  struct field_errors *fe);

/* A failed CEL rule on a value of CEL type type ("object", "array",
 * "string"): `<path>: Invalid value: "<type>": <message>`. */
void validate_cel(struct field_errors *fe, const char *path, const char *type,
		  const char *message);

/* OpenAPI minimum: `<path>: Invalid value: v: <path> in body should be
 * greater than or equal to <min>`. */
void validate_minimum(struct field_errors *fe, const char *path, int64_t v,
		      int64_t min);

/* OpenAPI minItems / required list: "Required value" when the list is
 * absent (present false), else `Invalid value: n: <path> in body should
 * have at least <min> items`. */
void validate_min_items(struct field_errors *fe, const char *path,
			bool present, size_t n, size_t min);

/* A list-map duplicate as the apiserver reports it: `<path>: Duplicate
 * value: map[string]interface {}{"<key>":"<value>"}`. */
void validate_dup_map_key(struct field_errors *fe, const char *path,
			  const char *key, const char *value);

/*
 * Marks dup[i] true when names[j] == names[i] for some j < i (NULL names
 * never match). O(n log n), so hostile lists cost little.
 */
void validate_mark_dups(const char *const *names, size_t n, bool *dup);

/*
 * apivalidation.ValidateImmutableField's error: `<path>: Invalid value:
 * <value>: field is immutable`; value printed quoted when quote.
 */
void validate_immutable(struct field_errors *fe, const char *path,
			const char *value, bool quote);

/* Quantity text the way Kueue's messages print value.String(). buf holds
 * QUANTITY_BUF bytes; returns buf. name NULL: plain DecimalSI. */
char *validate_quantity(const char *name, int64_t milli, char *buf);

/* Strings equal, NULL counting as "" (Go's zero string). */
bool validate_str_eq(const char *a, const char *b);
/* Optional strings equal as CEL sees them: both absent, or both present
 * and equal ("" is present). */
bool validate_opt_str_eq(const char *a, const char *b);

/* "v1beta1" or "v1beta2": the Go package name Kueue's messages print. */
const char *validate_go_pkg(enum api_version v);

#endif
