/*
 * jobwl: the Workload Kueue's batch/job integration derives from a Job
 * (kueue-api.md §12.4), as jobframework's ConstructWorkload, the Job's
 * PodSets() and prepareWorkload build it in v0.14.
 *
 * Owns nothing between calls. Reads no cache: priority classes come
 * through the caller's lookup callbacks. Pure apart from SHA-1 (OpenSSL's
 * EVP digest, no I/O); never logs, errors go back in struct err.
 */
#include "model/jobwl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/alloc.h"
#include "base/text.h"
#include "model/goparse.h"
#include "model/names.h"
#include "model/placement.h"
#include "model/resources.h"
#include "model/smap.h"

#define HASH_LEN 5
/* 253 (longest object name) - "-" - hash: Kueue's maxPrefixLength. */
#define MAX_PREFIX_LEN (252 - HASH_LEN)

#define PROVREQ_PREFIX "provreq.kueue.x-k8s.io/"
#define POD_INDEX_LABEL "batch.kubernetes.io/job-completion-index"
#define ANNOT_TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define ANNOT_TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define ANNOT_TAS_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define SOURCE_WPC_RESOURCE "workloadpriorityclasses.kueue.x-k8s.io"
#define SOURCE_PC_RESOURCE "priorityclasses.scheduling.k8s.io"

/* Labels the Job controller owns; Kueue keeps batch.kubernetes.io/job-name
 * (PropagateBatchJobLabelsToWorkload, on in v0.14). */
static const char *const managed_labels[] = {
	"controller-uid",
	"job-name",
	"batch.kubernetes.io/controller-uid",
};
#define NMANAGED_LABELS (sizeof(managed_labels) / sizeof(managed_labels[0]))

char *jobwl_workload_name(const char *kind, const char *group,
			  const char *name, const char *uid)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char hex[] = "0123456789abcdef";
	char h[HASH_LEN + 1];
	char *input, *prefix, *res;
	size_t plen;
	int ok;

	if (!uid)
		uid = "";

	/* The hash covers the Kind as spelt (not lowercased). */
	input = xasprintf("%s\n%s\n%s\n%s", kind, group, name, uid);
	ok = EVP_Digest(input, strlen(input), md, &mdlen, EVP_sha1(), NULL);
	if (ok != 1 || mdlen < (HASH_LEN + 1) / 2)
		BUG("SHA-1 digest unavailable");
	free(input);
	for (size_t i = 0; i < HASH_LEN; i++)
		h[i] = hex[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	h[HASH_LEN] = '\0';

	/* strings.ToLower(Kind): kinds are ASCII identifiers. */
	prefix = xasprintf("%s-%s", kind, name);
	for (size_t i = 0, k = strlen(kind); i < k; i++)
		prefix[i] = (char)tolower((unsigned char)prefix[i]);
	/* Byte cut, as Go slices the string. */
	plen = strlen(prefix);
	if (plen > MAX_PREFIX_LEN)
		prefix[MAX_PREFIX_LEN] = '\0';
	res = xasprintf("%s-%s", prefix, h);
	free(prefix);
	return res;
}

int32_t jobwl_pod_count(const struct job *job)
{
	int32_t n = job->has_parallelism ? job->parallelism : 1;

	if (job->has_completions && job->completions < n)
		n = job->completions;
	return n;
}

/* Go's strconv.ParseInt(s, 10, 32). */
static bool parse_int32(const char *s, int32_t *out)
{
	int64_t v;

	if (goparse_int(s, 32, &v) != GOPARSE_OK)
		return false;
	*out = (int32_t)v;
	return true;
}

/* A string of the label map that is absent or "" reads as unset, as Go's
 * map lookup of a missing key gives "". */
static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* Appends s as a JSON string literal to *buf (a new string, replaced). */
static void append_json_string(char **buf, const char *key, const char *s)
{
	size_t n = strlen(s), len = 0;
	char *q = xmalloc(n * 6 + 1);
	char *next;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			q[len++] = '\\';
			q[len++] = (char)*p;
		} else if (*p < 0x20) {
			static const char hex[] = "0123456789abcdef";

			memcpy(q + len, "\\u00", 4);
			q[len + 4] = hex[*p >> 4];
			q[len + 5] = hex[*p & 0xf];
			len += 6;
		} else {
			q[len++] = (char)*p;
		}
	}
	q[len] = '\0';
	next = xasprintf("%s%s\"%s\":\"%s\"", *buf, **buf ? "," : "", key, q);
	free(q);
	free(*buf);
	*buf = next;
}

/*
 * The pod set's topologyRequest as compact JSON, in the field order Go
 * marshals PodSetTopologyRequest: the TAS annotation of the template (first
 * of required, preferred, unconstrained), then podIndexLabel, always set
 * for Jobs since TAS is on by default in v0.14.
 */
static char *topology_request(const struct pod_template *t, struct err *err)
{
	const struct smap *a = &t->annotations;
	const char *required = smap_get(a, ANNOT_TAS_REQUIRED);
	const char *preferred = smap_get(a, ANNOT_TAS_PREFERRED);
	const char *unconstrained = smap_get(a, ANNOT_TAS_UNCONSTRAINED);
	char *body = xstrdup("");
	char *res;

	if (required) {
		append_json_string(&body, "required", required);
	} else if (preferred) {
		append_json_string(&body, "preferred", preferred);
	} else if (unconstrained) {
		bool b;

		if (!goparse_bool(unconstrained, &b)) {
			free(body);
			err_set(err, "annotation %s: invalid boolean \"%s\"",
				ANNOT_TAS_UNCONSTRAINED, unconstrained);
			return NULL;
		}
		res = xasprintf("\"unconstrained\":%s", b ? "true" : "false");
		free(body);
		body = res;
	}
	append_json_string(&body, "podIndexLabel", POD_INDEX_LABEL);
	res = xasprintf("{%s}", body);
	free(body);
	return res;
}

/* minCount from the job-min-parallelism annotation, valid in 1..count-1. */
static int min_count(const struct job *job, int32_t count, struct pod_set *ps,
		     struct err *err)
{
	const char *v = smap_get(&job->meta.annotations,
				 ANNOT_MIN_PARALLELISM);
	int32_t n;

	if (!v)
		return 0;
	if (!parse_int32(v, &n))
		return err_set(err, "annotation %s: \"%s\" is not an integer",
			       ANNOT_MIN_PARALLELISM, v);
	if (n < 1 || n >= count)
		return err_set(err,
			       "annotation %s: %d should be between 1 and %lld",
			       ANNOT_MIN_PARALLELISM, (int)n,
			       (long long)count - 1); /* count may be INT32_MIN */
	ps->has_min_count = true;
	ps->min_count = n;
	return 0;
}

/*
 * Kueue's ExtractPriority: the WorkloadPriorityClass label first, then the
 * template's priorityClassName, then the globalDefault PriorityClass, then
 * 0 with no class. A named class that does not exist is an error (the
 * NotFound Kueue's client.Get returns, in its wording).
 */
static int resolve_priority(const struct job *job,
			    const struct priority_lookup *prio,
			    struct workload *wl, struct err *err)
{
	const char *wpc = nonempty(smap_get(&job->meta.labels,
					    LABEL_PRIORITY_CLASS));
	const char *pc = nonempty(job->tmpl.priority_class_name);
	const char *def = NULL;
	int32_t value = 0;

	if (wpc) {
		if (!prio || !prio->wpc || !prio->wpc(prio->ctx, wpc, &value))
			return err_set(err, "%s \"%s\" not found",
				       SOURCE_WPC_RESOURCE, wpc);
		wl->priority_class_name = xstrdup(wpc);
		wl->priority_source = PSRC_WPC;
	} else if (pc) {
		if (!prio || !prio->pc || !prio->pc(prio->ctx, pc, &value))
			return err_set(err, "%s \"%s\" not found",
				       SOURCE_PC_RESOURCE, pc);
		wl->priority_class_name = xstrdup(pc);
		wl->priority_source = PSRC_POD;
	} else if (prio && prio->global_default &&
		   prio->global_default(prio->ctx, &def, &value) && def) {
		wl->priority_class_name = xstrdup(def);
		wl->priority_source = PSRC_POD;
	} else {
		value = 0;
		wl->priority_source = PSRC_NONE;
	}
	/* Kueue always writes spec.priority, 0 when nothing resolved. */
	wl->has_priority = true;
	wl->priority = value;
	return 0;
}

/* Workload metadata: name, namespace, owner, finalizer, labels, annotations. */
static void build_meta(const struct job *job, const struct jobwl_opts *opts,
		       struct object_meta *m)
{
	const char *uid = job->meta.uid ? job->meta.uid : "";
	struct owner_ref *o;

	m->name = jobwl_workload_name("Job", "batch", job->meta.name, uid);
	m->namespace = xstrdup_or_null(job->meta.namespace);

	o = xcalloc(1, sizeof(*o));
	o->api_version = xstrdup("batch/v1");
	o->kind = xstrdup("Job");
	o->name = xstrdup(job->meta.name);
	o->uid = xstrdup(uid);
	o->controller = true;
	o->block_owner_deletion = true;
	m->owners = o;
	m->nowners = 1;

	object_meta_add_finalizer(m, FINALIZER_RESOURCE_IN_USE);

	for (size_t i = 0; opts && i < opts->nlabel_keys_to_copy; i++) {
		const char *k = opts->label_keys_to_copy[i];
		const char *v = smap_get(&job->meta.labels, k);

		if (v)
			smap_set(&m->labels, k, v);
	}
	/* Set after the copied labels, so it wins as in Kueue. */
	if (is_label_value(uid))
		smap_set(&m->labels, LABEL_JOB_UID, uid);

	for (size_t i = 0; i < job->meta.annotations.n; i++) {
		const struct smap_kv *kv = &job->meta.annotations.v[i];

		if (!strncmp(kv->key, PROVREQ_PREFIX, strlen(PROVREQ_PREFIX)))
			smap_set(&m->annotations, kv->key, kv->value);
	}
}

int jobwl_build(const struct job *job, const struct jobwl_opts *opts,
		struct workload *out, struct err *err)
{
	struct workload wl = { 0 };
	struct pod_set *ps;
	const char *queue, *s;
	int32_t n;
	int rc = -1;

	workload_release(out);
	if (!nonempty(job->meta.name)) {
		err_set(err, "job has no name");
		goto out;
	}

	/* 1. Metadata. */
	build_meta(job, opts, &wl.meta);

	/* 2. Spec scalars: queue (label, else the deprecated annotation),
	 *    maximum execution time (ignored unless a positive int32). */
	queue = nonempty(smap_get(&job->meta.labels, LABEL_QUEUE_NAME));
	if (!queue)
		queue = nonempty(smap_get(&job->meta.annotations,
					  LABEL_QUEUE_NAME));
	wl.queue_name = xstrdup_or_null(queue);
	s = smap_get(&job->meta.labels, LABEL_MAX_EXEC_TIME);
	if (s && parse_int32(s, &n) && n > 0) {
		wl.has_max_exec = true;
		wl.max_exec_seconds = n;
	}
	wl.active = true;

	/* 3. The one pod set. */
	ps = xcalloc(1, sizeof(*ps));
	wl.pod_sets = ps;
	wl.npod_sets = 1;
	ps->name = xstrdup(DEFAULT_PODSET_NAME);
	ps->count = jobwl_pod_count(job);
	if (min_count(job, ps->count, ps, err) < 0)
		goto out;
	pod_template_copy(&ps->tmpl, &job->tmpl);
	for (size_t i = 0; i < NMANAGED_LABELS; i++)
		smap_del(&ps->tmpl.labels, managed_labels[i]);
	ps->topology_request = topology_request(&job->tmpl, err);
	ps->tas_requested =
		smap_get(&job->tmpl.annotations, ANNOT_TAS_REQUIRED) ||
		smap_get(&job->tmpl.annotations, ANNOT_TAS_PREFERRED) ||
		smap_get(&job->tmpl.annotations, ANNOT_TAS_UNCONSTRAINED);
	if (!ps->topology_request)
		goto out;

	/* 4. Priority. */
	if (resolve_priority(job, opts ? opts->prio : NULL, &wl, err) < 0)
		goto out;

	*out = wl;
	memset(&wl, 0, sizeof(wl));
	rc = 0;
out:
	workload_release(&wl);
	return rc;
}

static bool containers_match(const struct container_res *a, size_t na,
			     const struct container_res *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].sidecar != b[i].sidecar ||
		    !text_same(a[i].name, b[i].name) ||
		    !reslist_equal(&a[i].requests, &b[i].requests) ||
		    !reslist_equal(&a[i].limits, &b[i].limits))
			return false;
	return true;
}

bool jobwl_pod_set_matches(const struct pod_set *built,
			   const struct pod_set *wl, int32_t count,
			   bool directives)
{
	const struct pod_template *x = &built->tmpl, *y = &wl->tmpl;

	if (!text_same(built->name, wl->name) || wl->count != count ||
	    built->has_min_count != wl->has_min_count ||
	    (built->has_min_count && built->min_count != wl->min_count))
		return false;
	if (!containers_match(x->containers, x->ncontainers, y->containers,
			      y->ncontainers) ||
	    !containers_match(x->init_containers, x->ninit_containers,
			      y->init_containers, y->ninit_containers) ||
	    !reslist_equal(&x->overhead, &y->overhead) ||
	    x->has_pod_resources != y->has_pod_resources ||
	    !reslist_equal(&x->pod_requests, &y->pod_requests) ||
	    !reslist_equal(&x->pod_limits, &y->pod_limits))
		return false;
	if (!directives)
		return true;
	if (!smap_equal(&x->node_selector, &y->node_selector) ||
	    x->ntols != y->ntols ||
	    x->affinity.present != y->affinity.present)
		return false;
	for (size_t i = 0; i < x->ntols; i++)
		if (!toleration_equal(&x->tols[i], &y->tols[i]))
			return false;
	return true;
}
