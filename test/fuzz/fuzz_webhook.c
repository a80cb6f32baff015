/* libFuzzer harness for the webhook's request handling: what the HTTP
 * handler runs once a body is in (webhook_answer: the AdmissionReview or
 * ConversionReview decode, the admit.h handler, the encoded answer).
 *
 * Byte 0 picks the route (byte % the number of routes, in webhook_paths
 * order: Job mutate/validate, every Kueue kind in both versions,
 * /convert) and a variant (byte / the number of routes): the policy
 * (Kueue's defaults; manageJobsWithoutQueueName with every namespace
 * managed; HEAD's gates with a JobSet owner kind and PartialAdmission
 * off) and whether a namespace view was published. The rest is the body.
 *
 * Oracles beyond "no crash, no leak, no UB": the answer is 200 with a
 * JSON AdmissionReview echoing the request's uid (or 400 text for an
 * unreadable ConversionReview); a mutation's patch is base64 of a JSON
 * Patch that applies to the request's object (devserver/patch.c, the
 * devserver's RFC 6902), and mutating the patched object again patches
 * nothing (the handlers are idempotent, as kube-apiserver's reinvocation
 * expects); a conversion answer echoes the uid and, on Success, holds as
 * many objects as the request.
 *
 * FUZZ_WEBHOOK_SEEDS=dir (run from the repository root): write the seed
 * corpus (reviews built from test/fixtures/codec and
 * test/fixtures/admission, for each route, each operation and a few
 * variants) into dir and exit. See README.md.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "devserver/patch.h"
#include "webhook/admit.h"
#include "webhook/nsview.h"
#include "webhook/webhook.h"

#define NPOL 3

static struct admit_policy pols[NPOL];
static struct nsview *view;
static const struct webhook_path *paths;
static size_t npaths;

/* A string member's value, "" when it is missing or no string. */
static const char *sv(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void fail(const char *what, const char *body)
{
	fprintf(stderr, "fuzz_webhook: %s\n%s\n", what, body ? body : "");
	abort();
}

static void setup_policies(void)
{
	struct smap l = SMAP_INIT;

	admit_policy_defaults(&pols[0]);
	admit_policy_defaults(&pols[1]);
	pols[1].manage_jobs_without_queue_name = true;
	pols[1].has_ns_selector = false;
	admit_policy_defaults(&pols[2]);
	pols[2].lq_defaulting_needs_managed_ns = true;
	pols[2].wpc_defaulting = true;
	pols[2].partial_admission = false;
	pols[2].owners = xrealloc(pols[2].owners, (pols[2].nowners + 1) *
				  sizeof(*pols[2].owners));
	pols[2].owners[pols[2].nowners].api_version =
		xstrdup("jobset.x-k8s.io/v1alpha2");
	pols[2].owners[pols[2].nowners].kind = xstrdup("JobSet");
	pols[2].nowners++;

	view = nsview_new();
	smap_set(&l, "kubernetes.io/metadata.name", "default");
	smap_set(&l, "team", "a");
	nsview_set_labels(view, "default", &l);
	smap_release(&l);
	smap_set(&l, "kubernetes.io/metadata.name", "kube-system");
	nsview_set_labels(view, "kube-system", &l);
	smap_release(&l);
	nsview_set_default_lq(view, "default");
	nsview_set_default_lq(view, "kube-system");
	nsview_set_default_wpc(view);
	nsview_freeze(view);
}

/* ---- the seed corpus ---- */

static json_t *load(const char *file)
{
	json_error_t je;
	json_t *j = json_load_file(file, 0, &je);

	if (!j) {
		fprintf(stderr, "fuzz_webhook: %s: %s (run from the "
			"repository root)\n", file, je.text);
		exit(1);
	}
	return j;
}

static size_t route_of(const char *path)
{
	for (size_t i = 0; i < npaths; i++)
		if (!strcmp(paths[i].path, path))
			return i;
	fail("no such route", path);
	return 0;
}

static void write_seed(const char *dir, unsigned variant, const char *path,
		       const json_t *review, unsigned *n)
{
	char *text = json_dumps(review, JSON_COMPACT);
	char *file = xasprintf("%s/seed-%03u", dir, (*n)++);
	size_t r = route_of(path);
	unsigned char b0 = (unsigned char)(r + variant * npaths);
	FILE *f = fopen(file, "wb");

	if (!f || fwrite(&b0, 1, 1, f) != 1 ||
	    fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f))
		fail("cannot write", file);
	free(file);
	free(text);
}

/* An AdmissionReview as kube-apiserver sends it. */
static json_t *admission(const char *group, const char *version,
			 const char *kind, const char *resource,
			 const char *op, const char *sub, json_t *obj,
			 json_t *old)
{
	const char *ns = json_string_value(json_object_get(
		json_object_get(obj ? obj : old, "metadata"), "namespace"));
	const char *name = json_string_value(json_object_get(
		json_object_get(obj ? obj : old, "metadata"), "name"));
	json_t *req = json_pack(
		"{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:{s:s, s:s, "
		"s:s}, s:s, s:{s:s, s:[s]}, s:b}",
		"uid", "0b2f3c1e-9d7a-4a51-8f0e-1c2d3e4f5a6b",
		"kind", "group", group, "version", version, "kind", kind,
		"resource", "group", group, "version", version, "resource",
		resource,
		"requestKind", "group", group, "version", version, "kind", kind,
		"operation", op,
		"userInfo", "username", "kubernetes-admin", "groups",
		"system:masters",
		"dryRun", 0);

	if (ns)
		json_object_set_new(req, "namespace", json_string(ns));
	if (name)
		json_object_set_new(req, "name", json_string(name));
	if (sub)
		json_object_set_new(req, "subResource", json_string(sub));
	json_object_set_new(req, "object", obj ? obj : json_null());
	json_object_set_new(req, "oldObject", old ? old : json_null());
	return json_pack("{s:s, s:s, s:o}", "apiVersion",
			 "admission.k8s.io/v1", "kind", "AdmissionReview",
			 "request", req);
}

static json_t *conversion(const char *desired, json_t *objects)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:o}}", "apiVersion",
			 "apiextensions.k8s.io/v1", "kind", "ConversionReview",
			 "request", "uid", "7d9c1a2b-3e4f-4a5b-8c6d-0e1f2a3b4c5d",
			 "desiredAPIVersion", desired, "objects", objects);
}

static const struct {
	const char *file; /* test/fixtures/codec/<file>-<version>.json */
	const char *kind;
	const char *resource;
	const char *route; /* the path's last part */
	bool mutating;
} kueue_kinds[] = {
	{ "cq", "ClusterQueue", "clusterqueues", "clusterqueue", true },
	{ "rf", "ResourceFlavor", "resourceflavors", "resourceflavor", true },
	{ "wl", "Workload", "workloads", "workload", true },
	{ "cohort", "Cohort", "cohorts", "cohort", false },
	{ "lq", "LocalQueue", "localqueues", "localqueue", false },
	{ "wpc", "WorkloadPriorityClass", "workloadpriorityclasses",
	  "workloadpriorityclass", false },
};

static void write_seeds(const char *dir)
{
	static const char *const versions[] = { "v1beta1", "v1beta2" };
	static const char *const jobs[] = { "test/fixtures/codec/job.json",
					    "test/fixtures/admission/job.json" };
	unsigned n = 0;
	json_t *r, *o;

	for (size_t i = 0; i < 2; i++) {
		for (unsigned v = 0; v < 6; v++) {
			r = admission("batch", "v1", "Job", "jobs", "CREATE",
				      NULL, load(jobs[i]), NULL);
			write_seed(dir, v, "/mutate-batch-v1-job", r, &n);
			write_seed(dir, v, "/validate-batch-v1-job", r, &n);
			json_decref(r);
		}
		r = admission("batch", "v1", "Job", "jobs", "UPDATE", NULL,
			      load(jobs[i]), load(jobs[1 - i]));
		write_seed(dir, 0, "/validate-batch-v1-job", r, &n);
		json_decref(r);
		r = admission("batch", "v1", "Job", "jobs", "DELETE", NULL,
			      NULL, load(jobs[i]));
		write_seed(dir, 0, "/validate-batch-v1-job", r, &n);
		json_decref(r);
	}
	for (size_t k = 0; k < sizeof(kueue_kinds) / sizeof(kueue_kinds[0]);
	     k++) {
		for (size_t v = 0; v < 2; v++) {
			char *file = xasprintf("test/fixtures/codec/%s-%s.json",
					       kueue_kinds[k].file,
					       versions[v]);
			char *mp = xasprintf("/mutate-kueue-x-k8s-io-%s-%s",
					     versions[v], kueue_kinds[k].route);
			char *vp = xasprintf("/validate-kueue-x-k8s-io-%s-%s",
					     versions[v], kueue_kinds[k].route);

			r = admission("kueue.x-k8s.io", versions[v],
				      kueue_kinds[k].kind,
				      kueue_kinds[k].resource, "CREATE", NULL,
				      load(file), NULL);
			if (kueue_kinds[k].mutating) {
				write_seed(dir, 0, mp, r, &n);
				write_seed(dir, 8, mp, r, &n);
			}
			write_seed(dir, 0, vp, r, &n);
			json_decref(r);
			r = admission("kueue.x-k8s.io", versions[v],
				      kueue_kinds[k].kind,
				      kueue_kinds[k].resource, "UPDATE",
				      !strcmp(kueue_kinds[k].file, "wl")
				      ? "status" : NULL, load(file),
				      load(file));
			write_seed(dir, 2, vp, r, &n);
			json_decref(r);
			/* the other version's object on this path */
			o = load(file);
			r = conversion(v ? "kueue.x-k8s.io/v1beta1"
					 : "kueue.x-k8s.io/v1beta2",
				       json_pack("[o]", o));
			write_seed(dir, 0, "/convert", r, &n);
			json_decref(r);
			free(file);
			free(mp);
			free(vp);
		}
	}
	/* several objects at once, one of them of another kind */
	r = conversion("kueue.x-k8s.io/v1beta1",
		       json_pack("[o, o, o]",
				 load("test/fixtures/codec/cq-v1beta2.json"),
				 load("test/fixtures/codec/wl-v1beta2.json"),
				 load("test/fixtures/codec/lq-v1beta2.json")));
	write_seed(dir, 0, "/convert", r, &n);
	json_decref(r);
	/* an admission.k8s.io/v1beta1 review */
	r = admission("batch", "v1", "Job", "jobs", "CREATE", NULL,
		      load(jobs[0]), NULL);
	json_object_set_new(r, "apiVersion",
			    json_string("admission.k8s.io/v1beta1"));
	write_seed(dir, 3, "/mutate-batch-v1-job", r, &n);
	json_decref(r);
	fprintf(stderr, "fuzz_webhook: %u seeds in %s\n", n, dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_WEBHOOK_SEEDS");

	(void)argc;
	(void)argv;
	paths = webhook_paths(&npaths);
	setup_policies();
	if (seeds && *seeds) {
		write_seeds(seeds);
		for (size_t i = 0; i < NPOL; i++)
			admit_policy_release(&pols[i]);
		nsview_free(view);
		exit(0);
	}
	return 0;
}

/* ---- the oracles ---- */

/* The request's object, and its uid (borrowed from root). */
static const json_t *request_part(const json_t *root, const char *key)
{
	return json_object_get(json_object_get(root, "request"), key);
}

static void check_conversion(const char *in, size_t len,
			     const struct server_resp *r)
{
	json_t *ans, *req;
	const json_t *res;

	if (r->code == 400)
		return; /* unreadable: a text answer */
	if (r->code != 200)
		fail("conversion: neither 200 nor 400", r->body);
	ans = json_loads(r->body, 0, NULL);
	req = json_loadb(in, len, 0, NULL);
	if (!json_is_object(ans) || !req)
		fail("conversion: answer not JSON, or a 200 to unreadable "
		     "input", r->body);
	res = json_object_get(ans, "response");
	if (!json_equal(json_object_get(res, "uid"),
			request_part(req, "uid")))
		fail("conversion: uid not echoed", r->body);
	if (!strcmp(sv(json_object_get(res, "result"), "status"),
		    "Success") &&
	    json_array_size(json_object_get(res, "convertedObjects")) !=
	    json_array_size(request_part(req, "objects")))
		fail("conversion: objects lost", r->body);
	json_decref(req);
	json_decref(ans);
}

/* The patch of an answer (new), or NULL; aborts on a malformed one. */
static json_t *answer_patch(const json_t *res, const char *body)
{
	const char *p = json_string_value(json_object_get(res, "patch"));
	unsigned char *raw;
	size_t n = 0, bad = 0;
	json_t *ops;

	if (!p)
		return NULL;
	if (strcmp(sv(res, "patchType"), "JSONPatch"))
		fail("patch without patchType JSONPatch", body);
	raw = b64_decode(p, strlen(p), B64_STD, &n, &bad);
	if (!raw)
		fail("patch: not base64", body);
	ops = json_loadb((const char *)raw, n, 0, NULL);
	free(raw);
	if (!json_is_array(ops))
		fail("patch: not a JSON array", body);
	return ops;
}

static void answer(unsigned variant, size_t route, const char *body,
		   size_t len, struct server_resp *out);

static void check_admission(unsigned variant, size_t route, const char *in,
			    size_t len, const struct server_resp *r,
			    bool again)
{
	json_t *ans, *req, *ops, *patched, *review;
	const json_t *res, *obj;
	struct server_resp r2;
	struct err err = { "" };
	char *text;

	if (r->code != 200 || !r->body)
		fail("admission: not a 200", r->body);
	ans = json_loads(r->body, 0, NULL);
	if (!json_is_object(ans) || strcmp(sv(ans, "kind"), "AdmissionReview"))
		fail("admission: answer is no AdmissionReview", r->body);
	res = json_object_get(ans, "response");
	if (!json_is_boolean(json_object_get(res, "allowed")) ||
	    !json_is_string(json_object_get(res, "uid")))
		fail("admission: no allowed or uid", r->body);
	req = json_loadb(in, len, JSON_REJECT_DUPLICATES, NULL);
	/* (a review refused whole, code 400, may not have been read far
	 * enough to know its uid) */
	if (req && json_integer_value(json_object_get(json_object_get(res,
		"status"), "code")) != 400 &&
	    json_is_string(request_part(req, "uid")) &&
	    json_string_length(request_part(req, "uid")) &&
	    !json_equal(json_object_get(res, "uid"), request_part(req, "uid")))
		fail("admission: uid not echoed", r->body);
	ops = answer_patch(res, r->body);
	if (!ops || !json_array_size(ops))
		goto out;
	if (again)
		fail("admission: mutating the patched object patches again",
		     r->body);
	obj = request_part(req, "object");
	if (!json_is_object(obj))
		fail("admission: a patch without an object", r->body);
	patched = patch_json(obj, ops, &err);
	if (!patched)
		fail(err.msg, r->body);
	/* the same review with the patched object: nothing more to do */
	review = json_deep_copy(req);
	json_object_set_new(json_object_get(review, "request"), "object",
			    patched);
	text = json_dumps(review, JSON_COMPACT);
	json_decref(review);
	memset(&r2, 0, sizeof(r2));
	answer(variant, route, text, strlen(text), &r2);
	check_admission(variant, route, text, strlen(text), &r2, true);
	free(r2.body);
	free(text);
out:
	json_decref(ops);
	json_decref(req);
	json_decref(ans);
}

static void answer(unsigned variant, size_t route, const char *body,
		   size_t len, struct server_resp *out)
{
	const struct admit_policy *pol = &pols[variant % NPOL];
	const struct nsview *v = (variant / NPOL) % 2 ? view : NULL;

	if (!webhook_answer(pol, v, paths[route].path, body, len, out))
		fail("a table path is no route", paths[route].path);
	if (!out->body || out->len != strlen(out->body))
		fail("answer without a body, or a wrong length", out->body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server_resp r;
	size_t route;
	unsigned variant;
	char *body;

	if (size < 1)
		return 0;
	route = data[0] % npaths;
	variant = data[0] / (unsigned)npaths;
	/* a copy, so reading past len shows up under ASan */
	body = xmalloc(size - 1 ? size - 1 : 1);
	memcpy(body, data + 1, size - 1);
	memset(&r, 0, sizeof(r));
	answer(variant, route, body, size - 1, &r);
	if (!strcmp(paths[route].path, "/convert"))
		check_conversion(body, size - 1, &r);
	else
		check_admission(variant, route, body, size - 1, &r, false);
	free(r.body);
	free(body);
	return 0;
}
