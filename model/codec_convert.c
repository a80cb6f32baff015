/*
 * codec_convert: kueue.x-k8s.io v1beta1 <-> v1beta2 on the JSON tree
 * (kueue-api.md §9), for the conversion webhook and the devserver.
 *
 * The mapping is Kueue's, field by field (apis/kueue/v1beta1/
 * *_conversion.go and the generated conversions beside them): what a
 * v1beta1 client reads of a v1beta2 object, and what a v1beta1 write
 * stores, are what Kueue's webhook would give. The input is never
 * modified: the object is deep-copied and the copy rewritten in place.
 * Per kind (v1beta1 -> v1beta2 / v1beta2 -> v1beta1):
 *   ClusterQueue  spec.cohort <-> spec.cohortName. A non-empty v1beta1
 *                 spec.admissionChecks list becomes admissionChecksStrategy
 *                 {admissionChecks: [{name}, ...]}, replacing a strategy
 *                 given beside it; an empty list is dropped. The strategy
 *                 is copied unchanged both ways (v1beta1 has it too), so a
 *                 v1beta1 reader sees a v1beta2 strategy as a strategy and
 *                 a v1beta1 apply can remove it or set it again.
 *                 whenCanBorrow Borrow and whenCanPreempt Preempt become
 *                 MayStopSearch; MayStopSearch, valid in v1beta1 too, stays.
 *   LocalQueue    status.flavorUsage <-> status.flavorsUsage.
 *   Workload      priorityClassSource + priorityClassName <->
 *                 priorityClassRef, for the two sources Kueue knows (any
 *                 other source, e.g. "", or group/kind, maps to nothing);
 *                 status.accumulatedPastExexcutionTimeSeconds (sic) <->
 *                 accumulatedPastExecutionTimeSeconds; each admission's
 *                 topologyAssignment domains <-> slices (below).
 *   Cohort, ResourceFlavor, WorkloadPriorityClass: apiVersion only, and
 *                 the drops of drop_tab.
 * A field with no counterpart in the target version is dropped (drop_tab),
 * as Kueue's typed conversion drops it; so is a target-version field that
 * the input's version does not define (the API server would have pruned
 * it), so that every target field comes from its source counterpart only.
 *
 * NO CONVERSION ANNOTATION. cueue used to stash fields without a
 * counterpart in the annotation kueue.x-k8s.io/conversion-data and to
 * spell a v1beta2 strategy as v1beta1's plain list, for lossless round
 * trips. Kueue does neither, and both showed: v1beta1 clients saw an
 * annotation and a list Kueue never shows, and a v1beta1 apply over a
 * queue created in v1beta2 could not remove its checks or set the
 * strategy (the list came back; list + strategy is refused). Restoring
 * stashed values after a v1beta1 write would also override the writer's
 * change. So nothing is stashed: a v1beta1 write loses v1beta2-only
 * fields (concurrentAdmissionPolicy, preemptionGates, ...) exactly as it
 * does with Kueue. An annotation of that name left by an older cueue is
 * an annotation like any other: passed through, never interpreted.
 *
 * TOPOLOGY ASSIGNMENTS. v1beta1 lists {values, count} per domain; v1beta2
 * compresses domains into slices (kueue-api.md §9). v1beta2 -> v1beta1
 * expands every slice. v1beta1 -> v1beta2 encodes as Kueue does with its
 * default TASAssignmentsEncodingByHostnamePrefix: when the lowest level is
 * kubernetes.io/hostname, consecutive domains whose hostnames share a
 * reused "-"-terminated prefix form one slice each (longest prefixes
 * first, shorter ones while that gives more than 1000 slices); every
 * slice holds at most 100000 domains; and when that gives several slices,
 * one single slice is used instead if its JSON is shorter. Within a
 * slice, a level whose values are all equal is "universal", otherwise
 * "individual" with the longest common prefix and suffix, and pod counts
 * likewise. Unlike Kueue's byte-wise code, a prefix or suffix never ends
 * inside a UTF-8 character (label values are ASCII, where the two agree).
 *
 * JSON, NOT GO STRUCTS. Fields are renamed as they are: an empty list or
 * string stays present where Go's omitempty would leave it out, and no
 * zero value is added where Go would print one; the API server's readers
 * treat both alike. A value of the wrong JSON type is carried over for
 * the target version's validation to report, except where the conversion
 * must compute with it (topology assignments): there, as where Kueue's
 * code would fail, the conversion fails with an error naming the field.
 * A round trip is the identity unless the object used a spelling the
 * other version lacks (admissionChecks, Borrow, Preempt, an unknown
 * priority source) or a field without counterpart; a second round trip
 * always is (test/fuzz/fuzz_convert.c).
 */
#include "model/codec.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "model/codec_int.h"

#define HOSTNAME_LABEL "kubernetes.io/hostname"
/* Kueue's v1beta2 limits: roots / individual counts per slice, slices. */
#define MAX_SLICE_DOMAINS 100000
#define MAX_SLICES 1000
/* Most domains one assignment may expand to (a universal slice can claim
 * any domainCount); far beyond anything an object could be built from. */
#define MAX_EXPANDED_DOMAINS 1000000

struct conv {
	json_t *o;       /* the copy being rewritten */
	bool v2;         /* converting to v1beta2 (else to v1beta1) */
	struct err *err; /* borrowed; set on failure */
};

static bool is_str(const json_t *j, const char *s)
{
	return json_is_string(j) && !strcmp(json_string_value(j), s);
}

/* parent[to] = parent[from], removing both first: the target field only
 * ever comes from its source counterpart. */
static void rename_member(json_t *parent, const char *from, const char *to)
{
	json_t *v = json_object_get(parent, from);

	json_incref(v);
	json_object_del(parent, to);
	if (v) {
		json_object_del(parent, from);
		json_object_set_new(parent, to, v);
	}
}

/* ------------------------------------------------------------------ */
/* Dropped fields */

/*
 * Deletes the field at path from o. Segments are separated by '.', and a
 * segment ending in "[]" names an array whose every item is descended
 * into. Missing or mistyped intermediates end the walk.
 */
static void drop_path(json_t *o, const char *path)
{
	const char *dot = strchr(path, '.');
	size_t n = dot ? (size_t)(dot - path) : strlen(path);
	char seg[64];
	bool each;
	json_t *next, *item;
	size_t i;

	if (!json_is_object(o) || n >= sizeof(seg))
		return;
	memcpy(seg, path, n);
	seg[n] = '\0';
	each = n > 2 && !strcmp(seg + n - 2, "[]");
	if (each)
		seg[n - 2] = '\0';
	if (!dot) {
		json_object_del(o, seg);
		return;
	}
	next = json_object_get(o, seg);
	if (!each) {
		drop_path(next, dot + 1);
		return;
	}
	json_array_foreach(next, i, item)
		drop_path(item, dot + 1);
}

/* Fields with no counterpart in the other version, dropped both ways
 * (kueue-api.md §9; Kueue's generated conversions mark each "does not
 * exist in peer-type"). v1beta1's spec.admissionChecks is not here: it is
 * converted (conv_cq_checks). */
static const struct {
	enum kind kind;
	const char *path;
} drop_tab[] = {
	/* v1beta1 only */
	{ KIND_CLUSTER_QUEUE, "status.pendingWorkloadsStatus" },
	{ KIND_CLUSTER_QUEUE, "status.fairSharing.admissionFairSharingStatus" },
	{ KIND_COHORT, "status.fairSharing.admissionFairSharingStatus" },
	{ KIND_LOCAL_QUEUE, "status.flavors" },
	/* v1beta2 only */
	{ KIND_CLUSTER_QUEUE, "spec.concurrentAdmissionPolicy" },
	{ KIND_WORKLOAD, "spec.preemptionGates" },
	{ KIND_WORKLOAD, "status.preemptionGates" },
	{ KIND_WORKLOAD,
	  "spec.podSets[].topologyRequest."
	  "podsetSliceRequiredTopologyConstraints" },
	/* v1beta2 only in cueue's CRD; Kueue has no such fields */
	{ KIND_LOCAL_QUEUE, "spec.wallTimePolicy" },
	{ KIND_LOCAL_QUEUE, "status.wallTimeFlavorUsage" },
};

static void drop_fields(struct conv *cv, enum kind k)
{
	for (size_t i = 0; i < sizeof(drop_tab) / sizeof(drop_tab[0]); i++)
		if (drop_tab[i].kind == k)
			drop_path(cv->o, drop_tab[i].path);
}

/* ------------------------------------------------------------------ */
/* ClusterQueue */

/* v1beta1's non-empty admissionChecks list replaces the strategy. */
static void conv_cq_checks(struct conv *cv, json_t *spec)
{
	json_t *ac = json_object_get(spec, "admissionChecks"), *list, *e;
	size_t i;

	json_incref(ac);
	json_object_del(spec, "admissionChecks");
	if (cv->v2 && json_is_array(ac) && json_array_size(ac) > 0) {
		json_t *strat = json_object();

		list = json_array();
		json_array_foreach(ac, i, e) {
			json_t *rule = json_object();

			json_object_set(rule, "name", e);
			json_array_append_new(list, rule);
		}
		json_object_set_new(strat, "admissionChecks", list);
		json_object_set_new(spec, "admissionChecksStrategy", strat);
	}
	json_decref(ac);
}

static void conv_cluster_queue(struct conv *cv)
{
	json_t *spec = json_object_get(cv->o, "spec");
	json_t *ff = json_object_get(spec, "flavorFungibility");

	if (json_is_object(spec)) {
		rename_member(spec, cv->v2 ? "cohort" : "cohortName",
			      cv->v2 ? "cohortName" : "cohort");
		conv_cq_checks(cv, spec);
	}
	if (cv->v2 && json_is_object(ff)) {
		if (is_str(json_object_get(ff, "whenCanBorrow"), "Borrow"))
			json_object_set_new(ff, "whenCanBorrow",
					    json_string("MayStopSearch"));
		if (is_str(json_object_get(ff, "whenCanPreempt"), "Preempt"))
			json_object_set_new(ff, "whenCanPreempt",
					    json_string("MayStopSearch"));
	}
}

/* ------------------------------------------------------------------ */
/* LocalQueue */

static void conv_local_queue(struct conv *cv)
{
	json_t *st = json_object_get(cv->o, "status");

	if (json_is_object(st))
		rename_member(st, cv->v2 ? "flavorUsage" : "flavorsUsage",
			      cv->v2 ? "flavorsUsage" : "flavorUsage");
}

/* ------------------------------------------------------------------ */
/* Workload: priority class */

static const struct {
	const char *source; /* v1beta1 priorityClassSource */
	const char *group;  /* v1beta2 priorityClassRef */
	const char *kind;
} prio_refs[] = {
	{ "kueue.x-k8s.io/workloadpriorityclass", KUEUE_GROUP,
	  "WorkloadPriorityClass" },
	{ "scheduling.k8s.io/priorityclass", "scheduling.k8s.io",
	  "PriorityClass" },
};

#define NPRIO_REFS (sizeof(prio_refs) / sizeof(prio_refs[0]))

/* priorityClassSource + Name -> priorityClassRef; any other source maps
 * to nothing. Kueue builds the reference even for an empty name. */
static void prio_to_v2(json_t *spec)
{
	json_t *name = json_object_get(spec, "priorityClassName");
	json_t *src = json_object_get(spec, "priorityClassSource");
	json_t *ref = NULL;

	for (size_t i = 0; i < NPRIO_REFS && !ref; i++) {
		if (!is_str(src, prio_refs[i].source))
			continue;
		ref = json_object();
		json_object_set_new(ref, "group",
				    json_string(prio_refs[i].group));
		json_object_set_new(ref, "kind",
				    json_string(prio_refs[i].kind));
		json_object_set_new(ref, "name", name ? json_incref(name) :
							json_string(""));
	}
	json_object_del(spec, "priorityClassName");
	json_object_del(spec, "priorityClassSource");
	json_object_del(spec, "priorityClassRef");
	if (ref)
		json_object_set_new(spec, "priorityClassRef", ref);
}

/* priorityClassRef -> priorityClassSource + Name, for the two known
 * group/kind pairs; any other reference maps to nothing. */
static void prio_to_v1(json_t *spec)
{
	json_t *ref = json_object_get(spec, "priorityClassRef");
	json_t *name = NULL;
	const char *src = NULL;

	for (size_t i = 0; i < NPRIO_REFS && !src; i++) {
		const json_t *g = json_object_get(ref, "group");

		if (!is_str(g, prio_refs[i].group) ||
		    !is_str(json_object_get(ref, "kind"), prio_refs[i].kind))
			continue;
		src = prio_refs[i].source;
		name = json_object_get(ref, "name");
		name = name ? json_incref(name) : json_string("");
	}
	json_object_del(spec, "priorityClassRef");
	json_object_del(spec, "priorityClassName");
	json_object_del(spec, "priorityClassSource");
	if (!src)
		return;
	json_object_set_new(spec, "priorityClassName", name);
	json_object_set_new(spec, "priorityClassSource", json_string(src));
}

/* ------------------------------------------------------------------ */
/* Workload: topology assignments, v1beta1 domains -> v1beta2 slices */

/* The v1beta1 domains of one assignment, read and checked. */
struct domains {
	size_t n, nl;       /* domains, levels */
	const char **val;   /* n * nl, borrowed from the tree; [i*nl + l] */
	size_t *len;        /* n * nl byte lengths */
	json_int_t *count;  /* n pod counts, int32 range */
	bool by_hostname;   /* lowest level is kubernetes.io/hostname */
};

static void domains_release(struct domains *d)
{
	free(d->val);
	free(d->len);
	free(d->count);
}

static bool is_int32(const json_t *j)
{
	return json_is_integer(j) && json_integer_value(j) >= INT32_MIN &&
	       json_integer_value(j) <= INT32_MAX;
}

static bool is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Reads levels and domains of ta (an object) into d. path names ta. */
static int domains_read(const json_t *ta, const char *path,
			struct domains *d, struct err *err)
{
	const json_t *levels = json_object_get(ta, "levels");
	const json_t *doms = json_object_get(ta, "domains"), *e, *vals;
	size_t i, l;

	memset(d, 0, sizeof(*d));
	if (levels && !json_is_array(levels) && !json_is_null(levels))
		return err_set(err, "%s.levels: must be an array of strings",
			       path);
	if (doms && !json_is_array(doms) && !json_is_null(doms))
		return err_set(err, "%s.domains: must be an array", path);
	d->nl = json_array_size(levels);
	json_array_foreach(levels, i, e)
		if (!json_is_string(e))
			return err_set(err, "%s.levels[%zu]: must be a string",
				       path, i);
	d->by_hostname = d->nl > 0 &&
			 is_str(json_array_get(levels, d->nl - 1),
				HOSTNAME_LABEL);
	d->n = json_array_size(doms);
	d->val = xcalloc(d->n * d->nl + 1, sizeof(*d->val));
	d->len = xcalloc(d->n * d->nl + 1, sizeof(*d->len));
	d->count = xcalloc(d->n + 1, sizeof(*d->count));
	json_array_foreach(doms, i, e) {
		if (!json_is_object(e))
			return err_set(err, "%s.domains[%zu]: must be an "
				       "object", path, i);
		vals = json_object_get(e, "values");
		if (!is_int32(json_object_get(e, "count")))
			return err_set(err, "%s.domains[%zu].count: must be a "
				       "32-bit integer", path, i);
		d->count[i] = json_integer_value(json_object_get(e, "count"));
		/* Values past the levels are ignored, as Kueue does. */
		if (json_array_size(vals) < d->nl)
			return err_set(err, "%s.domains[%zu].values: %zu "
				       "values for %zu levels", path, i,
				       json_array_size(vals), d->nl);
		for (l = 0; l < d->nl; l++) {
			const json_t *v = json_array_get(vals, l);

			if (!json_is_string(v))
				return err_set(err, "%s.domains[%zu].values"
					       "[%zu]: must be a string", path,
					       i, l);
			d->val[i * d->nl + l] = json_string_value(v);
			d->len[i * d->nl + l] = json_string_length(v);
		}
	}
	return 0;
}

static json_t *str_n(const char *s, size_t n)
{
	return json_stringn(s, n); /* whole characters: valid UTF-8 */
}

/* The values of level l of domains [from, to): universal when all are
 * equal, else individual with the longest common prefix and suffix. */
static json_t *level_values(const struct domains *d, size_t l, size_t from,
			    size_t to)
{
	const char *first = d->val[from * d->nl + l];
	size_t flen = d->len[from * d->nl + l], plen = flen, slen = flen;
	size_t minlen = flen, maxlen = flen, i, k;
	json_t *out = json_object(), *ind, *roots;

	for (i = from + 1; i < to; i++) {
		const char *s = d->val[i * d->nl + l];
		size_t n = d->len[i * d->nl + l];

		minlen = n < minlen ? n : minlen;
		maxlen = n > maxlen ? n : maxlen;
		plen = n < plen ? n : plen;
		slen = n < slen ? n : slen;
		for (k = 0; k < plen && s[k] == first[k]; k++)
			;
		plen = k;
		for (k = 0; k < slen && s[n - 1 - k] == first[flen - 1 - k];
		     k++)
			;
		slen = k;
	}
	if (plen == maxlen) {
		json_object_set_new(out, "universal", str_n(first, flen));
		return out;
	}
	while (plen > 0 && is_cont((unsigned char)first[plen]))
		plen--;
	while (slen > 0 && is_cont((unsigned char)first[flen - slen]))
		slen--;
	if (plen + slen > minlen) /* {"ababa", "aba"}: they overlap */
		plen = minlen - slen;
	while (plen > 0 && is_cont((unsigned char)first[plen]))
		plen--;
	ind = json_object();
	if (plen)
		json_object_set_new(ind, "prefix", str_n(first, plen));
	if (slen)
		json_object_set_new(ind, "suffix",
				    str_n(first + flen - slen, slen));
	roots = json_array();
	for (i = from; i < to; i++) {
		size_t n = d->len[i * d->nl + l];

		json_array_append_new(roots, str_n(d->val[i * d->nl + l] + plen,
						   n - plen - slen));
	}
	json_object_set_new(ind, "roots", roots);
	json_object_set_new(out, "individual", ind);
	return out;
}

/* One slice for domains [from, to), to > from. */
static json_t *compact_slice(const struct domains *d, size_t from, size_t to)
{
	json_t *s = json_object(), *vpl = json_array(), *pc = json_object();
	bool same = true;
	size_t i;

	json_object_set_new(s, "domainCount",
			    json_integer((json_int_t)(to - from)));
	for (size_t l = 0; l < d->nl; l++)
		json_array_append_new(vpl, level_values(d, l, from, to));
	json_object_set_new(s, "valuesPerLevel", vpl);
	for (i = from + 1; i < to && same; i++)
		same = d->count[i] == d->count[from];
	if (same) {
		json_object_set_new(pc, "universal",
				    json_integer(d->count[from]));
	} else {
		json_t *ind = json_array();

		for (i = from; i < to; i++)
			json_array_append_new(ind, json_integer(d->count[i]));
		json_object_set_new(pc, "individual", ind);
	}
	json_object_set_new(s, "podCounts", pc);
	return s;
}

/* A "-"-terminated hostname prefix and how often it occurs. */
struct prefix_count {
	size_t n;
	char key[]; /* NUL-terminated; the hmap's borrowed key */
};

/* A domain's run key: the first len bytes of its hostname (len 0: none). */
struct run_key {
	const char *s;
	size_t len;
};

static bool key_eq(struct run_key a, struct run_key b)
{
	return a.len == b.len && !memcmp(a.s, b.s, a.len);
}

static size_t chunks(size_t n)
{
	return (n + MAX_SLICE_DOMAINS - 1) / MAX_SLICE_DOMAINS;
}

/*
 * The run key of every domain (keys, d->n entries): the longest hostname
 * prefix ending in '-' that at least two domains have, considering at
 * most depth candidates per hostname, for the largest depth whose runs of
 * equal keys need at most MAX_SLICES slices. Returns false when no depth
 * fits (then all domains form one run).
 */
static bool hostname_keys(const struct domains *d, struct run_key *keys)
{
	struct hmap counts = HMAP_INIT;
	size_t *off = xcalloc(d->n + 1, sizeof(*off)), nc = 0, capc = 0;
	struct prefix_count **cand = NULL, *pc, *old;
	size_t depth, maxdepth = 0, i, pos = 0;
	bool found = false;

	/* 1. Index every candidate prefix and count its occurrences. */
	for (i = 0; i < d->n; i++) {
		const char *h = d->val[i * d->nl + d->nl - 1];
		size_t hl = d->len[i * d->nl + d->nl - 1];

		for (size_t end = 0; end + 1 < hl; end++) {
			if (h[end] != '-')
				continue;
			pc = xmalloc(sizeof(*pc) + end + 2);
			memcpy(pc->key, h, end + 1);
			pc->key[end + 1] = '\0';
			pc->n = 0;
			old = hmap_get(&counts, pc->key);
			if (old) {
				free(pc);
				pc = old;
			} else {
				hmap_put(&counts, pc->key, pc);
			}
			pc->n++;
			XGROW(cand, capc, nc + 1);
			cand[nc++] = pc;
		}
		off[i + 1] = nc;
		if (nc - off[i] > maxdepth)
			maxdepth = nc - off[i];
	}
	/* 2. Longest prefixes first, backing off while too many slices. */
	for (depth = maxdepth; depth >= 1 && !found; depth--) {
		size_t slices = 0, start = 0;

		for (i = 0; i < d->n; i++) {
			size_t m = off[i + 1] - off[i];

			keys[i].s = d->val[i * d->nl + d->nl - 1];
			keys[i].len = 0;
			for (size_t j = (m < depth ? m : depth); j-- > 0;) {
				pc = cand[off[i] + j];
				if (pc->n >= 2) {
					keys[i].len = strlen(pc->key);
					break;
				}
			}
		}
		for (i = 1; i < d->n; i++) {
			if (key_eq(keys[i], keys[start]))
				continue;
			slices += chunks(i - start);
			start = i;
		}
		slices += chunks(d->n - start);
		found = slices <= MAX_SLICES;
	}
	while ((pc = hmap_next(&counts, &pos, NULL)))
		free(pc);
	hmap_release(&counts);
	free(cand);
	free(off);
	return found;
}

static size_t dump_len(const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	size_t n = s ? strlen(s) : 0;

	free(s);
	return n;
}

/* The v1beta2 slices for d (a new array). */
static json_t *encode_slices(const struct domains *d)
{
	struct run_key *keys = xcalloc(d->n + 1, sizeof(*keys));
	bool runs = d->n > 1 && d->by_hostname && hostname_keys(d, keys);
	json_t *slices = json_array(), *single;
	size_t start = 0, i;

	/* 1. Runs of equal keys (one run without keys), chunked. */
	for (i = 1; i <= d->n; i++) {
		if (i < d->n && (!runs || key_eq(keys[i], keys[start])))
			continue;
		for (size_t c = start; c < i; c += MAX_SLICE_DOMAINS) {
			size_t end = i - c > MAX_SLICE_DOMAINS ?
					     c + MAX_SLICE_DOMAINS : i;

			json_array_append_new(slices, compact_slice(d, c, end));
		}
		start = i;
	}
	free(keys);
	/* 2. Several slices: one slice instead when its JSON is shorter. */
	if (json_array_size(slices) <= 1 || d->n > MAX_SLICE_DOMAINS)
		return slices;
	single = json_array();
	json_array_append_new(single, compact_slice(d, 0, d->n));
	if (dump_len(single) < dump_len(slices)) {
		json_decref(slices);
		return single;
	}
	json_decref(single);
	return slices;
}

/* ------------------------------------------------------------------ */
/* Workload: topology assignments, v1beta2 slices -> v1beta1 domains */

/* The value of level values lv at index i of its slice (new), or NULL +
 * err. path names lv. */
static json_t *value_at(const json_t *lv, size_t i, const char *path,
			struct err *err)
{
	const json_t *u = json_object_get(lv, "universal");
	const json_t *ind = json_object_get(lv, "individual");
	const json_t *root, *p, *s;
	size_t pl, rl, sl;
	char *v;
	json_t *out;

	if (!json_is_object(lv))
		return err_set(err, "%s: must be an object", path), NULL;
	if (u && !json_is_null(u)) {
		if (!json_is_string(u))
			return err_set(err, "%s.universal: must be a string",
				       path), NULL;
		return json_incref((json_t *)u);
	}
	root = json_array_get(json_object_get(ind, "roots"), i);
	p = json_object_get(ind, "prefix");
	s = json_object_get(ind, "suffix");
	if (!json_is_object(ind))
		return err_set(err, "%s: one of universal and individual "
			       "must be set", path), NULL;
	if (!json_is_string(root))
		return err_set(err, "%s.individual.roots[%zu]: must be a "
			       "string", path, i), NULL;
	if ((p && !json_is_null(p) && !json_is_string(p)) ||
	    (s && !json_is_null(s) && !json_is_string(s)))
		return err_set(err, "%s.individual: prefix and suffix must be "
			       "strings", path), NULL;
	/* By length: a value may hold "\u0000". */
	pl = json_string_length(p);
	rl = json_string_length(root);
	sl = json_string_length(s);
	v = xmalloc(pl + rl + sl + 1);
	if (pl)
		memcpy(v, json_string_value(p), pl);
	memcpy(v + pl, json_string_value(root), rl);
	if (sl)
		memcpy(v + pl + rl, json_string_value(s), sl);
	out = json_stringn(v, pl + rl + sl);
	free(v);
	return out;
}

/* The v1beta1 domains of ta (a new array), or NULL + err. */
static json_t *expand_slices(const json_t *ta, const char *path,
			     struct err *err)
{
	const json_t *levels = json_object_get(ta, "levels");
	const json_t *slices = json_object_get(ta, "slices"), *sl, *lv;
	size_t nl = json_array_size(levels), si, total = 0;
	json_t *doms = json_array();

	if (slices && !json_is_array(slices) && !json_is_null(slices)) {
		err_set(err, "%s.slices: must be an array", path);
		goto fail;
	}
	if (levels && !json_is_array(levels) && !json_is_null(levels)) {
		err_set(err, "%s.levels: must be an array of strings", path);
		goto fail;
	}
	json_array_foreach(levels, si, lv)
		if (!json_is_string(lv)) {
			err_set(err, "%s.levels[%zu]: must be a string", path,
				si);
			goto fail;
		}
	json_array_foreach(slices, si, sl) {
		const json_t *dc = json_object_get(sl, "domainCount");
		const json_t *vpl = json_object_get(sl, "valuesPerLevel");
		const json_t *pc = json_object_get(sl, "podCounts");
		const json_t *uc = json_object_get(pc, "universal");
		json_int_t n = dc ? json_integer_value(dc) : 0;

		if (!json_is_object(sl) || (dc && !is_int32(dc)) || n < 0) {
			err_set(err, "%s.slices[%zu].domainCount: must be a "
				"32-bit integer >= 0", path, si);
			goto fail;
		}
		total += (size_t)n;
		if (total > MAX_EXPANDED_DOMAINS) {
			err_set(err, "%s.slices: more than %d domains", path,
				MAX_EXPANDED_DOMAINS);
			goto fail;
		}
		if (n > 0 && json_array_size(vpl) < nl) {
			err_set(err, "%s.slices[%zu].valuesPerLevel: %zu "
				"entries for %zu levels", path, si,
				json_array_size(vpl), nl);
			goto fail;
		}
		for (size_t i = 0; i < (size_t)n; i++) {
			json_t *dom = json_object(), *vals = json_array();
			const json_t *ic = json_object_get(pc, "individual");
			const json_t *cnt = uc && !json_is_null(uc) ?
						    uc : json_array_get(ic, i);

			json_object_set_new(dom, "values", vals);
			json_array_append_new(doms, dom);
			for (size_t l = 0; l < nl; l++) {
				char *lp = xasprintf("%s.slices[%zu]."
						     "valuesPerLevel[%zu]",
						     path, si, l);
				json_t *v = value_at(json_array_get(vpl, l), i,
						     lp, err);

				free(lp);
				if (!v)
					goto fail;
				json_array_append_new(vals, v);
			}
			if (!is_int32(cnt)) {
				err_set(err, "%s.slices[%zu].podCounts: no "
					"32-bit count for domain %zu", path,
					si, i);
				goto fail;
			}
			json_object_set(dom, "count", (json_t *)cnt);
		}
	}
	return doms;
fail:
	json_decref(doms);
	return NULL;
}

/* Rewrites every admission's topologyAssignment into the target form. */
static int conv_topology(struct conv *cv)
{
	json_t *psas = json_object_get(json_object_get(json_object_get(
		cv->o, "status"), "admission"), "podSetAssignments"), *psa;
	size_t i;

	json_array_foreach(psas, i, psa) {
		json_t *ta = json_object_get(psa, "topologyAssignment"), *nw;
		char *path;
		int rc = 0;

		if (!ta || json_is_null(ta))
			continue;
		path = xasprintf("status.admission.podSetAssignments[%zu]."
				 "topologyAssignment", i);
		if (!json_is_object(ta)) {
			rc = err_set(cv->err, "%s: must be an object", path);
		} else if (cv->v2) {
			struct domains d;

			rc = domains_read(ta, path, &d, cv->err);
			nw = rc ? NULL : encode_slices(&d);
			domains_release(&d);
			json_object_del(ta, "domains");
			json_object_del(ta, "slices");
			/* An empty list is left out, as Go's omitempty does. */
			if (nw && json_array_size(nw) > 0)
				json_object_set_new(ta, "slices", nw);
			else
				json_decref(nw);
		} else {
			nw = expand_slices(ta, path, cv->err);
			rc = nw ? 0 : -1;
			json_object_del(ta, "slices");
			json_object_del(ta, "domains");
			if (nw)
				json_object_set_new(ta, "domains", nw);
		}
		free(path);
		if (rc)
			return -1;
	}
	return 0;
}

static int conv_workload(struct conv *cv)
{
	json_t *spec = json_object_get(cv->o, "spec");
	json_t *st = json_object_get(cv->o, "status");

	if (json_is_object(spec)) {
		if (cv->v2)
			prio_to_v2(spec);
		else
			prio_to_v1(spec);
	}
	if (json_is_object(st))
		rename_member(st,
			      cv->v2 ? "accumulatedPastExexcutionTimeSeconds" :
				       "accumulatedPastExecutionTimeSeconds",
			      cv->v2 ? "accumulatedPastExecutionTimeSeconds" :
				       "accumulatedPastExexcutionTimeSeconds");
	return conv_topology(cv);
}

/* ------------------------------------------------------------------ */

int codec_convert(const json_t *obj, const char *to, json_t **out,
		  struct err *err)
{
	struct conv cv = { 0 };
	enum api_version from, target;
	enum kind k = codec_kind_of(obj);
	int rc = 0;

	*out = NULL;
	target = api_version_parse(to);
	if (target == API_UNKNOWN)
		return err_set(err, "conversion: unsupported apiVersion \"%s\"",
			       to ? to : "");
	if (k == KIND_UNKNOWN || k == KIND_JOB)
		return err_set(err, "conversion: not a kueue.x-k8s.io "
			       "v1beta1/v1beta2 object of a known kind");
	from = api_version_parse(
		json_string_value(json_object_get(obj, "apiVersion")));
	cv.o = json_deep_copy(obj);
	if (!cv.o)
		return err_set(err, "conversion: cannot copy the object");
	if (from == target) {
		*out = cv.o;
		return 0;
	}
	cv.v2 = target == API_V1BETA2;
	cv.err = err;
	switch (k) {
	case KIND_CLUSTER_QUEUE: conv_cluster_queue(&cv); break;
	case KIND_LOCAL_QUEUE: conv_local_queue(&cv); break;
	case KIND_WORKLOAD: rc = conv_workload(&cv); break;
	case KIND_RESOURCE_FLAVOR:
	case KIND_COHORT:
	case KIND_WORKLOAD_PRIORITY_CLASS:
	case KIND_JOB:
	case KIND_UNKNOWN:
		break;
	}
	if (rc) {
		json_decref(cv.o);
		return -1;
	}
	drop_fields(&cv, k);
	json_object_set_new(cv.o, "apiVersion",
			    json_string(api_version_name(target)));
	*out = cv.o;
	return 0;
}
