/*
 * resources: sorted resource lists and (flavor, resource) usage lists (see
 * resources.h). Both are sorted arrays searched by bisection: a workload
 * names a handful of resources and a ClusterQueue a few dozen
 * (flavor, resource) pairs, where an array beats a hash table.
 *
 * Every operation that can overflow checks first and changes nothing on
 * failure, so a caller that gets -1 still holds the list it had. Release
 * (frlist_sub) never fails: it clamps at 0, as freeing quota must not be
 * refused. No I/O.
 */
#include "model/resources.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"

/* Resource names Kueue renders as binary SI (resources.ResourceQuantity);
 * prefix entries match every name that starts with them. */
static const struct {
	const char *name;
	bool prefix;
} binary_names[] = {
	{ "memory", false },
	{ "ephemeral-storage", false },
	{ "hugepages-", true },
};

static bool add_overflows(int64_t a, int64_t b)
{
	return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* ---- reslist ---- */

void reslist_init(struct reslist *r)
{
	r->v = NULL;
	r->n = 0;
	r->cap = 0;
}

void reslist_release(struct reslist *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	reslist_init(r);
}

void reslist_copy(struct reslist *dst, const struct reslist *src)
{
	if (dst == src)
		return;
	reslist_release(dst);
	if (!src->n)
		return;
	dst->v = xcalloc(src->n, sizeof(*dst->v));
	dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i].name = xstrdup(src->v[i].name);
		dst->v[i].milli = src->v[i].milli;
	}
	dst->n = src->n;
}

/* Index of name, or where it would be inserted (with *found false). */
static size_t find_res(const struct reslist *r, const char *name, bool *found)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->v[mid].name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static void insert_res(struct reslist *r, size_t i, const char *name,
		       int64_t milli)
{
	XGROW(r->v, r->cap, r->n + 1);
	memmove(r->v + i + 1, r->v + i, (r->n - i) * sizeof(*r->v));
	r->v[i].name = xstrdup(name);
	r->v[i].milli = milli;
	r->n++;
}

int64_t reslist_get(const struct reslist *r, const char *name)
{
	bool found;
	size_t i = find_res(r, name, &found);

	return found ? r->v[i].milli : 0;
}

bool reslist_has(const struct reslist *r, const char *name)
{
	bool found;

	find_res(r, name, &found);
	return found;
}

void reslist_set(struct reslist *r, const char *name, int64_t milli)
{
	bool found;
	size_t i = find_res(r, name, &found);

	if (found)
		r->v[i].milli = milli;
	else
		insert_res(r, i, name, milli);
}

bool reslist_del(struct reslist *r, const char *name)
{
	bool found;
	size_t i = find_res(r, name, &found);

	if (!found)
		return false;
	free(r->v[i].name);
	memmove(r->v + i, r->v + i + 1, (r->n - i - 1) * sizeof(*r->v));
	r->n--;
	return true;
}

static int add_overflow_err(struct err *err, const char *name, int64_t have,
			    int64_t milli)
{
	return err_set(err, "resource %s: %" PRId64 " + %" PRId64
		       " overflows int64 milli-units", name, have, milli);
}

int reslist_add(struct reslist *r, const char *name, int64_t milli,
		struct err *err)
{
	bool found;
	size_t i = find_res(r, name, &found);

	if (!found) {
		insert_res(r, i, name, milli);
		return 0;
	}
	if (add_overflows(r->v[i].milli, milli))
		return add_overflow_err(err, name, r->v[i].milli, milli);
	r->v[i].milli += milli;
	return 0;
}

int reslist_add_all(struct reslist *dst, const struct reslist *src,
		    struct err *err)
{
	/* 1. Check every sum, so that a failure leaves dst untouched. */
	for (size_t i = 0; i < src->n; i++) {
		int64_t have = reslist_get(dst, src->v[i].name);

		if (add_overflows(have, src->v[i].milli))
			return add_overflow_err(err, src->v[i].name, have,
						src->v[i].milli);
	}
	/* 2. Apply; dst may be src, whose entries are then read before
	 * being written and never moved (every name already exists). */
	for (size_t i = 0; i < src->n; i++) {
		int64_t v = src->v[i].milli;

		if (reslist_add(dst, src->v[i].name, v, err) != 0)
			BUG("reslist_add_all: overflow after the check");
	}
	return 0;
}

/* An absent entry takes src's value (Kueue's MergeResourceListKeepMax), so
 * a negative value is not lifted to the 0 that reslist_get reports. */
void reslist_max_all(struct reslist *dst, const struct reslist *src)
{
	for (size_t i = 0; i < src->n; i++) {
		bool found;
		size_t j = find_res(dst, src->v[i].name, &found);

		if (!found)
			insert_res(dst, j, src->v[i].name, src->v[i].milli);
		else if (src->v[i].milli > dst->v[j].milli)
			dst->v[j].milli = src->v[i].milli;
	}
}

int reslist_scale(struct reslist *r, int64_t count, struct err *err)
{
	int64_t tmp;

	if (count < 0)
		BUG("reslist_scale: negative count %" PRId64, count);
	for (size_t i = 0; i < r->n; i++) {
		const struct resource *e = &r->v[i];

		if (__builtin_mul_overflow(e->milli, count, &tmp))
			return err_set(err, "resource %s: %" PRId64 " x %"
				       PRId64 " overflows int64 milli-units",
				       e->name, e->milli, count);
	}
	for (size_t i = 0; i < r->n; i++)
		r->v[i].milli *= count;
	return 0;
}

bool reslist_equal(const struct reslist *a, const struct reslist *b)
{
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		int c;

		if (i == a->n)
			c = 1;
		else if (j == b->n)
			c = -1;
		else
			c = strcmp(a->v[i].name, b->v[j].name);
		if (c < 0) {
			if (a->v[i++].milli != 0)
				return false;
		} else if (c > 0) {
			if (b->v[j++].milli != 0)
				return false;
		} else if (a->v[i++].milli != b->v[j++].milli) {
			return false;
		}
	}
	return true;
}

static bool is_binary_resource(const char *name)
{
	for (size_t i = 0; i < sizeof(binary_names) / sizeof(binary_names[0]);
	     i++) {
		const char *b = binary_names[i].name;

		if (binary_names[i].prefix ? strncmp(name, b, strlen(b)) == 0
					   : strcmp(name, b) == 0)
			return true;
	}
	return false;
}

/*
 * Kueue prints cpu with NewMilliQuantity(v, DecimalSI) and other resources
 * with NewQuantity(v, BinarySI or DecimalSI). Kueue's non-cpu v is already
 * whole units (Quantity.Value() at ingestion); that rounding belongs to
 * whoever ingests, so this prints the value it is given, exactly.
 */
char *resource_format(const char *name, int64_t milli, char *buf, size_t n)
{
	enum qformat format = QF_DECIMAL_SI;

	if (strcmp(name, "cpu") != 0 && is_binary_resource(name))
		format = QF_BINARY_SI;
	return quantity_format(milli, format, buf, n);
}

/* ---- frlist ---- */

void frlist_init(struct frlist *u)
{
	u->v = NULL;
	u->n = 0;
	u->cap = 0;
}

void frlist_release(struct frlist *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].flavor);
		free(u->v[i].resource);
	}
	free(u->v);
	frlist_init(u);
}

void frlist_copy(struct frlist *dst, const struct frlist *src)
{
	if (dst == src)
		return;
	frlist_release(dst);
	if (!src->n)
		return;
	dst->v = xcalloc(src->n, sizeof(*dst->v));
	dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i].flavor = xstrdup(src->v[i].flavor);
		dst->v[i].resource = xstrdup(src->v[i].resource);
		dst->v[i].milli = src->v[i].milli;
	}
	dst->n = src->n;
}

/* Order by flavor, then resource. */
static int cmp_fr(const struct fr_usage *e, const char *flavor,
		  const char *resource)
{
	int c = strcmp(e->flavor, flavor);

	return c != 0 ? c : strcmp(e->resource, resource);
}

static size_t find_fr(const struct frlist *u, const char *flavor,
		      const char *resource, bool *found)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_fr(&u->v[mid], flavor, resource);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static void insert_fr(struct frlist *u, size_t i, const char *flavor,
		      const char *resource, int64_t milli)
{
	XGROW(u->v, u->cap, u->n + 1);
	memmove(u->v + i + 1, u->v + i, (u->n - i) * sizeof(*u->v));
	u->v[i].flavor = xstrdup(flavor);
	u->v[i].resource = xstrdup(resource);
	u->v[i].milli = milli;
	u->n++;
}

int64_t frlist_get(const struct frlist *u, const char *flavor,
		   const char *resource)
{
	bool found;
	size_t i = find_fr(u, flavor, resource, &found);

	return found ? u->v[i].milli : 0;
}

void frlist_set(struct frlist *u, const char *flavor, const char *resource,
		int64_t milli)
{
	bool found;
	size_t i = find_fr(u, flavor, resource, &found);

	if (found)
		u->v[i].milli = milli;
	else
		insert_fr(u, i, flavor, resource, milli);
}

static int fr_overflow_err(struct err *err, const char *flavor,
			   const char *resource, int64_t have, int64_t milli)
{
	return err_set(err, "flavor %s resource %s: %" PRId64 " + %" PRId64
		       " overflows int64 milli-units", flavor, resource, have,
		       milli);
}

int frlist_add(struct frlist *u, const char *flavor, const char *resource,
	       int64_t milli, struct err *err)
{
	bool found;
	size_t i = find_fr(u, flavor, resource, &found);

	if (!found) {
		insert_fr(u, i, flavor, resource, milli);
		return 0;
	}
	if (add_overflows(u->v[i].milli, milli))
		return fr_overflow_err(err, flavor, resource, u->v[i].milli,
				       milli);
	u->v[i].milli += milli;
	return 0;
}

/* An absent entry stays absent: its value, 0, is already the clamp. */
void frlist_sub(struct frlist *u, const char *flavor, const char *resource,
		int64_t milli)
{
	bool found;
	size_t i = find_fr(u, flavor, resource, &found);
	int64_t v;

	if (!found)
		return;
	v = milli_sub_sat(u->v[i].milli, milli);
	u->v[i].milli = v < 0 ? 0 : v;
}

int frlist_add_all(struct frlist *dst, const struct frlist *src,
		   struct err *err)
{
	/* 1. Check every sum first, as reslist_add_all does. */
	for (size_t i = 0; i < src->n; i++) {
		const struct fr_usage *e = &src->v[i];
		int64_t have = frlist_get(dst, e->flavor, e->resource);

		if (add_overflows(have, e->milli))
			return fr_overflow_err(err, e->flavor, e->resource,
					       have, e->milli);
	}
	/* 2. Apply. */
	for (size_t i = 0; i < src->n; i++) {
		const struct fr_usage *e = &src->v[i];

		if (frlist_add(dst, e->flavor, e->resource, e->milli, err) != 0)
			BUG("frlist_add_all: overflow after the check");
	}
	return 0;
}

void frlist_sub_all(struct frlist *dst, const struct frlist *src)
{
	for (size_t i = 0; i < src->n; i++)
		frlist_sub(dst, src->v[i].flavor, src->v[i].resource,
			   src->v[i].milli);
}

int64_t resource_units_milli(const char *name, int64_t milli)
{
	int64_t q = milli / 1000, r = milli % 1000;

	if (!strcmp(name, "cpu") || r == 0)
		return milli;
	/* Away from zero, as Value() rounds. */
	if (r > 0)
		return q >= INT64_MAX / 1000 ? INT64_MAX : (q + 1) * 1000;
	return q <= INT64_MIN / 1000 ? INT64_MIN : (q - 1) * 1000;
}
