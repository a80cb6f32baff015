/*
 * resources: resource lists and flavor x resource usage arithmetic.
 *
 * struct reslist is a ResourceList ({cpu: 500m, memory: 1Gi}) with values
 * in milli-units, sorted by name. struct frlist is usage keyed by
 * (flavor, resource), the unit of quota accounting. All arithmetic checks
 * for int64 overflow and reports it instead of wrapping. No I/O.
 */
#ifndef MODEL_RESOURCES_H
#define MODEL_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "model/errors.h"

struct resource {
	char *name;    /* owned; e.g. "cpu", "nvidia.com/gpu" */
	int64_t milli; /* value in milli-units */
};

struct reslist {
	struct resource *v; /* owned; sorted by name, names unique */
	size_t n;
	size_t cap;
};

#define RESLIST_INIT { NULL, 0, 0 }

/* init makes r empty; release frees every name and leaves r empty. */
void reslist_init(struct reslist *r);
void reslist_release(struct reslist *r);
/* Replaces dst with a deep copy of src (no-op when dst == src). */
void reslist_copy(struct reslist *dst, const struct reslist *src);
/* Value of name, 0 when absent. */
int64_t reslist_get(const struct reslist *r, const char *name);
bool reslist_has(const struct reslist *r, const char *name);
/* Sets name to milli (adds the entry when absent). */
void reslist_set(struct reslist *r, const char *name, int64_t milli);
bool reslist_del(struct reslist *r, const char *name);
/* r[name] += milli; -1 + err naming the resource on overflow (r unchanged). */
int reslist_add(struct reslist *r, const char *name, int64_t milli,
		struct err *err) MUST_CHECK;
/* dst += src for every resource of src. */
int reslist_add_all(struct reslist *dst, const struct reslist *src,
		    struct err *err) MUST_CHECK;
/* dst[name] = max(dst[name], src[name]) for every resource of src. */
void reslist_max_all(struct reslist *dst, const struct reslist *src);
/* Every value multiplied by count (>= 0); -1 + err on overflow. */
int reslist_scale(struct reslist *r, int64_t count, struct err *err)
	MUST_CHECK;
/* Same names and values; an entry of 0 equals an absent one. */
bool reslist_equal(const struct reslist *a, const struct reslist *b);

/*
 * Kueue's accounting unit for a resource (resources.ResourceValue): cpu
 * counts milli-units, everything else whole units, rounded up as
 * Quantity.Value() does ("500m" of memory is 1 byte). Returns milli
 * rounded that way (still in milli-units, a multiple of 1000 for non-cpu;
 * INT64_MAX/INT64_MIN saturate). The codec applies it to every quota and
 * request it reads, so cueue's arithmetic matches Kueue's exactly.
 */
int64_t resource_units_milli(const char *name, int64_t milli);

/*
 * Writes v the way Kueue renders a resource amount in status: cpu as a
 * DecimalSI milli quantity ("1500m", "3"), memory, ephemeral-storage and
 * hugepages-* as BinarySI ("1Gi"), anything else DecimalSI. buf must hold
 * QUANTITY_BUF bytes; returns buf.
 */
char *resource_format(const char *name, int64_t milli, char *buf, size_t n);

struct fr_usage {
	char *flavor;   /* owned */
	char *resource; /* owned */
	int64_t milli;  /* may be 0; never negative after frlist_sub */
};

/* Usage keyed by (flavor, resource), sorted by flavor then resource. */
struct frlist {
	struct fr_usage *v; /* owned */
	size_t n;
	size_t cap;
};

#define FRLIST_INIT { NULL, 0, 0 }

/* As the reslist functions: init/release/copy (dst released first; a
 * no-op when dst == src), get (0 when absent), set (copies the names). */
void frlist_init(struct frlist *u);
void frlist_release(struct frlist *u);
void frlist_copy(struct frlist *dst, const struct frlist *src);
int64_t frlist_get(const struct frlist *u, const char *flavor,
		   const char *resource);
void frlist_set(struct frlist *u, const char *flavor, const char *resource,
		int64_t milli);
/* u[f,r] += milli; -1 + err on overflow. */
int frlist_add(struct frlist *u, const char *flavor, const char *resource,
	       int64_t milli, struct err *err) MUST_CHECK;
/* u[f,r] -= milli, clamped at 0 (release never goes negative). */
void frlist_sub(struct frlist *u, const char *flavor, const char *resource,
		int64_t milli);
int frlist_add_all(struct frlist *dst, const struct frlist *src,
		   struct err *err) MUST_CHECK;
void frlist_sub_all(struct frlist *dst, const struct frlist *src);

#endif
