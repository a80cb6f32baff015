/*
 * Suite "managed": metadata.managedFields (devserver/managed.c) end to
 * end over HTTP (dsclient.h), against kube-apiserver's behaviour: Update
 * entries of creates, patches and updates (the manager from
 * ?fieldManager or the User-Agent), server-side apply's ownership
 * (pruning of dropped fields, 409 conflicts with kube's message and
 * causes, force, shared ownership of equal values, list-type map items
 * by key, built-in lists by merge key), the status subresource's own
 * entries, client resets, and watch events carrying the entries. A
 * second TCase checks the FieldsV1 set code (fieldset.c) and jsonw's
 * raw fieldsV1 directly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/fieldset.h"
#include "devserver/jsonw.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

#define CQX CQ "/cq"

/* Kueue's own CRDs (manifests/crds), whose lists are typed as Kueue
 * declares them (podSets and status.conditions are list-type maps). */
static void start_with_crds(void)
{
	static const char *const files[] = {
		"manifests/crds/clusterqueues.yaml",
		"manifests/crds/workloads.yaml",
	};

	ds_start(NULL);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *y = ds_fixture(files[i]);
		struct ds_resp r = ds_call("POST", "/apis/apiextensions.k8s.io/"
					   "v1/customresourcedefinitions",
					   "application/yaml", y, NULL);

		ds_code(r, 201);
		ds_resp_free(&r);
		free(y);
	}
}

/* A Workload with one pod set (name, count). New string. */
static char *wl(const char *name, const char *ps, int count)
{
	return xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			 "\"kind\":\"Workload\",\"metadata\":{\"name\":"
			 "\"%s\",\"labels\":{\"team\":\"ta\"}},\"spec\":"
			 "{\"queueName\":\"q\",\"podSets\":[{\"name\":"
			 "\"%s\",\"count\":%d,\"template\":{\"spec\":"
			 "{\"containers\":[{\"name\":\"c\",\"image\":"
			 "\"i\"}]}}}]}}", name, ps, count);
}

/* The managedFields entry of manager (operation op, subresource sub or
 * NULL for none) in an object; NULL when absent. */
static const json_t *entry(const json_t *obj, const char *manager,
			   const char *op, const char *sub)
{
	const json_t *mf = ds_jget(obj, "metadata.managedFields"), *e;
	size_t i;

	json_array_foreach(mf, i, e) {
		const char *m = ds_sget(e, "manager");
		const char *s = ds_sget(e, "subresource");

		if (m && !strcmp(m, manager) && !strcmp(ds_sget(e, "operation"),
							op) &&
		    (sub ? s && !strcmp(s, sub) : !s))
			return e;
	}
	return NULL;
}

/* The fieldsV1 node under a path of FieldsV1 keys (NULL-terminated). */
static const json_t *fields_at(const json_t *e, ...)
{
	const json_t *n = json_object_get(e, "fieldsV1");
	va_list ap;
	const char *k;

	va_start(ap, e);
	while (n && (k = va_arg(ap, const char *)) != NULL)
		n = json_object_get(n, k);
	va_end(ap);
	return n;
}

static char *cq(const char *spec)
{
	return xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
			 "\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
			 "\"spec\":%s}", spec);
}

/* PATCH apply of a ClusterQueue with spec; returns the response. */
static struct ds_resp apply_cq(const char *query, const char *spec)
{
	char *b = cq(spec), *p = xasprintf(CQX "?%s", query);
	struct ds_resp r = PATCH(p, APPLY, b);

	free(b);
	free(p);
	return r;
}

/* ---- Update entries ---- */

START_TEST(create_records_update)
{
	char *b = wl("x", "main", 1);
	struct ds_resp r = POST(WL "?fieldManager=kubectl-create", b), g;
	const json_t *e, *ps;
	json_t *evs;

	free(b);
	ds_code(r, 201);
	ck_assert_uint_eq(json_array_size(ds_jget(r.json,
		"metadata.managedFields")), 1);
	e = entry(r.json, "kubectl-create", "Update", NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ds_sget(e, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	ck_assert_str_eq(ds_sget(e, "fieldsType"), "FieldsV1");
	ck_assert_uint_eq(strlen(ds_sget(e, "time")), 20);
	ck_assert_str_eq(ds_sget(e, "time"),
			 ds_sget(r.json, "metadata.creationTimestamp"));
	/* what the create set, defaults included; never identity fields,
	 * never status (its own subresource) */
	ps = fields_at(e, "f:spec", "f:podSets", "k:{\"name\":\"main\"}",
		       NULL);
	ck_assert_ptr_nonnull(ps);
	ck_assert_ptr_nonnull(json_object_get(ps, "."));
	ck_assert_ptr_nonnull(json_object_get(ps, "f:count"));
	ck_assert_ptr_nonnull(json_object_get(ps, "f:name"));
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:queueName", NULL));
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:active", NULL));
	ck_assert_ptr_nonnull(fields_at(e, "f:metadata", "f:labels",
					"f:team", NULL));
	ck_assert_ptr_null(fields_at(e, "f:metadata", "f:name", NULL));
	ck_assert_ptr_null(fields_at(e, "f:metadata", ".", NULL));
	ck_assert_ptr_null(fields_at(e, "f:apiVersion", NULL));
	ck_assert_ptr_null(fields_at(e, "f:status", NULL));
	/* the wire form is JSON objects, as kube's */
	ck_assert_ptr_nonnull(strstr(r.body, "\"fieldsV1\":{\"f:metadata\""));
	g = GET(WL "/x");
	ck_assert(json_equal(ds_jget(g.json, "metadata.managedFields"),
			     ds_jget(r.json, "metadata.managedFields")));
	ds_resp_free(&g);
	/* a patch by another manager takes the field it changed */
	g = PATCH(WL "/x?fieldManager=kubectl-patch", MERGE,
		  "{\"spec\":{\"queueName\":\"q2\"}}");
	ds_code(g, 200);
	e = entry(g.json, "kubectl-patch", "Update", NULL);
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:queueName", NULL));
	ck_assert_ptr_null(fields_at(e, "f:spec", "f:podSets", NULL));
	e = entry(g.json, "kubectl-create", "Update", NULL);
	ck_assert_ptr_null(fields_at(e, "f:spec", "f:queueName", NULL));
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:podSets", NULL));
	ds_resp_free(&g);
	/* a no-op write keeps the entries as they are */
	g = PATCH(WL "/x?fieldManager=other", MERGE,
		  "{\"spec\":{\"queueName\":\"q2\"}}");
	ck_assert_ptr_null(entry(g.json, "other", "Update", NULL));
	ds_resp_free(&g);
	/* watch events carry them */
	evs = ds_watch_events(WL "?watch=true&timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_ptr_nonnull(entry(json_object_get(json_array_get(evs, 0),
						    "object"),
				    "kubectl-patch", "Update", NULL));
	json_decref(evs);
	ds_resp_free(&r);
}
END_TEST

START_TEST(manager_from_user_agent)
{
	static const char body[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		"{\"name\":\"ua\"},\"data\":{\"k\":\"v\"}}";
	char *req = xasprintf("POST " CMS " HTTP/1.1\r\nHost: x\r\n"
			      "User-Agent: kubectl/v1.32.4 (linux/amd64) "
			      "kubernetes/abc\r\nContent-Type: "
			      "application/json\r\nContent-Length: %zu\r\n"
			      "Connection: close\r\n\r\n%s",
			      strlen(body), body);
	int fd = ds_connect();
	char *got;
	struct ds_resp r;
	const json_t *e;

	ck_assert(ds_send(fd, req, strlen(req)));
	got = ds_recv_all(fd, 2000);
	ck_assert_ptr_nonnull(strstr(got, "201 Created"));
	free(got);
	free(req);
	close(fd);
	r = GET(CMS "/ua");
	/* prefixFromUserAgent: up to the first '/' */
	e = entry(r.json, "kubectl", "Update", NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ds_sget(e, "apiVersion"), "v1");
	ck_assert_ptr_nonnull(fields_at(e, "f:data", ".", NULL));
	ck_assert_ptr_nonnull(fields_at(e, "f:data", "f:k", NULL));
	ds_resp_free(&r);
}
END_TEST

START_TEST(client_reset_and_replace)
{
	struct ds_resp r = POST(CMS "?fieldManager=a",
				"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
				"\"metadata\":{\"name\":\"c\"},\"data\":"
				"{\"k\":\"v\"}}");

	ds_code(r, 201);
	ds_resp_free(&r);
	/* [] resets them; the same request's changes are owned after */
	r = PATCH(CMS "/c?fieldManager=b", MERGE,
		  "{\"metadata\":{\"managedFields\":[]},\"data\":{\"q\":\"1\"}}");
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(ds_jget(r.json,
		"metadata.managedFields")), 1);
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "b", "Update", NULL),
					"f:data", "f:q", NULL));
	ds_resp_free(&r);
	/* [{}] resets them too; nothing else changed: none left */
	r = PATCH(CMS "/c?fieldManager=b", MERGE,
		  "{\"metadata\":{\"managedFields\":[{}]}}");
	ds_code(r, 200);
	ck_assert_ptr_null(ds_jget(r.json, "metadata.managedFields"));
	ds_resp_free(&r);
	/* entries that decode replace the stored ones */
	r = PATCH(CMS "/c?fieldManager=b", MERGE,
		  "{\"metadata\":{\"managedFields\":[{\"manager\":\"z\","
		  "\"operation\":\"Apply\",\"apiVersion\":\"v1\","
		  "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":"
		  "{\"f:k\":{}}}}]}}");
	ds_code(r, 200);
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "z", "Apply", NULL),
					"f:data", "f:k", NULL));
	ds_resp_free(&r);
	/* ones that do not decode are ignored: the stored ones stay */
	r = PATCH(CMS "/c?fieldManager=b", MERGE,
		  "{\"metadata\":{\"managedFields\":[{\"manager\":\"y\","
		  "\"operation\":\"Nope\",\"apiVersion\":\"v1\","
		  "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}]}}");
	ds_code(r, 200);
	ck_assert_ptr_null(entry(r.json, "y", "Nope", NULL));
	ck_assert_ptr_nonnull(entry(r.json, "z", "Apply", NULL));
	ds_resp_free(&r);
	/* apply may not carry them */
	r = PATCH(CMS "/c?fieldManager=b", APPLY,
		  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		  "{\"name\":\"c\",\"managedFields\":[]}}");
	ds_status(&r, 400, "BadRequest", "metadata.managedFields must be nil");
	ds_resp_free(&r);
}
END_TEST

/* ---- server-side apply ---- */

START_TEST(apply_records_and_prunes)
{
	struct ds_resp r = apply_cq("fieldManager=m1",
				    "{\"cohortName\":\"a\",\"stopPolicy\":"
				    "\"Hold\"}");
	const json_t *e;

	ds_code(r, 201);
	e = entry(r.json, "m1", "Apply", NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(ds_sget(e, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:cohortName", NULL));
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:stopPolicy", NULL));
	/* defaults the server added are nobody's */
	ck_assert_ptr_nonnull(ds_sget(r.json, "spec.queueingStrategy"));
	ck_assert_ptr_null(fields_at(e, "f:spec", "f:queueingStrategy", NULL));
	ck_assert_uint_eq(json_array_size(ds_jget(r.json,
		"metadata.managedFields")), 1);
	ds_resp_free(&r);
	/* applied again without stopPolicy: it goes (and the schema's
	 * default comes back, unowned) */
	r = apply_cq("fieldManager=m1", "{\"cohortName\":\"a\"}");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "spec.stopPolicy"), "None");
	ck_assert_str_eq(ds_sget(r.json, "spec.cohortName"), "a");
	e = entry(r.json, "m1", "Apply", NULL);
	ck_assert_ptr_null(fields_at(e, "f:spec", "f:stopPolicy", NULL));
	ds_resp_free(&r);
	/* unless someone else owns it too */
	r = apply_cq("fieldManager=m1", "{\"cohortName\":\"a\",\"stopPolicy\":"
		     "\"Hold\"}");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = apply_cq("fieldManager=m2", "{\"stopPolicy\":\"Hold\"}");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = apply_cq("fieldManager=m1", "{\"cohortName\":\"a\"}");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "spec.stopPolicy"), "Hold");
	ck_assert_ptr_null(fields_at(entry(r.json, "m1", "Apply", NULL),
				     "f:spec", "f:stopPolicy", NULL));
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m2", "Apply", NULL),
					"f:spec", "f:stopPolicy", NULL));
	ds_resp_free(&r);
}
END_TEST

START_TEST(apply_conflicts_and_force)
{
	struct ds_resp r = apply_cq("fieldManager=m1", "{\"cohortName\":\"a\"}");
	const json_t *cause;

	ds_code(r, 201);
	ds_resp_free(&r);
	/* same value: shared, no conflict */
	r = apply_cq("fieldManager=m2", "{\"cohortName\":\"a\"}");
	ds_code(r, 200);
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m1", "Apply", NULL),
					"f:spec", "f:cohortName", NULL));
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m2", "Apply", NULL),
					"f:spec", "f:cohortName", NULL));
	ds_resp_free(&r);
	/* another value: 409 naming the other manager and the field */
	r = apply_cq("fieldManager=m3&force=false", "{\"cohortName\":\"b\"}");
	ds_status(&r, 409, "Conflict", "Apply failed with 2 conflicts: "
		  "conflicts with \"m1\":\n- .spec.cohortName\n"
		  "conflicts with \"m2\":\n- .spec.cohortName");
	ck_assert_uint_eq(json_array_size(ds_jget(r.json, "details.causes")),
			  2);
	cause = json_array_get(ds_jget(r.json, "details.causes"), 0);
	ck_assert_str_eq(ds_sget(cause, "reason"), "FieldManagerConflict");
	ck_assert_str_eq(ds_sget(cause, "message"), "conflict with \"m1\"");
	ck_assert_str_eq(ds_sget(cause, "field"), ".spec.cohortName");
	ds_resp_free(&r);
	r = GET(CQX);
	ck_assert_str_eq(ds_sget(r.json, "spec.cohortName"), "a");
	ds_resp_free(&r);
	/* force: the value and the ownership move */
	r = apply_cq("fieldManager=m3&force=true", "{\"cohortName\":\"b\"}");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "spec.cohortName"), "b");
	ck_assert_ptr_null(entry(r.json, "m1", "Apply", NULL));
	ck_assert_ptr_null(entry(r.json, "m2", "Apply", NULL));
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m3", "Apply", NULL),
					"f:spec", "f:cohortName", NULL));
	ds_resp_free(&r);
	/* one conflict, with an Update manager: "using <apiVersion>" */
	r = PATCH(CQX "?fieldManager=kubectl-client-side-apply", MERGE,
		  "{\"spec\":{\"stopPolicy\":\"Hold\"}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = apply_cq("fieldManager=m3", "{\"cohortName\":\"b\",\"stopPolicy\":"
		     "\"HoldAndDrain\"}");
	ds_status(&r, 409, "Conflict", "Apply failed with 1 conflict: "
		  "conflict with \"kubectl-client-side-apply\" using "
		  "kueue.x-k8s.io/v1beta2: .spec.stopPolicy");
	cause = json_array_get(ds_jget(r.json, "details.causes"), 0);
	ck_assert_str_eq(ds_sget(cause, "message"),
			 "conflict with \"kubectl-client-side-apply\" using "
			 "kueue.x-k8s.io/v1beta2");
	ds_resp_free(&r);
	/* an update (not apply) takes fields without asking */
	r = PATCH(CQX "?fieldManager=kubectl-edit", MERGE,
		  "{\"spec\":{\"cohortName\":\"c\"}}");
	ds_code(r, 200);
	ck_assert_ptr_null(fields_at(entry(r.json, "m3", "Apply", NULL),
				     "f:spec", "f:cohortName", NULL));
	ds_resp_free(&r);
	/* force=junk is a bad request */
	r = apply_cq("fieldManager=m3&force=junk", "{\"cohortName\":\"b\"}");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
}
END_TEST

START_TEST(apply_map_list_items)
{
	char *b = wl("w", "main", 1);
	struct ds_resp r = PATCH(WL "/w?fieldManager=m1", APPLY, b);
	const json_t *ps;

	ds_code(r, 201);
	ds_resp_free(&r);
	free(b);
	/* another item by key: both kept, each owned by its applier */
	b = wl("w", "extra", 2);
	r = PATCH(WL "/w?fieldManager=m2", APPLY, b);
	free(b);
	ds_code(r, 200);
	ps = ds_jget(r.json, "spec.podSets");
	ck_assert_uint_eq(json_array_size(ps), 2);
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m2", "Apply", NULL),
		"f:spec", "f:podSets", "k:{\"name\":\"extra\"}", "f:count",
		NULL));
	ck_assert_ptr_null(fields_at(entry(r.json, "m2", "Apply", NULL),
		"f:spec", "f:podSets", "k:{\"name\":\"main\"}", NULL));
	ds_resp_free(&r);
	/* the same item with another count: a conflict at its key */
	b = wl("w", "main", 3);
	r = PATCH(WL "/w?fieldManager=m2", APPLY, b);
	free(b);
	ds_status(&r, 409, "Conflict", "Apply failed with 1 conflict: "
		  "conflict with \"m1\": .spec.podSets[name=\"main\"].count");
	ds_resp_free(&r);
	/* m1 drops its item: it goes, m2's stays */
	b = wl("w", "extra", 2);
	r = PATCH(WL "/w?fieldManager=m1", APPLY, b);
	free(b);
	ds_code(r, 200);
	ps = ds_jget(r.json, "spec.podSets");
	ck_assert_uint_eq(json_array_size(ps), 1);
	ck_assert_str_eq(ds_sget(json_array_get(ps, 0), "name"), "extra");
	ds_resp_free(&r);
}
END_TEST

START_TEST(apply_builtin_containers)
{
	static const char job[] =
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
		"{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"image\":\"%s\"}],"
		"\"restartPolicy\":\"Never\"}}}}";
	char *b = xasprintf(job, "busybox");
	struct ds_resp r = PATCH(JOBS "/j?fieldManager=m1", APPLY, b);

	free(b);
	ds_code(r, 201);
	ck_assert_ptr_nonnull(fields_at(entry(r.json, "m1", "Apply", NULL),
		"f:spec", "f:template", "f:spec", "f:containers",
		"k:{\"name\":\"c\"}", "f:image", NULL));
	ds_resp_free(&r);
	b = xasprintf(job, "alpine");
	r = PATCH(JOBS "/j?fieldManager=m2", APPLY, b);
	free(b);
	ds_status(&r, 409, "Conflict", "Apply failed with 1 conflict: "
		  "conflict with \"m1\": "
		  ".spec.template.spec.containers[name=\"c\"].image");
	ds_resp_free(&r);
}
END_TEST

/* ---- the status subresource ---- */

START_TEST(status_subresource_entries)
{
	char *b = wl("x", "main", 1);
	struct ds_resp r = POST(WL "?fieldManager=kubectl-create", b);
	const json_t *e;

	free(b);
	ds_code(r, 201);
	ds_resp_free(&r);
	r = PATCH(WL "/x/status?fieldManager=ctrl", APPLY,
		  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		  "\"Workload\",\"metadata\":{\"name\":\"x\"},\"status\":"
		  "{\"conditions\":[{\"type\":\"Foo\",\"status\":\"True\","
		  "\"reason\":\"R\",\"message\":\"m\",\"lastTransitionTime\":"
		  "\"2026-01-01T00:00:00Z\"}]}}");
	ds_code(r, 200);
	e = entry(r.json, "ctrl", "Apply", "status");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(fields_at(e, "f:status", "f:conditions",
		"k:{\"type\":\"Foo\"}", "f:reason", NULL));
	ck_assert_ptr_null(fields_at(e, "f:spec", NULL));
	ck_assert_ptr_nonnull(entry(r.json, "kubectl-create", "Update",
				    NULL));
	ds_resp_free(&r);
	/* another manager's condition value on /status: a conflict that
	 * names the subresource */
	r = PATCH(WL "/x/status?fieldManager=other", APPLY,
		  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		  "\"Workload\",\"metadata\":{\"name\":\"x\"},\"status\":"
		  "{\"conditions\":[{\"type\":\"Foo\",\"status\":\"False\","
		  "\"reason\":\"R\",\"message\":\"m\",\"lastTransitionTime\":"
		  "\"2026-01-01T00:00:00Z\"}]}}");
	ds_status(&r, 409, "Conflict", "Apply failed with 1 conflict: "
		  "conflict with \"ctrl\" with subresource \"status\": "
		  ".status.conditions[type=\"Foo\"].status");
	ds_resp_free(&r);
	/* an update of /status: an Update entry of subresource status */
	r = PATCH(WL "/x/status?fieldManager=kubectl-patch", MERGE,
		  "{\"status\":{\"requeueState\":{\"count\":1}}}");
	ds_code(r, 200);
	e = entry(r.json, "kubectl-patch", "Update", "status");
	ck_assert_ptr_nonnull(fields_at(e, "f:status", "f:requeueState",
					"f:count", NULL));
	ds_resp_free(&r);
	/* the main resource owns no status */
	r = PATCH(WL "/x?fieldManager=main", MERGE,
		  "{\"spec\":{\"queueName\":\"z\"},\"status\":"
		  "{\"requeueState\":{\"count\":5}}}");
	ds_code(r, 200);
	e = entry(r.json, "main", "Update", NULL);
	ck_assert_ptr_nonnull(fields_at(e, "f:spec", "f:queueName", NULL));
	ck_assert_ptr_null(fields_at(e, "f:status", NULL));
	ds_resp_free(&r);
}
END_TEST

/* ---- FieldsV1 ---- */

START_TEST(fieldsv1_round_trip)
{
	static const char text[] =
		"{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:a\":{}}},"
		"\"f:spec\":{\"f:podSets\":{\"k:{\\\"name\\\":\\\"b\\\"}\":"
		"{\".\":{},\"f:count\":{}},\"k:{\\\"name\\\":\\\"a\\\"}\":{}},"
		"\"f:x\":{}}}";
	struct fset *s = fset_parse(text, strlen(text)), *t, *u;
	char *out;
	size_t n;

	ck_assert_ptr_nonnull(s);
	out = fset_encode(s, &n);
	/* children come out in structured-merge-diff's order */
	ck_assert_str_eq(out, "{\"f:metadata\":{\"f:labels\":{\".\":{},"
			 "\"f:a\":{}}},\"f:spec\":{\"f:podSets\":"
			 "{\"k:{\\\"name\\\":\\\"a\\\"}\":{},"
			 "\"k:{\\\"name\\\":\\\"b\\\"}\":{\".\":{},"
			 "\"f:count\":{}}},\"f:x\":{}}}");
	t = fset_parse(out, n);
	ck_assert_ptr_nonnull(t);
	u = fset_intersect(s, t);
	fset_subtract(u, s);
	ck_assert(fset_is_empty(u));
	fset_free(u);
	fset_free(t);
	free(out);
	fset_free(s);
	ck_assert_ptr_null(fset_parse("{\"x:a\":{}}", 10));
	ck_assert_ptr_null(fset_parse("{\"f:a\":1}", 9));
	ck_assert_ptr_null(fset_parse("[]", 2));
}
END_TEST

START_TEST(jsonw_raw_fields)
{
	json_t *o = json_pack("{s:{s:[{s:s, s:s}], s:{s:s}}}", "metadata",
			      "managedFields", "manager", "m", "fieldsV1",
			      "{\"f:a\":{}}", "labels", "fieldsV1",
			      "{\"f:a\":{}}");
	char *t = jsonw_dumps(o, NULL);

	/* raw only in its place */
	ck_assert_str_eq(t, "{\"metadata\":{\"managedFields\":[{\"manager\":"
			 "\"m\",\"fieldsV1\":{\"f:a\":{}}}],\"labels\":"
			 "{\"fieldsV1\":\"{\\\"f:a\\\":{}}\"}}}");
	free(t);
	json_decref(o);
	/* not FieldsV1 text: a string as ever */
	o = json_pack("{s:{s:[{s:s}]}}", "metadata", "managedFields",
		      "fieldsV1", "{\"f:a\":{}");
	t = jsonw_dumps(o, NULL);
	ck_assert_str_eq(t, "{\"metadata\":{\"managedFields\":[{\"fieldsV1\":"
			 "\"{\\\"f:a\\\":{}\"}]}}");
	free(t);
	json_decref(o);
}
END_TEST

Suite *managed_suite(void)
{
	Suite *s = suite_create("managed");
	TCase *tc;

	tc = tcase_create("managed-fields");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, create_records_update);
	tcase_add_test(tc, manager_from_user_agent);
	tcase_add_test(tc, client_reset_and_replace);
	tcase_add_test(tc, apply_records_and_prunes);
	tcase_add_test(tc, apply_conflicts_and_force);
	tcase_add_test(tc, apply_map_list_items);
	tcase_add_test(tc, apply_builtin_containers);
	tcase_add_test(tc, status_subresource_entries);
	suite_add_tcase(s, tc);

	tc = tcase_create("fieldsv1");
	tcase_add_test(tc, fieldsv1_round_trip);
	tcase_add_test(tc, jsonw_raw_fields);
	suite_add_tcase(s, tc);
	return s;
}
