/*
 * manager_dra: dynamic resource allocation, counted as Kueue counts it
 * (its pkg/dra, KueueDRAIntegration on, as by default since v0.18).
 *
 * A pod that asks for devices through spec.resourceClaims gets one claim
 * per pod from each ResourceClaimTemplate it names. Kueue charges quota
 * for them through the Configuration's resources.deviceClassMappings:
 * each device request of a template (exactly, ExactCount, count devices
 * of deviceClassName) adds count of the mapping's resource name to every
 * pod's requests, after the resource transformations. Until a workload's
 * devices can be counted it is not queued, and its QuotaReserved=False
 * condition says why, with Kueue's reason Misconfigured and field error:
 *  - a claim by name (resourceClaimName), which Kueue does not support:
 *    "KueueDRAIntegration feature does not support use of resource
 *    claims";
 *  - a template that does not exist (yet): an internal error naming it;
 *    the workload is looked at again when the template appears;
 *  - a request of a class no mapping names: "DeviceClass X is not mapped
 *    in DRA configuration for podset P"; with no mappings configured at
 *    all, every device class is unmapped, so a Job with claims waits
 *    rather than being admitted on its cpu and memory alone;
 *  - what Kueue refuses in a template: firstAvailable, allocationMode All,
 *    a request without exactly.
 * Kueue also checks the requests' CEL selectors against the devices the
 * cluster publishes (ResourceSlices) and counts partitionable devices'
 * counters; cueue does neither (no selector is evaluated, a request counts
 * as its count of whole devices).
 *
 * ResourceClaimTemplates come from a watch of their own (not one of the
 * informers the manager waits for: a cluster without resource.k8s.io/v1
 * lists nothing, and its workloads without claims are not held up), kept
 * as their parsed device requests.
 *
 * Threads: the loop thread, as the rest of the manager.
 */
#include "controller/manager_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "config/config.h"
#include "controller/kube_watch.h"
#include "controller/log.h"

struct dra_req {
	char *cls;     /* owned; deviceClassName */
	int64_t count; /* devices */
};

/* One ResourceClaimTemplate: its requests, or the error Kueue gives. */
struct rct {
	char *key;          /* owned; "ns/name" */
	struct dra_req *v;  /* owned */
	size_t n, cap;
	char *err_field;    /* owned or NULL: "devices.requests[0]..." */
	char *err_text;     /* owned: "Invalid value: ...: " before detail */
	char *err_detail;   /* owned */
	uint64_t seen;
};

static void rct_free(struct rct *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].cls);
	free(t->v);
	free(t->key);
	free(t->err_field);
	free(t->err_text);
	free(t->err_detail);
	free(t);
}

static void rct_error(struct rct *t, const char *field, const char *value,
		      const char *detail)
{
	t->err_field = xstrdup(field);
	t->err_text = xasprintf("Invalid value: %s", value);
	t->err_detail = xstrdup(detail);
}

/* spec.spec.devices.requests as Kueue's countDevicesPerClass reads them. */
static void rct_parse(struct rct *t, const json_t *obj)
{
	static const char *const path[] = { "spec", "spec", "devices",
					    "requests", NULL };
	const json_t *reqs = jx_dig_peek(obj, path);
	const json_t *r;
	size_t i;

	json_array_foreach(reqs, i, r) {
		const json_t *ex = json_object_get(r, "exactly");
		const char *mode, *cls;
		char field[96];
		int64_t count = 1;

		if (json_object_get(r, "firstAvailable")) {
			snprintf(field, sizeof(field), "devices.requests[%zu]",
				 i);
			rct_error(t, field, "\"null\"", "FirstAvailable device "
				  "selection is not supported");
			return;
		}
		if (!json_is_object(ex)) {
			snprintf(field, sizeof(field), "devices.requests[%zu]",
				 i);
			rct_error(t, field, "\"null\"", "Exactly must be set if "
				  "FirstAvailable is nil");
			return;
		}
		if (json_is_true(json_object_get(ex, "adminAccess")))
			continue; /* no quota */
		mode = jx_str(ex, "allocationMode");
		snprintf(field, sizeof(field),
			 "devices.requests[%zu].exactly.allocationMode", i);
		if (mode && !strcmp(mode, "All")) {
			rct_error(t, field, "\"All\"",
				  "AllocationMode 'All' is not supported");
			return;
		}
		if (mode && *mode && strcmp(mode, "ExactCount")) {
			char *v = xasprintf("\"%s\"", mode);
			char *d = xasprintf("unsupported allocation mode: %s",
					    mode);

			rct_error(t, field, v, d);
			free(v);
			free(d);
			return;
		}
		if (json_is_integer(json_object_get(ex, "count")))
			count = json_integer_value(json_object_get(ex,
								   "count"));
		cls = jx_str(ex, "deviceClassName");
		if (!cls || !*cls || count <= 0)
			continue;
		XGROW(t->v, t->cap, t->n + 1);
		t->v[t->n].cls = xstrdup(cls);
		t->v[t->n].count = count;
		t->n++;
	}
}

/* ---- the watch ---- */

static char *rct_key(const json_t *obj)
{
	const char *ns = jx_namespace(obj), *name = jx_name(obj);

	return ns && name ? xasprintf("%s/%s", ns, name) : NULL;
}

/* Pending workloads of ns naming template name are looked at again. */
static void rct_changed(struct manager *m, const char *key)
{
	const char *slash = strchr(key, '/');
	struct wl_entry *e;
	size_t pos = 0;

	if (!slash || !m->fed)
		return;
	while ((e = hmap_next(&m->wls, &pos, NULL))) {
		const struct workload *w = e->w;
		bool uses = false;

		if (!w || !w->meta.namespace ||
		    strncmp(w->meta.namespace, key, (size_t)(slash - key)) ||
		    w->meta.namespace[slash - key])
			continue;
		for (size_t i = 0; i < w->npod_sets && !uses; i++)
			for (size_t j = 0; j < w->pod_sets[i].tmpl.nclaims; j++)
				uses |= text_same(w->pod_sets[i]
						  .tmpl.claims[j].template_name,
						  slash + 1);
		if (uses)
			manager_wl_resolve(m, e, true);
	}
	manager_wl_pump(m);
}

/* Same requests, or the same error: nothing to look at again (a
 * resync's list brings every template back unchanged). */
static bool rct_same(const struct rct *a, const struct rct *b)
{
	if (a->n != b->n || !text_same(a->err_field, b->err_field) ||
	    !text_same(a->err_text, b->err_text) ||
	    !text_same(a->err_detail, b->err_detail))
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].count != b->v[i].count ||
		    strcmp(a->v[i].cls, b->v[i].cls))
			return false;
	return true;
}

static void rct_put(struct manager *m, const json_t *obj)
{
	char *key = rct_key(obj);
	struct rct *t, *old;
	bool same;

	if (!key)
		return;
	t = xcalloc(1, sizeof(*t));
	t->key = key;
	t->seen = m->dra_gen;
	rct_parse(t, obj);
	old = hmap_get(&m->rcts, key);
	same = old && rct_same(old, t);
	if (old) {
		hmap_del(&m->rcts, key);
		rct_free(old);
	}
	hmap_put(&m->rcts, t->key, t);
	if (!same)
		rct_changed(m, key);
}

static void rct_drop(struct manager *m, const char *key)
{
	struct rct *t = hmap_get(&m->rcts, key);
	char *k;

	if (!t)
		return;
	k = xstrdup(key);
	hmap_del(&m->rcts, key);
	rct_free(t);
	rct_changed(m, k);
	free(k);
}

static void on_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct manager *m = ud;
	char *key;

	if (type == KUBE_DELETED) {
		key = rct_key(obj);
		if (key)
			rct_drop(m, key);
		free(key);
	} else {
		rct_put(m, obj);
	}
	json_decref(obj);
}

/* A complete list: what it does not hold is gone. */
static void on_replace(void *ud, json_t *items, bool initial)
{
	struct manager *m = ud;
	struct rct *t;
	const json_t *it;
	char **gone = NULL;
	size_t i, pos = 0, ngone = 0, cap = 0;

	(void)initial;
	m->dra_gen++;
	json_array_foreach(items, i, it)
		rct_put(m, it);
	while ((t = hmap_next(&m->rcts, &pos, NULL)))
		if (t->seen != m->dra_gen) {
			XGROW(gone, cap, ngone + 1);
			gone[ngone++] = xstrdup(t->key);
		}
	for (i = 0; i < ngone; i++) {
		rct_drop(m, gone[i]);
		free(gone[i]);
	}
	free(gone);
	json_decref(items);
}

static void on_error(void *ud, const char *message)
{
	(void)ud;
	log_msg(LOG_WARN, "informer", NULL, "resourceclaimtemplates", "%s",
		message);
}

static const struct kube_watch_ops rct_ops = {
	.event = on_event,
	.replace = on_replace,
	.error = on_error,
};

void manager_dra_start(struct manager *m)
{
	struct kube_ref ref = { .group = "resource.k8s.io", .version = "v1",
				.resource = "resourceclaimtemplates" };
	char *path = kube_path(&ref);
	struct kube_watch_opts wo = { .path = path,
				      .page_size = m->o.page_size,
				      .ops = &rct_ops, .ud = m };

	hmap_init(&m->rcts);
	hmap_init(&m->dra_map);
	if (m->o.dra_mappings)
		for (size_t i = 0; i < m->o.dra_mappings->n; i++) {
			const struct config_device_class_mapping *d =
				&m->o.dra_mappings->v[i];

			for (size_t k = 0; k < d->device_classes.n; k++) {
				char *cls = xstrdup(d->device_classes.v[k]);

				if (hmap_get(&m->dra_map, cls)) {
					free(cls);
					continue;
				}
				hmap_put(&m->dra_map, cls, xstrdup(d->name));
			}
		}
	m->rctw = kube_watch_new(m->k, &wo);
	free(path);
}

void manager_dra_free(struct manager *m)
{
	struct rct *t;
	char *v;
	const char *k;
	size_t pos = 0;

	kube_watch_free(m->rctw);
	m->rctw = NULL;
	while ((t = hmap_next(&m->rcts, &pos, NULL)))
		rct_free(t);
	hmap_release(&m->rcts);
	pos = 0;
	while ((v = hmap_next(&m->dra_map, &pos, &k))) {
		free(v);
		free((char *)k);
	}
	hmap_release(&m->dra_map);
}

/* ---- a workload's devices ---- */

/* Kueue's field error for claim j of pod set i; a new string. */
static char *claim_error(size_t i, size_t j, const char *field,
			 const char *text)
{
	return xasprintf("spec.podSets[%zu].template.spec.resourceClaims[%zu]"
			 "%s%s: %s", i, j, field && *field ? "." : "",
			 field ? field : "", text);
}

/* Counts pod set i's devices into dra; NULL or Kueue's error. */
static char *count_podset(struct manager *m, const struct workload *w,
			  size_t i, struct reslist *dra)
{
	const struct pod_set *ps = &w->pod_sets[i];
	struct err err;

	for (size_t j = 0; j < ps->tmpl.nclaims; j++) {
		const struct pod_claim *c = &ps->tmpl.claims[j];
		char *key, *txt, *msg;
		const struct rct *t;

		if (c->claim_name)
			return xstrdup("KueueDRAIntegration feature does not "
				       "support use of resource claims");
		if (!c->template_name)
			continue;
		key = xasprintf("%s/%s", w->meta.namespace ? w->meta.namespace
							   : "",
				c->template_name);
		t = hmap_get(&m->rcts, key);
		free(key);
		if (!t) {
			txt = xasprintf("Internal error: failed to get claim spec "
					"for ResourceClaimTemplate %s in podset "
					"%s: resourceclaimtemplates.resource.k8s.io "
					"\"%s\" not found", c->template_name,
					ps->name ? ps->name : "",
					c->template_name);
			msg = claim_error(i, j, NULL, txt);
			free(txt);
			return msg;
		}
		if (t->err_field) {
			txt = xasprintf("%s: ResourceClaimTemplate %s: %s",
					t->err_text, c->template_name,
					t->err_detail);
			msg = claim_error(i, j, t->err_field, txt);
			free(txt);
			return msg;
		}
		for (size_t k = 0; k < t->n; k++) {
			const char *res = hmap_get(&m->dra_map, t->v[k].cls);

			if (!res) {
				txt = xasprintf("Not found: \"DeviceClass %s is "
						"not mapped in DRA configuration "
						"for podset %s\"", t->v[k].cls,
						ps->name ? ps->name : "");
				msg = claim_error(i, j,
						  "resourceClaimTemplateName",
						  txt);
				free(txt);
				return msg;
			}
			if (t->v[k].count > INT64_MAX / 1000 ||
			    reslist_add(dra, res, t->v[k].count * 1000,
					&err) < 0)
				reslist_set(dra, res, INT64_MAX);
		}
	}
	return NULL;
}

char *manager_dra_fill(struct manager *m, struct workload *w, bool *changed)
{
	bool claims = false;
	char *msg = NULL;

	*changed = false;
	for (size_t i = 0; i < w->npod_sets; i++)
		claims |= w->pod_sets[i].tmpl.nclaims > 0;
	if (!claims)
		return NULL;
	for (size_t i = 0; i < w->npod_sets && !msg; i++) {
		struct reslist dra = RESLIST_INIT;

		msg = count_podset(m, w, i, &dra);
		if (!msg && !reslist_equal(&dra, &w->pod_sets[i].dra)) {
			reslist_copy(&w->pod_sets[i].dra, &dra);
			*changed = true;
		}
		reslist_release(&dra);
	}
	return msg;
}
