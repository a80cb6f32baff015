/*
 * fault: deterministic fault decisions (splitmix64 over a per-kind
 * counter) and their tallies. See fault.h; the callers decide what a hit
 * does (api.c, api_watch.c, admission.c).
 */
#include "devserver/fault.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/alloc.h"

struct faults {
	struct fault_opts o;
	uint64_t stream[FAULT_KINDS];            /* per-kind stream keys */
	atomic_uint_fast64_t drawn[FAULT_KINDS]; /* decisions taken */
	atomic_uint_fast64_t hits[FAULT_KINDS];  /* faults injected */
};

static const char *const names[FAULT_KINDS] = {
	[FAULT_429] = "429",
	[FAULT_500] = "500",
	[FAULT_WATCH_DROP] = "watch-drop",
	[FAULT_GONE] = "gone",
	[FAULT_SLOW] = "slow",
	[FAULT_WEBHOOK_TIMEOUT] = "webhook-timeout",
};

#define GOLDEN 0x9e3779b97f4a7c15ULL

/* splitmix64's finaliser: a bijective mix of 64 bits. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct faults *fault_new(const struct fault_opts *o)
{
	struct faults *f = xcalloc(1, sizeof(*f));

	if (o)
		f->o = *o;
	for (int k = 0; k < FAULT_KINDS; k++) {
		f->stream[k] = mix(f->o.seed + (uint64_t)(k + 1) * GOLDEN);
		atomic_init(&f->drawn[k], 0);
		atomic_init(&f->hits[k], 0);
	}
	return f;
}

void fault_free(struct faults *f)
{
	free(f);
}

bool fault_hit(struct faults *f, enum fault_kind k)
{
	double rate;
	uint64_t n, x;

	if (!f)
		return false;
	rate = f->o.rate[k];
	if (rate <= 0)
		return false;
	n = atomic_fetch_add(&f->drawn[k], 1);
	/* the n-th output of a splitmix64 generator keyed by the stream */
	x = mix(f->stream[k] + (n + 1) * GOLDEN);
	if (rate < 1 && (double)(x >> 11) * 0x1p-53 >= rate)
		return false;
	atomic_fetch_add(&f->hits[k], 1);
	return true;
}

int64_t fault_slow_ms(const struct faults *f)
{
	return f ? f->o.slow_ms : 0;
}

bool fault_enabled(const struct faults *f)
{
	for (int k = 0; f && k < FAULT_KINDS; k++)
		if (f->o.rate[k] > 0)
			return true;
	return false;
}

const char *fault_name(enum fault_kind k)
{
	return names[k];
}

json_t *fault_json(const struct faults *f)
{
	json_t *all = json_object();

	for (int k = 0; k < FAULT_KINDS; k++) {
		json_t *one = json_pack("{s:f, s:I, s:I}", "rate",
					f ? f->o.rate[k] : 0.0, "checked",
					(json_int_t)(f ? atomic_load(
						&f->drawn[k]) : 0),
					"injected",
					(json_int_t)(f ? atomic_load(
						&f->hits[k]) : 0));

		if (k == FAULT_SLOW)
			json_object_set_new(one, "delayMs", json_integer(
				(json_int_t)fault_slow_ms(f)));
		json_object_set_new(all, names[k], one);
	}
	return json_pack("{s:I, s:o}", "seed",
			 (json_int_t)(f ? f->o.seed : 1), "faults", all);
}

void fault_report(const struct faults *f, FILE *out)
{
	for (int k = 0; f && k < FAULT_KINDS; k++) {
		if (f->o.rate[k] <= 0)
			continue;
		fprintf(out, "cueue-devserver: fault %s: %llu injected of "
			"%llu (rate %g, seed %llu)\n", names[k],
			(unsigned long long)atomic_load(&f->hits[k]),
			(unsigned long long)atomic_load(&f->drawn[k]),
			f->o.rate[k], (unsigned long long)f->o.seed);
	}
}

int fault_parse_rate(const char *s, double *rate, struct err *err)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || isnan(v) || v < 0 || v > 1)
		return err_set(err, "%s: want a rate in [0, 1]", s);
	*rate = v;
	return 0;
}
