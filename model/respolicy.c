/*
 * respolicy: Kueue's request exclusions and transformations (respolicy.h).
 */
#include "model/respolicy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void res_policy_release(struct res_policy *p)
{
	for (size_t i = 0; i < p->nexclude; i++)
		free(p->exclude[i]);
	free(p->exclude);
	for (size_t i = 0; i < p->ntr; i++) {
		free(p->tr[i].input);
		free(p->tr[i].multiply_by);
		reslist_release(&p->tr[i].outputs);
	}
	free(p->tr);
	memset(p, 0, sizeof(*p));
}

void res_policy_add_exclude(struct res_policy *p, const char *prefix)
{
	p->exclude = xrealloc(p->exclude,
			      (p->nexclude + 1) * sizeof(*p->exclude));
	p->exclude[p->nexclude++] = xstrdup(prefix);
}

void res_policy_add_transform(struct res_policy *p, const char *input,
			      bool replace, const char *multiply_by,
			      const struct reslist *outputs)
{
	struct res_transform *t = NULL;

	for (size_t i = 0; i < p->ntr && !t; i++)
		if (!strcmp(p->tr[i].input, input))
			t = &p->tr[i];
	if (t) {
		free(t->multiply_by);
		reslist_release(&t->outputs);
	} else {
		p->tr = xrealloc(p->tr, (p->ntr + 1) * sizeof(*p->tr));
		t = &p->tr[p->ntr++];
		t->input = xstrdup(input);
	}
	t->replace = replace;
	t->multiply_by = multiply_by && *multiply_by ? xstrdup(multiply_by)
						     : NULL;
	reslist_init(&t->outputs);
	reslist_copy(&t->outputs, outputs);
}

void res_policy_copy(struct res_policy *dst, const struct res_policy *src)
{
	if (dst == src)
		return;
	res_policy_release(dst);
	for (size_t i = 0; i < src->nexclude; i++)
		res_policy_add_exclude(dst, src->exclude[i]);
	for (size_t i = 0; i < src->ntr; i++)
		res_policy_add_transform(dst, src->tr[i].input,
					 src->tr[i].replace,
					 src->tr[i].multiply_by,
					 &src->tr[i].outputs);
}

bool res_policy_empty(const struct res_policy *p)
{
	return !p || (!p->nexclude && !p->ntr);
}

/* ceil(a x b / 1000) in milli-units (a, b >= 0), saturated: a = 1000q + r
 * and b = 1000bq + br give a x b / 1000 = q b + r bq + r br / 1000. */
static int64_t mul_milli(int64_t a, int64_t b)
{
	int64_t q = a / 1000, r = a % 1000, bq = b / 1000, br = b % 1000;
	int64_t t1, t2, out;

	if (__builtin_mul_overflow(q, b, &t1) ||
	    __builtin_mul_overflow(r, bq, &t2) ||
	    __builtin_add_overflow(t2, (r * br + 999) / 1000, &t2) ||
	    __builtin_add_overflow(t1, t2, &out))
		return INT64_MAX;
	return out;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static const struct res_transform *transform_of(const struct res_policy *p,
						const char *name)
{
	for (size_t i = 0; i < p->ntr; i++)
		if (!strcmp(p->tr[i].input, name))
			return &p->tr[i];
	return NULL;
}

static bool excluded(const struct res_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nexclude; i++)
		if (!strncmp(name, p->exclude[i], strlen(p->exclude[i])))
			return true;
	return false;
}

void res_policy_apply(const struct res_policy *p, struct reslist *rl)
{
	struct reslist kept = RESLIST_INIT, gen = RESLIST_INIT;

	if (res_policy_empty(p))
		return;
	for (size_t i = 0; i < rl->n; i++) {
		const struct resource *r = &rl->v[i];
		const struct res_transform *t;
		int64_t base;

		if (excluded(p, r->name))
			continue;
		t = transform_of(p, r->name);
		if (!t) {
			reslist_set(&kept, r->name, r->milli);
			continue;
		}
		base = r->milli < 0 ? 0 : r->milli;
		/* multiplyBy reads the requests left after the exclusions */
		if (t->multiply_by && reslist_has(rl, t->multiply_by) &&
		    !excluded(p, t->multiply_by)) {
			int64_t m = reslist_get(rl, t->multiply_by);

			base = mul_milli(base, m < 0 ? 0 : m);
		}
		for (size_t k = 0; k < t->outputs.n; k++) {
			const struct resource *o = &t->outputs.v[k];
			int64_t v = mul_milli(base, o->milli < 0 ? 0 : o->milli);

			reslist_set(&gen, o->name,
				    add_sat(reslist_get(&gen, o->name), v));
		}
		if (!t->replace)
			reslist_set(&kept, r->name, r->milli);
	}
	for (size_t k = 0; k < gen.n; k++)
		reslist_set(&kept, gen.v[k].name,
			    add_sat(reslist_get(&kept, gen.v[k].name),
				    gen.v[k].milli));
	reslist_release(rl);
	*rl = kept;
	reslist_release(&gen);
}
