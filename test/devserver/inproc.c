/*
 * inproc: the in-process devserver of the controller suites (see
 * inproc.h). Holds the one server of the test process in S; everything
 * else is a thin, asserting wrapper over api_internal_*.
 */
#include "inproc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "controller/kube.h"
#include "controller/kubeconfig.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "devserver/gc.h"
#include "devserver/http.h"
#include "devserver/jobrunner.h"
#include "test/support/support.h"

static struct {
	struct api *api;          /* NULL: not started */
	struct http_server *http;
	struct gc *gc;            /* inp_opts.jobs only */
	struct jobrunner *runner; /* inp_opts.jobs only */
	struct loop *l;           /* inp_loop(); NULL until asked for */
	struct kube *k;           /* inp_kube() on l; NULL until asked for */
} S;

/* ---- the server ---- */

static void preload(const char *rel)
{
	struct err err = { "" };
	char *p = t_src_path(rel);

	ck_assert_msg(api_preload(S.api, p, &err) == 0, "preload %s: %s", rel,
		      err.msg);
	free(p);
}

void inp_start(const struct inp_opts *o)
{
	static const struct inp_opts none;
	struct err err = { "" };
	struct api_opts ao = { .bookmark_ms = 300, .watch_history = 10000 };
	struct http_opts ho = { .addr = "127.0.0.1",
				.max_body = (size_t)3 << 20 };

	if (!o)
		o = &none;
	memset(&S, 0, sizeof(S));
	log_set_level(getenv("CK_MANAGER_LOG") ? LOG_DEBUG : LOG_OFF);
	if (o->jobs) {
		ao.job_runtime_ms = 300;
		ao.propagation_finalizers = true;
	}
	if (o->endpoint) {
		ao.endpoints = o->endpoint;
		ao.nendpoints = 1;
	}
	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
	preload("manifests/crds");
	if (o->manifests) {
		preload("manifests/00-namespace.yaml");
		preload("manifests/webhooks.yaml");
	}
	if (o->jobs) {
		S.gc = gc_start(S.api, &err);
		ck_assert_msg(S.gc != NULL, "gc: %s", err.msg);
		S.runner = jobrunner_start(S.api, &err);
		ck_assert_msg(S.runner != NULL, "runner: %s", err.msg);
	}
	S.http = http_server_start(&ho, api_serve, S.api, &err);
	ck_assert_msg(S.http != NULL, "http: %s", err.msg);
}

void inp_stop(void)
{
	kube_free(S.k);
	S.k = NULL;
	loop_free(S.l);
	S.l = NULL;
	if (!S.api)
		return;
	api_shutdown(S.api);
	http_server_stop(S.http);
	jobrunner_stop(S.runner);
	gc_stop(S.gc);
	api_free(S.api);
	memset(&S, 0, sizeof(S));
}

struct api *inp_api(void)
{
	ck_assert_ptr_nonnull(S.api);
	return S.api;
}

const char *inp_url(void)
{
	ck_assert_ptr_nonnull(S.http);
	return http_server_url(S.http);
}

/* ---- the controller side ---- */

struct loop *inp_loop(void)
{
	struct err err = { "" };

	if (!S.l) {
		S.l = loop_new(NULL, &err);
		ck_assert_msg(S.l != NULL, "loop_new: %s", err.msg);
	}
	return S.l;
}

struct kube *inp_kube(void)
{
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct kube_opts ko = { .qps = -1 };
	struct err err = { "" };

	if (S.k)
		return S.k;
	kc.server = xstrdup(inp_url());
	S.k = kube_new(inp_loop(), &kc, &ko, &err);
	kubeconfig_release(&kc);
	ck_assert_msg(S.k != NULL, "kube_new: %s", err.msg);
	return S.k;
}

void inp_spin(int64_t ms)
{
	int64_t end = t_mono_ms() + ms;
	struct err e = { "" };

	while (t_mono_ms() < end)
		ck_assert_msg(loop_run_once(inp_loop(), 20, &e) == 0, "%s",
			      e.msg);
}

/* ---- objects ---- */

/* Every resource a suite names, with its group and served version. */
static const struct {
	const char *resource; /* plural */
	const char *group;    /* "" for the core group */
	const char *version;
} kinds[] = {
	{ "configmaps", "", "v1" },
	{ "events", "", "v1" },
	{ "namespaces", "", "v1" },
	{ "pods", "", "v1" },
	{ "secrets", "", "v1" },
	{ "services", "", "v1" },
	{ "jobs", "batch", "v1" },
	{ "priorityclasses", "scheduling.k8s.io", "v1" },
	{ "leases", "coordination.k8s.io", "v1" },
	{ "mutatingwebhookconfigurations", "admissionregistration.k8s.io",
	  "v1" },
	{ "validatingwebhookconfigurations", "admissionregistration.k8s.io",
	  "v1" },
	{ "customresourcedefinitions", "apiextensions.k8s.io", "v1" },
	/* the CRDs of manifests/crds */
	{ "admissionchecks", "kueue.x-k8s.io", "v1beta2" },
	{ "clusterqueues", "kueue.x-k8s.io", "v1beta2" },
	{ "cohorts", "kueue.x-k8s.io", "v1beta2" },
	{ "localqueues", "kueue.x-k8s.io", "v1beta2" },
	{ "resourceflavors", "kueue.x-k8s.io", "v1beta2" },
	{ "topologies", "kueue.x-k8s.io", "v1beta2" },
	{ "workloadpriorityclasses", "kueue.x-k8s.io", "v1beta2" },
	{ "workloads", "kueue.x-k8s.io", "v1beta2" },
};

struct api_ref inp_ref(const char *resource, const char *ns, const char *name)
{
	struct api_ref r = { .resource = resource, .ns = ns, .name = name };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!strcmp(kinds[i].resource, resource)) {
			r.group = kinds[i].group;
			r.version = kinds[i].version;
			return r;
		}
	}
	ck_abort_msg("inp_ref: no resource %s in inproc.c's table", resource);
	return r;
}

json_t *inp_create_obj(const char *resource, const char *ns,
		       const char *text)
{
	struct api_ref r = inp_ref(resource, ns, NULL);
	struct api_status st = API_STATUS_INIT;
	json_t *obj = t_json(text), *out = NULL;

	ck_assert_msg(api_internal_create(inp_api(), &r, obj, &out, &st) == 0,
		      "create %s: %s", resource, st.message);
	status_release(&st);
	json_decref(obj);
	return out;
}

void inp_create(const char *resource, const char *ns, const char *text)
{
	json_decref(inp_create_obj(resource, ns, text));
}

void inp_create_take(const char *resource, const char *ns, char *text)
{
	inp_create(resource, ns, text);
	free(text);
}

json_t *inp_get(const char *resource, const char *ns, const char *name)
{
	struct api_ref r = inp_ref(resource, ns, name);
	struct api_status st = API_STATUS_INIT;
	json_t *obj = api_internal_get(inp_api(), &r, &st);

	status_release(&st);
	return obj;
}

json_t *inp_list(const char *resource, const char *ns)
{
	struct api_ref r = inp_ref(resource, ns, NULL);
	struct api_status st = API_STATUS_INIT;
	json_t *items = NULL;
	uint64_t rv = 0;

	ck_assert_msg(api_internal_list(inp_api(), &r, NULL, NULL, &items, &rv,
					&st) == 0, "list %s: %s", resource,
		      st.message);
	status_release(&st);
	return items;
}

size_t inp_count(const char *resource, const char *ns)
{
	json_t *items = inp_list(resource, ns);
	size_t n = json_array_size(items);

	json_decref(items);
	return n;
}

void inp_patch(const char *resource, const char *ns, const char *name,
	       const char *sub, const json_t *p)
{
	struct api_ref r = inp_ref(resource, ns, name);
	struct api_status st = API_STATUS_INIT;

	ck_assert_msg(api_internal_patch(inp_api(), &r, sub, API_PATCH_MERGE, p,
					 NULL, &st) == 0,
		      "patch %s/%s: %s", resource, name, st.message);
	status_release(&st);
}

void inp_del(const char *resource, const char *ns, const char *name,
	     const char *propagation)
{
	struct api_ref r = inp_ref(resource, ns, name);
	struct api_status st = API_STATUS_INIT;

	ck_assert_msg(api_internal_delete(inp_api(), &r, propagation, NULL,
					  &st) == 0,
		      "delete %s/%s: %s", resource, name, st.message);
	status_release(&st);
}

bool inp_exists(const char *resource, const char *ns, const char *name)
{
	json_t *obj = inp_get(resource, ns, name);
	bool ok = obj != NULL;

	json_decref(obj);
	return ok;
}

/* ---- reading objects ---- */

const json_t *inp_jpath(const json_t *j, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *cur = j;

	ck_assert_uint_lt(strlen(path), sizeof(buf));
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && cur;
	     t = strtok_r(NULL, ".", &save)) {
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(t, NULL, 10));
		else
			cur = json_object_get(cur, t);
	}
	return cur;
}

const json_t *inp_cond(const json_t *j, const char *type)
{
	const json_t *conds = inp_jpath(j, "status.conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

const char *inp_val(const char *resource, const char *ns, const char *name,
		    const char *path)
{
	static char buf[1024];
	json_t *obj = inp_get(resource, ns, name);
	const json_t *v = obj ? inp_jpath(obj, path) : NULL;

	if (json_is_string(v))
		snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%lld",
			 (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, sizeof(buf), "%s",
			 json_is_true(v) ? "true" : "false");
	else
		buf[0] = '\0';
	json_decref(obj);
	return buf;
}

/* A string field of a condition, "" when missing. */
static const char *cond_str(const json_t *c, const char *key)
{
	const char *s = json_string_value(json_object_get(c, key));

	return s ? s : "";
}

bool inp_has_cond(const char *resource, const char *ns, const char *name,
		  const char *type, const char *status, const char *reason,
		  const char *msg_prefix)
{
	json_t *obj = inp_get(resource, ns, name);
	const json_t *c = obj ? inp_cond(obj, type) : NULL;
	bool ok = c != NULL;

	if (ok)
		ok = !strcmp(cond_str(c, "status"), status);
	if (ok && reason)
		ok = !strcmp(cond_str(c, "reason"), reason);
	if (ok && msg_prefix)
		ok = !strncmp(cond_str(c, "message"), msg_prefix,
			      strlen(msg_prefix));
	json_decref(obj);
	return ok;
}
