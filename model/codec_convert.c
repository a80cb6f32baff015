/*
 * codec_convert: kueue.x-k8s.io v1beta1 <-> v1beta2 on the JSON tree
 * (kueue-api.md §9), for the conversion webhook and the devserver.
 *
 * The input is never modified: the object is deep-copied and the copy is
 * rewritten in place, so every field cueue does not know passes through.
 * Per kind:
 *   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1 admissionChecks
 *                 -> admissionChecksStrategy entries without onFlavors (and
 *                 back when every entry is a bare {name}); Borrow/Preempt
 *                 <-> MayStopSearch; status.pendingWorkloadsStatus dropped
 *   LocalQueue    status.flavorUsage <-> status.flavorsUsage; deprecated
 *                 status.flavors dropped
 *   Workload      spec.priorityClassName + priorityClassSource <->
 *                 spec.priorityClassRef {group, kind, name};
 *                 status.accumulatedPastExexcutionTimeSeconds (sic) <->
 *                 accumulatedPastExecutionTimeSeconds
 *   ResourceFlavor, Cohort, WorkloadPriorityClass: apiVersion only.
 *
 * LOSSLESS ROUND TRIPS
 * A field with no counterpart in the target version (v1beta2's
 * concurrentAdmissionPolicy, flavorFungibility.preference, preemptionGates,
 * wallTimePolicy; v1beta1's pendingWorkloadsStatus, LocalQueue
 * status.flavors, a priority class name without a source, ...) is moved
 * into the annotation kueue.x-k8s.io/conversion-data as compact JSON
 *   {"apiVersion": <version the fields belong to>,
 *    "fields": {"spec.concurrentAdmissionPolicy": {...}, ...}, ...}
 * and put back, and the annotation removed, when the object is converted
 * back to that version, as Kubernetes' own conversions keep unconvertible
 * data in annotations. Hence v1beta2 -> v1beta1 -> v1beta2 is the
 * identity, and so is v1beta1 -> v1beta2 -> v1beta1, with one exception:
 * an explicit `priorityClassSource: ""` with no class name, the CRD's
 * default, is dropped without a trace (the API server re-applies it).
 * Values that are invalid in their own version (a v1beta2 "Borrow") are
 * carried over unchanged, not repaired. The identity holds for objects
 * that only use their own version's fields: a field the source version
 * does not define (spec.admissionChecks in a v1beta2 object, which the
 * API server would have pruned) may come back inside the annotation. A
 * second round trip is always the identity (test/fuzz/fuzz_convert.c).
 */
#include "model/codec.h"

#include <stdlib.h>
#include <string.h>

#include "model/codec_int.h"

#define CONVERSION_ANNOTATION KUEUE_GROUP "/conversion-data"

struct conv {
	json_t *o;             /* the copy being rewritten */
	enum api_version to;
	json_t *fields;        /* new stash: dotted path -> value */
	bool keep_strategy;    /* v1beta1 used admissionChecksStrategy */
	const json_t *restore; /* stash written for `to`, or NULL */
};

/* ------------------------------------------------------------------ */
/* Dotted paths ("spec.flavorFungibility.preference") into the tree */

/* The object holding the last segment of path, creating intermediate
 * objects when create is set; *leaf points at that segment. Borrowed. */
static json_t *parent_of(json_t *root, const char *path, bool create,
			 char *buf, size_t n, const char **leaf)
{
	json_t *cur = root;
	char *seg, *dot;

	if (strlen(path) >= n)
		return NULL;
	strcpy(buf, path);
	seg = buf;
	dot = strchr(seg, '.');
	while (dot) {
		json_t *next;

		*dot = '\0';
		next = json_object_get(cur, seg);
		if (!json_is_object(next)) {
			if (!create || next)
				return NULL;
			next = json_object();
			json_object_set_new(cur, seg, next);
		}
		cur = next;
		seg = dot + 1;
		dot = strchr(seg, '.');
	}
	*leaf = seg;
	return cur;
}

/* Removes the value at path and returns it (new reference), or NULL. */
static json_t *path_take(json_t *root, const char *path)
{
	char buf[256];
	const char *leaf;
	json_t *p = parent_of(root, path, false, buf, sizeof(buf), &leaf), *v;

	v = p ? json_object_get(p, leaf) : NULL;
	if (!v)
		return NULL;
	json_incref(v);
	json_object_del(p, leaf);
	return v;
}

/* Sets the value at path, creating objects on the way; steals v. */
static void path_set(json_t *root, const char *path, json_t *v)
{
	char buf[256];
	const char *leaf;
	json_t *p = parent_of(root, path, true, buf, sizeof(buf), &leaf);

	if (p)
		json_object_set_new(p, leaf, v);
	else
		json_decref(v);
}

/* Moves parent[from] to parent[to] (a renamed field). */
static void rename_member(json_t *parent, const char *from, const char *to)
{
	json_t *v = json_object_get(parent, from);

	if (!v)
		return;
	json_object_set(parent, to, v);
	json_object_del(parent, from);
}

/* Moves the value at path into the new stash. */
static void stash_take(struct conv *cv, const char *path)
{
	json_t *v = path_take(cv->o, path);

	if (v)
		json_object_set_new(cv->fields, path, v);
}

/* Records a copy of the value at path in the new stash (the field stays,
 * converted, and the original spelling is put back on the way home). */
static void stash_copy(struct conv *cv, const char *path, const json_t *v)
{
	json_object_set_new(cv->fields, path, json_deep_copy(v));
}

static bool restore_flag(const struct conv *cv, const char *name)
{
	return json_is_true(json_object_get(cv->restore, name));
}

static bool is_str(const json_t *j, const char *s)
{
	return json_is_string(j) && !strcmp(json_string_value(j), s);
}

/* ------------------------------------------------------------------ */
/* The annotation */

/*
 * Removes the conversion annotation from o. Returns its parsed stash (new
 * reference) when it was written for version `to`, else NULL. Containers
 * that the stash itself created are removed again.
 */
static json_t *stash_unpack(json_t *o, enum api_version to)
{
	json_t *md = json_object_get(o, "metadata");
	json_t *ann = json_object_get(md, "annotations"), *st;
	const char *text = json_string_value(
		json_object_get(ann, CONVERSION_ANNOTATION));
	const json_t *created;

	if (!json_object_get(ann, CONVERSION_ANNOTATION))
		return NULL;
	st = text ? codec_load(text) : NULL;
	json_object_del(ann, CONVERSION_ANNOTATION);
	if (!json_is_object(st) ||
	    !is_str(json_object_get(st, "apiVersion"), api_version_name(to))) {
		json_decref(st);
		return NULL;
	}
	created = json_object_get(st, "created");
	if ((is_str(created, "annotations") || is_str(created, "metadata")) &&
	    json_object_size(ann) == 0)
		json_object_del(md, "annotations");
	if (is_str(created, "metadata") && json_object_size(md) == 0)
		json_object_del(o, "metadata");
	return st;
}

/* Writes the new stash (fields of version `from`) when there is any. */
static void stash_pack(struct conv *cv, enum api_version from)
{
	json_t *st, *md, *ann;
	const char *created = NULL;
	char *text;

	if (json_object_size(cv->fields) == 0 && !cv->keep_strategy)
		return;
	md = json_object_get(cv->o, "metadata");
	if (!json_is_object(md)) {
		md = json_object();
		json_object_set_new(cv->o, "metadata", md);
		created = "metadata";
	}
	ann = json_object_get(md, "annotations");
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(md, "annotations", ann);
		if (!created)
			created = "annotations";
	}
	st = json_object();
	json_object_set_new(st, "apiVersion",
			    json_string(api_version_name(from)));
	json_object_set(st, "fields", cv->fields);
	if (cv->keep_strategy)
		json_object_set_new(st, "keepAdmissionChecksStrategy",
				    json_true());
	if (created)
		json_object_set_new(st, "created", json_string(created));
	text = codec_dump(st);
	if (text)
		json_object_set_new(ann, CONVERSION_ANNOTATION,
				    json_string(text));
	free(text);
	json_decref(st);
}

/* Puts back every field the incoming stash kept for this version. */
static void stash_restore(struct conv *cv)
{
	const json_t *fields = json_object_get(cv->restore, "fields");
	const char *path;
	json_t *v;

	json_object_foreach((json_t *)fields, path, v)
		path_set(cv->o, path, json_deep_copy(v));
}

/* ------------------------------------------------------------------ */
/* ClusterQueue */

/* whenCanBorrow / whenCanPreempt: v1beta1 spells MayStopSearch as
 * mine ("Borrow" / "Preempt"). */
static void conv_fungibility(struct conv *cv, json_t *ff, const char *key,
			     const char *mine)
{
	json_t *v = json_object_get(ff, key);
	char path[64];

	if (cv->to == API_V1BETA2) {
		if (is_str(v, "MayStopSearch")) {
			/* HEAD's v1beta1 also takes this spelling; keep it. */
			snprintf(path, sizeof(path),
				 "spec.flavorFungibility.%s", key);
			stash_copy(cv, path, v);
		} else if (is_str(v, mine)) {
			json_object_set_new(ff, key,
					    json_string("MayStopSearch"));
		}
	} else if (is_str(v, "MayStopSearch")) {
		json_object_set_new(ff, key, json_string(mine));
	}
}

/* A v1beta2 strategy that v1beta1's plain list expresses exactly:
 * {admissionChecks: [{name}, ...]} with at least one entry. */
static bool is_plain_strategy(const json_t *s)
{
	const json_t *a = json_object_get(s, "admissionChecks"), *e;
	size_t i;

	if (json_object_size(s) != 1 || !json_is_array(a) ||
	    json_array_size(a) == 0)
		return false;
	json_array_foreach(a, i, e)
		if (json_object_size(e) != 1 ||
		    !json_is_string(json_object_get(e, "name")))
			return false;
	return true;
}

static bool is_name_list(const json_t *a)
{
	const json_t *e;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return false;
	json_array_foreach(a, i, e)
		if (!json_is_string(e))
			return false;
	return true;
}

static void conv_cq_checks(struct conv *cv, json_t *spec)
{
	json_t *ac = json_object_get(spec, "admissionChecks");
	json_t *strat = json_object_get(spec, "admissionChecksStrategy");
	json_t *list, *e;
	size_t i;

	if (cv->to == API_V1BETA2) {
		cv->keep_strategy = is_plain_strategy(strat);
		if (!ac)
			return;
		if (strat || !is_name_list(ac)) {
			stash_take(cv, "spec.admissionChecks");
			return;
		}
		list = json_array();
		json_array_foreach(ac, i, e) {
			json_t *rule = json_object();

			json_object_set(rule, "name", e);
			json_array_append_new(list, rule);
		}
		strat = json_object();
		json_object_set_new(strat, "admissionChecks", list);
		json_object_set_new(spec, "admissionChecksStrategy", strat);
		json_object_del(spec, "admissionChecks");
		return;
	}
	if (!is_plain_strategy(strat) ||
	    restore_flag(cv, "keepAdmissionChecksStrategy"))
		return;
	list = json_array();
	json_array_foreach(json_object_get(strat, "admissionChecks"), i, e)
		json_array_append(list, json_object_get(e, "name"));
	json_object_set_new(spec, "admissionChecks", list);
	json_object_del(spec, "admissionChecksStrategy");
}

static void conv_cluster_queue(struct conv *cv)
{
	json_t *spec = json_object_get(cv->o, "spec");
	json_t *ff = json_object_get(spec, "flavorFungibility");
	bool v2 = cv->to == API_V1BETA2;

	if (json_is_object(spec)) {
		rename_member(spec, v2 ? "cohort" : "cohortName",
			      v2 ? "cohortName" : "cohort");
		conv_cq_checks(cv, spec);
	}
	if (json_is_object(ff)) {
		conv_fungibility(cv, ff, "whenCanBorrow", "Borrow");
		conv_fungibility(cv, ff, "whenCanPreempt", "Preempt");
	}
	if (v2) {
		stash_take(cv, "status.pendingWorkloadsStatus");
	} else {
		stash_take(cv, "spec.flavorFungibility.preference");
		stash_take(cv, "spec.concurrentAdmissionPolicy");
	}
}

/* ------------------------------------------------------------------ */
/* LocalQueue */

static void conv_local_queue(struct conv *cv)
{
	json_t *st = json_object_get(cv->o, "status");

	if (cv->to == API_V1BETA2) {
		if (json_is_object(st))
			rename_member(st, "flavorUsage", "flavorsUsage");
		stash_take(cv, "status.flavors");
	} else {
		if (json_is_object(st))
			rename_member(st, "flavorsUsage", "flavorUsage");
		stash_take(cv, "spec.wallTimePolicy");
		stash_take(cv, "status.wallTimeFlavorUsage");
	}
}

/* ------------------------------------------------------------------ */
/* Workload */

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

static void conv_priority_v1_to_v2(struct conv *cv, json_t *spec)
{
	json_t *name = json_object_get(spec, "priorityClassName");
	json_t *src = json_object_get(spec, "priorityClassSource");

	for (size_t i = 0; i < NPRIO_REFS; i++) {
		json_t *ref;

		if (!is_str(src, prio_refs[i].source) ||
		    !json_is_string(name) || !*json_string_value(name))
			continue;
		ref = json_object();
		json_object_set_new(ref, "group",
				    json_string(prio_refs[i].group));
		json_object_set_new(ref, "kind",
				    json_string(prio_refs[i].kind));
		json_object_set(ref, "name", name);
		json_object_set_new(spec, "priorityClassRef", ref);
		json_object_del(spec, "priorityClassName");
		json_object_del(spec, "priorityClassSource");
		return;
	}
	if (!name && is_str(src, "")) {
		json_object_del(spec, "priorityClassSource"); /* CRD default */
		return;
	}
	stash_take(cv, "spec.priorityClassName");
	stash_take(cv, "spec.priorityClassSource");
}

static void conv_priority_v2_to_v1(struct conv *cv, json_t *spec)
{
	json_t *ref = json_object_get(spec, "priorityClassRef");
	json_t *name = json_object_get(ref, "name");

	if (!ref)
		return;
	for (size_t i = 0; i < NPRIO_REFS; i++) {
		if (json_object_size(ref) != 3 || !json_is_string(name) ||
		    !*json_string_value(name) ||
		    !is_str(json_object_get(ref, "group"),
			    prio_refs[i].group) ||
		    !is_str(json_object_get(ref, "kind"), prio_refs[i].kind))
			continue;
		json_object_set(spec, "priorityClassName", name);
		json_object_set_new(spec, "priorityClassSource",
				    json_string(prio_refs[i].source));
		json_object_del(spec, "priorityClassRef");
		return;
	}
	stash_take(cv, "spec.priorityClassRef");
}

static void conv_workload(struct conv *cv)
{
	json_t *spec = json_object_get(cv->o, "spec");
	json_t *st = json_object_get(cv->o, "status");
	bool v2 = cv->to == API_V1BETA2;

	if (json_is_object(spec)) {
		if (v2)
			conv_priority_v1_to_v2(cv, spec);
		else
			conv_priority_v2_to_v1(cv, spec);
	}
	if (json_is_object(st))
		rename_member(st,
			      v2 ? "accumulatedPastExexcutionTimeSeconds" :
				   "accumulatedPastExecutionTimeSeconds",
			      v2 ? "accumulatedPastExecutionTimeSeconds" :
				   "accumulatedPastExexcutionTimeSeconds");
	if (!v2) {
		stash_take(cv, "spec.preemptionGates");
		stash_take(cv, "status.preemptionGates");
	}
}

/* ------------------------------------------------------------------ */

int codec_convert(const json_t *obj, const char *to, json_t **out,
		  struct err *err)
{
	struct conv cv = { 0 };
	enum api_version from;
	enum kind k = codec_kind_of(obj);
	json_t *restore;

	*out = NULL;
	cv.to = api_version_parse(to);
	if (cv.to == API_UNKNOWN)
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
	if (from == cv.to) {
		*out = cv.o;
		return 0;
	}
	/* 1. Take the stash a previous conversion left for this version. */
	restore = stash_unpack(cv.o, cv.to);
	cv.restore = restore;
	cv.fields = json_object();
	/* 2. Rename and reshape what both versions carry. */
	switch (k) {
	case KIND_CLUSTER_QUEUE: conv_cluster_queue(&cv); break;
	case KIND_LOCAL_QUEUE: conv_local_queue(&cv); break;
	case KIND_WORKLOAD: conv_workload(&cv); break;
	case KIND_RESOURCE_FLAVOR:
	case KIND_COHORT:
	case KIND_WORKLOAD_PRIORITY_CLASS:
	case KIND_JOB:
	case KIND_UNKNOWN:
		break;
	}
	/* 3. Put back the target version's own fields, 4. stash the source
	 * version's leftovers, 5. relabel. */
	stash_restore(&cv);
	stash_pack(&cv, from);
	json_object_set_new(cv.o, "apiVersion",
			    json_string(api_version_name(cv.to)));
	json_decref(cv.fields);
	json_decref(restore);
	*out = cv.o;
	return 0;
}
