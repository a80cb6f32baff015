/*
 * api: lifecycle, request routing (RequestInfoFactory's rules, §4),
 * content negotiation, and the non-resource endpoints: /version, health,
 * discovery (aggregated v2/v2beta1 and legacy, §2) and /openapi/v3 (§3).
 *
 * Each request takes one registry snapshot reference for its whole life
 * (a watch keeps it until the stream ends), so a CRD change is seen by the
 * next request and never half-way through one.
 */
#include "devserver/api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "config/yamljson.h"
#include "devserver/admission.h"
#include "devserver/api_int.h"
#include "devserver/builtin.h"
#include "devserver/fault.h"
#include "devserver/protobuf.h"
#include "devserver/registry.h"
#include "devserver/store.h"
#include "devserver/webhook_client.h"

#define VERSION_JSON \
	"{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.4\"," \
	"\"gitCommit\":\"59526cd4867447956156ae3a602fcbac5d2a9f8c\"," \
	"\"gitTreeState\":\"clean\",\"buildDate\":\"2025-04-22T16:02:27Z\"," \
	"\"goVersion\":\"go1.23.6\",\"compiler\":\"gc\"," \
	"\"platform\":\"linux/amd64\"}"

/* ---- lifecycle ---- */

/* Groups the endpoints by Service (a->svcs). */
static void group_services(struct api *a)
{
	a->svcs = xcalloc(a->neps + 1, sizeof(*a->svcs));
	for (size_t i = 0; i < a->neps; i++) {
		struct api_svc *v = NULL;

		for (size_t k = 0; k < a->nsvcs && !v; k++)
			if (!strcmp(a->svcs[k].ns, a->eps[i].ns) &&
			    !strcmp(a->svcs[k].name, a->eps[i].name))
				v = &a->svcs[k];
		if (!v) {
			v = &a->svcs[a->nsvcs++];
			v->ns = a->eps[i].ns;
			v->name = a->eps[i].name;
			v->idx = xcalloc(a->neps, sizeof(*v->idx));
			atomic_init(&v->next, 0);
		}
		v->idx[v->n++] = i;
	}
}

struct api *api_new(const struct api_opts *o, struct err *err)
{
	struct api *a = xcalloc(1, sizeof(*a));
	struct store_opts so = {
		.data_dir = o->data_dir,
		.watch_history = o->watch_history ? o->watch_history : 10000,
		.watch_history_ms = o->watch_history_ms,
		.watch_history_max = o->watch_history_max,
	};

	a->store = store_new(&so, err);
	if (!a->store) {
		free(a);
		return NULL;
	}
	atomic_init(&a->stopping, false);
	a->restored_rv = store_rv(a->store);
	a->reg = registry_new();
	a->adm = admission_cache_new();
	a->job_runtime_ms = o->job_runtime_ms;
	a->bookmark_ms = o->bookmark_ms > 0 ? o->bookmark_ms : 10000;
	a->propagation_finalizers = o->propagation_finalizers;
	a->faults = fault_new(o->faults);
	a->eps = xcalloc(o->nendpoints + 1, sizeof(*a->eps));
	for (size_t i = 0; i < o->nendpoints; i++) {
		a->eps[i].ns = xstrdup(o->endpoints[i].ns);
		a->eps[i].name = xstrdup(o->endpoints[i].name);
		a->eps[i].host = xstrdup(o->endpoints[i].host);
		a->eps[i].port = o->endpoints[i].port;
	}
	a->neps = o->nendpoints;
	group_services(a);
	registry_rebuild(a->reg, a->store);
	if (api_internal_bootstrap(a, err) < 0) {
		api_free(a);
		return NULL;
	}
	return a;
}

void api_shutdown(struct api *a)
{
	atomic_store(&a->stopping, true);
	store_wake_all(a->store);
}

void api_free(struct api *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->neps; i++) {
		free((char *)a->eps[i].ns);
		free((char *)a->eps[i].name);
		free((char *)a->eps[i].host);
	}
	free(a->eps);
	for (size_t i = 0; i < a->nsvcs; i++)
		free(a->svcs[i].idx);
	free(a->svcs);
	registry_free(a->reg);
	admission_cache_free(a->adm);
	fault_free(a->faults);
	store_free(a->store);
	free(a);
}

struct store *api_store(struct api *a)
{
	return a->store;
}

struct admission_cache *api_admission_cache(struct api *a)
{
	return a->adm;
}

int64_t api_job_runtime_ms(const struct api *a)
{
	return a->job_runtime_ms;
}

struct faults *api_faults(struct api *a)
{
	return a->faults;
}

size_t api_service_endpoints(struct api *a, const char *ns, const char *name,
			     const struct api_endpoint **out, size_t max)
{
	for (size_t i = 0; i < a->nsvcs; i++) {
		struct api_svc *v = &a->svcs[i];
		size_t start, n;

		if (strcmp(v->ns, ns) || strcmp(v->name, name))
			continue;
		start = atomic_fetch_add(&v->next, 1) % v->n;
		n = v->n < max ? v->n : max;
		for (size_t k = 0; k < n; k++)
			out[k] = &a->eps[v->idx[(start + k) % v->n]];
		return n;
	}
	return 0;
}

/* ---- small shared helpers ---- */

void api_op_init(struct op *op, struct api *a, struct registry_snap *snap,
		 const struct rtype *t, const struct rversion *v, const char *ns,
		 const char *name, const char *sub)
{
	memset(op, 0, sizeof(*op));
	op->api = a;
	op->snap = snap;
	op->type = t;
	op->ver = v;
	op->ns = xstrdup(ns ? ns : "");
	op->name = name ? xstrdup(name) : NULL;
	op->sub = sub ? sub : "";
	op->user = "kubernetes-admin";
	op->fv = FV_WARN;
	op->warnings = json_array();
	op->now_ms = api_now_ms();
	if (v && v->deprecated && v->warning)
		api_op_warn(op, "%s", v->warning);
}

void api_op_release(struct op *op)
{
	free(op->ns);
	free(op->name);
	json_decref(op->warnings);
	op->ns = op->name = NULL;
	op->warnings = NULL;
}

void api_op_warn(struct op *op, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(op->warnings, json_string(buf));
}

const char *api_op_query(const struct op *op, const char *name)
{
	return op->req ? http_query(op->req, name) : NULL;
}

json_t *api_op_options(const struct op *op, const char *kind)
{
	json_t *o = json_pack("{s:s, s:s}", "kind", kind, "apiVersion",
			      "meta.k8s.io/v1");

	if (op->dry_run)
		json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
	if (op->field_manager)
		json_object_set_new(o, "fieldManager",
				    json_string(op->field_manager));
	if (op->field_validation)
		json_object_set_new(o, "fieldValidation",
				    json_string(op->field_validation));
	return o;
}

const char *api_op_version(const struct op *op, char *buf, size_t n)
{
	return rtype_api_version(op->type, op->ver->name, buf, n);
}

int api_parse_go_bool(const char *s, bool *out)
{
	static const char *const t[] = { "1", "t", "T", "TRUE", "true",
					 "True", NULL };
	static const char *const f[] = { "0", "f", "F", "FALSE", "false",
					 "False", NULL };

	for (size_t i = 0; t[i]; i++)
		if (!strcmp(s, t[i])) {
			*out = true;
			return 0;
		}
	for (size_t i = 0; f[i]; i++)
		if (!strcmp(s, f[i])) {
			*out = false;
			return 0;
		}
	return -1;
}

int api_parse_rv(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9' || v > UINT64_MAX / 10 ||
		    (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int64_t api_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Cryptographically random bytes. Each thread keeps a small pool filled
 * by getrandom(2), so a create costs no syscall of its own. */
#define RANDOM_POOL 512
static void random_bytes(unsigned char *b, size_t n)
{
	static _Thread_local unsigned char pool[RANDOM_POOL];
	static _Thread_local size_t left;

	while (n) {
		size_t take;

		if (!left) {
			unsigned char *p = pool;
			size_t need = sizeof(pool);

			while (need) {
				ssize_t r = getrandom(p, need, 0);

				if (r <= 0)
					BUG("getrandom failed");
				p += r;
				need -= (size_t)r;
			}
			left = sizeof(pool);
		}
		take = n < left ? n : left;
		memcpy(b, pool + sizeof(pool) - left, take);
		/* used bytes never serve twice */
		memset(pool + sizeof(pool) - left, 0, take);
		left -= take;
		b += take;
		n -= take;
	}
}

void api_uuid(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t o = 0;

	random_bytes(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (size_t i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
}

void api_name_suffix(char out[6])
{
	/* apimachinery's rand.String alphabet: no vowels, no confusables. */
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char b[5];

	random_bytes(b, sizeof(b));
	for (size_t i = 0; i < 5; i++)
		out[i] = alphabet[b[i] % (sizeof(alphabet) - 1)];
	out[5] = '\0';
}

/* ---- responses ---- */

static void add_warnings(struct op *op, struct http_resp *resp)
{
	size_t i;
	json_t *w;

	json_array_foreach(op->warnings, i, w) {
		char *q = go_quote(json_string_value(w));
		char *h = xasprintf("299 - %s", q);

		http_resp_header(resp, "Warning", h);
		free(h);
		free(q);
	}
}

void api_respond_json(struct op *op, struct http_resp *resp, unsigned code,
		      json_t *obj, const char *ctype)
{
	if (op)
		add_warnings(op, resp);
	http_resp_json(resp, code, obj, ctype);
}

void api_respond_stream(struct op *op, struct http_resp *resp,
			const char *ctype, http_stream_fn *fn, void *cls,
			http_stream_free_fn *free_fn)
{
	add_warnings(op, resp);
	http_resp_set(resp, 200, ctype, NULL, 0);
	resp->stream = fn;
	resp->stream_cls = cls;
	resp->stream_free = free_fn;
}

void api_respond_status(struct op *op, struct http_resp *resp,
			struct api_status *st)
{
	if (st->retry_after) {
		char b[16];

		snprintf(b, sizeof(b), "%d", st->retry_after);
		http_resp_header(resp, "Retry-After", b);
	}
	api_respond_json(op, resp, (unsigned)st->code, status_to_json(st), NULL);
	status_release(st);
}

/* ---- content negotiation ---- */

struct media_item {
	char type[64];    /* "application/json" */
	char as[48];
	char g[48];
	char v[16];
};

/* Splits one Accept entry into its type and the as/g/v parameters. */
static void parse_media(const char *s, size_t n, struct media_item *m)
{
	char buf[256];
	char *save = NULL, *tok;

	memset(m, 0, sizeof(*m));
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	tok = strtok_r(buf, ";", &save);
	for (int first = 1; tok; tok = strtok_r(NULL, ";", &save), first = 0) {
		char *eq;

		while (*tok == ' ')
			tok++;
		for (char *e = tok + strlen(tok); e > tok && e[-1] == ' '; e--)
			e[-1] = '\0';
		if (first) {
			snprintf(m->type, sizeof(m->type), "%s", tok);
			continue;
		}
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(tok, "as"))
			snprintf(m->as, sizeof(m->as), "%s", eq);
		else if (!strcmp(tok, "g"))
			snprintf(m->g, sizeof(m->g), "%s", eq);
		else if (!strcmp(tok, "v"))
			snprintf(m->v, sizeof(m->v), "%s", eq);
	}
}

/* Calls fn for each Accept entry in order until it returns true. */
static bool accept_each(const char *accept,
			bool (*fn)(const struct media_item *, void *),
			void *ctx)
{
	const char *p = accept;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		struct media_item m;

		parse_media(p, n, &m);
		if (fn(&m, ctx))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static bool is_json_type(const char *t)
{
	return !strcasecmp(t, "application/json") || !strcmp(t, "*/*") ||
	       !strcmp(t, "application/*") ||
	       !strcasecmp(t, "application/yaml");
}

struct neg {
	bool list;
	struct media *m;
};

static bool pick_media(const struct media_item *it, void *ctx)
{
	struct neg *n = ctx;

	if (!is_json_type(it->type))
		return false;
	if (!it->as[0]) {
		n->m->kind = MEDIA_JSON;
		snprintf(n->m->ctype, sizeof(n->m->ctype), "application/json");
		return true;
	}
	if (strcmp(it->g, "meta.k8s.io") ||
	    (strcmp(it->v, "v1") && strcmp(it->v, "v1beta1")))
		return false;
	if (!strcmp(it->as, "Table")) {
		n->m->kind = MEDIA_TABLE;
	} else if (!strcmp(it->as, "PartialObjectMetadata") ||
		   !strcmp(it->as, "PartialObjectMetadataList")) {
		if (!strcmp(it->as, "PartialObjectMetadataList") != n->list)
			return false;
		n->m->kind = MEDIA_PARTIAL;
	} else {
		return false;
	}
	snprintf(n->m->ctype, sizeof(n->m->ctype),
		 "application/json;as=%s;v=%s;g=meta.k8s.io", it->as, it->v);
	return true;
}

int api_media_negotiate(const struct http_req *req, bool list, struct media *m,
			struct api_status *st)
{
	const char *accept = req ? http_header(req, "Accept") : NULL;
	struct neg n = { list, m };

	m->kind = MEDIA_JSON;
	snprintf(m->ctype, sizeof(m->ctype), "application/json");
	if (!accept || !*accept)
		return 0;
	if (accept_each(accept, pick_media, &n))
		return 0;
	return status_not_acceptable(st);
}

struct agg {
	const char *version; /* "v2" / "v2beta1" chosen, or NULL */
};

static bool pick_agg(const struct media_item *it, void *ctx)
{
	struct agg *a = ctx;

	if (!is_json_type(it->type))
		return false;
	if (!it->as[0])
		return true; /* plain JSON first: legacy discovery */
	if (!strcmp(it->as, "APIGroupDiscoveryList") &&
	    !strcmp(it->g, "apidiscovery.k8s.io") &&
	    (!strcmp(it->v, "v2") || !strcmp(it->v, "v2beta1"))) {
		a->version = !strcmp(it->v, "v2") ? "v2" : "v2beta1";
		return true;
	}
	return false;
}

/* ---- non-resource endpoints ---- */

static void serve_text(struct http_resp *resp, unsigned code,
		       const char *ctype, const char *text)
{
	http_resp_set(resp, code, ctype, xstrdup(text), strlen(text));
}

static void serve_not_found(struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;

	status_path_not_found(&st);
	api_respond_status(NULL, resp, &st);
}

static void serve_discovery(struct registry_snap *snap,
			    const struct http_req *req, struct http_resp *resp,
			    bool core)
{
	struct agg ag = { NULL };
	const char *accept = http_header(req, "Accept");
	char ctype[128];

	if (accept)
		accept_each(accept, pick_agg, &ag);
	if (ag.version) {
		enum registry_doc d = core
			? (!strcmp(ag.version, "v2") ? DOC_AGG_API_V2
						     : DOC_AGG_API_V2BETA1)
			: (!strcmp(ag.version, "v2") ? DOC_AGG_APIS_V2
						     : DOC_AGG_APIS_V2BETA1);

		snprintf(ctype, sizeof(ctype),
			 "application/json;g=apidiscovery.k8s.io;v=%s;"
			 "as=APIGroupDiscoveryList", ag.version);
		serve_text(resp, 200, ctype, registry_doc(snap, d));
		return;
	}
	if (core) {
		const char *host = http_header(req, "Host");

		http_resp_json(resp, 200, json_pack(
			"{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions",
			"versions", "v1", "serverAddressByClientCIDRs",
			"clientCIDR", "0.0.0.0/0", "serverAddress",
			host ? host : "127.0.0.1"), NULL);
		return;
	}
	serve_text(resp, 200, "application/json",
		   registry_doc(snap, DOC_LEGACY_APIS));
}

static void serve_openapi(struct registry_snap *snap, const char *rest,
			  struct http_resp *resp)
{
	const char *doc;

	if (!*rest) {
		serve_text(resp, 200, "application/json",
			   registry_doc(snap, DOC_OPENAPI_INDEX));
		return;
	}
	doc = registry_openapi(snap, rest, NULL);
	if (!doc) {
		serve_not_found(resp);
		return;
	}
	serve_text(resp, 200, "application/json", doc);
}

/*
 * /openapi/v2: kubectl up to 1.28 fetches it (as protobuf) before every
 * create or apply and gives up on a 404; later versions only use it for
 * patch metadata and tolerate a 404. An empty document is a valid answer
 * in both encodings: the protobuf Document with no fields is zero bytes,
 * and the JSON form is a swagger 2.0 skeleton. The media type uses '.'
 * before v1.0: the '@' form the request sends is not parsable as a
 * response Content-Type by kubectl.
 */
static void serve_openapi_v2(const struct http_req *req,
			     struct http_resp *resp)
{
	const char *accept = http_header(req, "Accept");

	if (accept && strstr(accept, "protobuf")) {
		http_resp_set(resp, 200,
			      "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
			      xstrdup(""), 0);
		return;
	}
	serve_text(resp, 200, "application/json",
		   "{\"swagger\":\"2.0\",\"info\":{\"title\":\"Kubernetes\","
		   "\"version\":\"v1.32.4\"},\"paths\":{},\"definitions\":{}}");
}

static void serve_root(struct registry_snap *snap, struct http_resp *resp)
{
	json_t *paths = json_array();
	static const char *const fixed[] = {
		"/api", "/api/v1", "/apis", "/healthz", "/livez",
		"/openapi/v2", "/openapi/v3", "/readyz", "/version", NULL,
	};

	for (size_t i = 0; fixed[i]; i++)
		json_array_append_new(paths, json_string(fixed[i]));
	for (size_t i = 0; i < registry_ntypes(snap); i++) {
		const struct rtype *t = registry_type_at(snap, i);
		const struct rversion *v = rtype_preferred(t);
		char *p;

		if (!*t->group)
			continue;
		p = xasprintf("/apis/%s/%s", t->group, v->name);
		json_array_append_new(paths, json_string(p));
		free(p);
	}
	http_resp_json(resp, 200, json_pack("{s:o}", "paths", paths), NULL);
}

/* ---- resource requests ---- */

static int parse_write_opts(struct op *op, struct api_status *st)
{
	const char *dr = api_op_query(op, "dryRun");
	const char *fv = api_op_query(op, "fieldValidation");

	if (dr && *dr) {
		if (strcmp(dr, "All"))
			return status_bad_request(st,
				"Invalid dry run value: %s. Valid values are "
				"[All]", dr);
		op->dry_run = true;
	}
	if (fv && *fv) {
		if (!strcmp(fv, "Ignore"))
			op->fv = FV_IGNORE;
		else if (!strcmp(fv, "Warn"))
			op->fv = FV_WARN;
		else if (!strcmp(fv, "Strict"))
			op->fv = FV_STRICT;
		else
			return status_bad_request(st,
				"fieldValidation: Invalid value: \"%s\": "
				"must be one of \"Ignore\", \"Warn\", or "
				"\"Strict\"", fv);
	}
	op->field_validation = fv && *fv ? fv : NULL;
	op->field_manager = api_op_query(op, "fieldManager");
	if (op->field_manager && !*op->field_manager)
		op->field_manager = NULL;
	return 0;
}

/* ---- request bodies ---- */

/* True when the media type of Content-Type ct (before any parameter) is
 * t, ignoring case. */
static bool media_is(const char *ct, const char *t)
{
	size_t n = strcspn(ct, ";");

	while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	return strlen(t) == n && !strncasecmp(ct, t, n);
}

/* The key of jansson's "duplicate object key near '"k"'" (new). */
static char *dup_key_of(const json_error_t *je)
{
	const char *q = strstr(je->text, "near '\"");
	size_t n;

	if (!q)
		return xstrdup("");
	q += 7;
	n = strlen(q);
	if (n >= 2 && q[n - 1] == '\'' && q[n - 2] == '"')
		n -= 2;
	return xstrndup(q, n);
}

/*
 * Parses a request body: Kubernetes protobuf (recognised by its
 * envelope), JSON, or YAML when ctype names YAML. dup: NULL lets the last
 * of duplicate object keys win silently (encoding/json's rule); otherwise
 * *dup receives the first duplicate key (new string) or NULL. Returns a
 * new reference, or NULL + st: 400 with the decoder's message (which
 * covers bad syntax, NUL characters, numbers out of range, invalid UTF-8
 * and nesting beyond jansson's 2048 levels or YAMLJSON_MAX_DEPTH), 415
 * for an undecodable protobuf envelope.
 */
static json_t *body_decode(const char *ctype, const char *body, size_t len,
			   char **dup, struct api_status *st)
{
	json_error_t je;
	json_t *j, *docs = NULL;
	struct err err = { "" };
	bool yaml = ctype && (strstr(ctype, "yaml") != NULL);

	if (dup)
		*dup = NULL;
	if (!len) {
		status_bad_request(st, "the body of the request was empty");
		return NULL;
	}
	if (protobuf_is_envelope(body, len)) {
		j = protobuf_decode(body, len, &err);
		if (!j)
			status_set(st, 415, "UnsupportedMediaType", NULL,
				   "%s", err.msg);
		return j;
	}
	j = json_loadb(body, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
		       &je);
	if (!j && json_error_code(&je) == json_error_duplicate_key) {
		if (dup)
			*dup = dup_key_of(&je);
		j = json_loadb(body, len, JSON_DECODE_ANY, &je);
	}
	if (j)
		return j;
	if (dup)
		FREE_AND_NULL(*dup);
	if (!yaml) {
		status_bad_request(st, "error decoding JSON: %s (line %d, "
				   "column %d)", je.text, je.line, je.column);
		return NULL;
	}
	if (yamljson_load_string(body, len, &docs, &err) < 0) {
		status_bad_request(st, "error converting YAML to JSON: %s",
				   err.msg);
		return NULL;
	}
	if (json_array_size(docs) != 1) {
		json_decref(docs);
		status_bad_request(st, "the body must hold exactly one object");
		return NULL;
	}
	j = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return j;
}

/*
 * The body of a POST, PUT or PATCH. Duplicate object keys are a strict
 * decoding error, as sigs.k8s.io/json reports them: fieldValidation
 * Strict refuses the body (400), Warn adds a Warning, Ignore lets the
 * last one win. A JSON patch is refused whatever fieldValidation says:
 * RFC 6902 section 4 wants exactly one "op" and one "path" (and "from")
 * per operation, and a duplicate anywhere makes the patch ambiguous.
 */
static json_t *decode_write_body(struct op *op, const char *ct,
				 bool is_json_patch, struct api_status *st)
{
	char *dup = NULL;
	json_t *b = body_decode(ct, op->req->body, op->req->body_len, &dup,
				st);

	if (!b || !dup)
		return b;
	if (is_json_patch) {
		status_bad_request(st, "error decoding patch: json patch "
				   "duplicate field \"%s\"", dup);
		json_decref(b);
		b = NULL;
	} else if (op->fv == FV_STRICT) {
		status_bad_request(st, "%s in version \"%s\" cannot be handled "
				   "as a %s: strict decoding error: duplicate "
				   "field \"%s\"", op->type->kind,
				   op->ver->name, op->type->kind, dup);
		json_decref(b);
		b = NULL;
	} else if (op->fv == FV_WARN) {
		api_op_warn(op, "duplicate field \"%s\"", dup);
	}
	free(dup);
	return b;
}

/* POST/PUT bodies: JSON (the default when no Content-Type is sent, as
 * NegotiateInputSerializer does), YAML or protobuf; anything else 415. */
static json_t *decode_req_body(struct op *op, struct api_status *st)
{
	const char *ct = http_header(op->req, "Content-Type");

	if (ct && *ct && !media_is(ct, "application/json") &&
	    !media_is(ct, "application/yaml") && !media_is(ct, "*/*") &&
	    !media_is(ct, PROTOBUF_CONTENT_TYPE)) {
		status_unsupported_media(st, "application/json, "
					 "application/yaml, "
					 PROTOBUF_CONTENT_TYPE);
		return NULL;
	}
	return decode_write_body(op, ct, false, st);
}

/* Copies key from the DeleteOptions body b into o when it has type
 * jtype (JSON_INTEGER, JSON_OBJECT, JSON_TRUE for a boolean, ...);
 * 400 on another type, as Go's decoder refuses it. */
static int copy_delete_field(json_t *o, const json_t *b, const char *key,
			     int jtype, struct api_status *st)
{
	json_t *v = json_object_get(b, key);
	bool ok;

	if (!v || json_is_null(v))
		return 0;
	ok = jtype == JSON_TRUE ? json_is_boolean(v)
				: (int)json_typeof(v) == jtype;
	if (!ok)
		return status_bad_request(st, "json: cannot unmarshal %s into "
			"Go struct field DeleteOptions.%s", json_is_string(v)
			? "string" : json_is_number(v) ? "number"
			: json_is_boolean(v) ? "bool" : json_is_array(v)
			? "array" : "object", key);
	json_object_set(o, key, v);
	return 0;
}

/*
 * DeleteOptions from the body (JSON, possibly empty) and the query,
 * normalised into *holder (new; kind/apiVersion meta.k8s.io/v1, Go's
 * field order), which is also what admission webhooks get as
 * request.options; d's strings point into it.
 */
static int delete_opts_parse(struct op *op, json_t **holder,
			     struct delete_opts *d, struct api_status *st)
{
	static const struct { const char *key; int type; } fields[] = {
		{ "gracePeriodSeconds", JSON_INTEGER },
		{ "preconditions", JSON_OBJECT },
		{ "orphanDependents", JSON_TRUE },
		{ "propagationPolicy", JSON_STRING },
		{ "dryRun", JSON_ARRAY },
	};
	const struct http_req *req = op->req;
	json_t *b = NULL, *o, *pre, *orph;
	const char *q;
	bool orphan;

	memset(d, 0, sizeof(*d));
	o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion",
		      "meta.k8s.io/v1");
	*holder = o;
	if (req->body_len) {
		b = body_decode(http_header(req, "Content-Type"), req->body,
				req->body_len, NULL, st);
		if (!b)
			return -1;
		if (!json_is_object(b)) {
			json_decref(b);
			return status_bad_request(st, "DeleteOptions must be "
						  "an object");
		}
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]);
		     i++)
			if (copy_delete_field(o, b, fields[i].key,
					      fields[i].type, st) < 0) {
				json_decref(b);
				return -1;
			}
		json_decref(b);
	}
	q = api_op_query(op, "gracePeriodSeconds");
	if (q && *q) {
		char *end;
		long long g = strtoll(q, &end, 10);

		if (*end)
			return status_bad_request(st, "gracePeriodSeconds: "
						  "invalid value \"%s\"", q);
		json_object_set_new(o, "gracePeriodSeconds", json_integer(g));
	}
	q = api_op_query(op, "orphanDependents");
	if (q && *q && api_parse_go_bool(q, &orphan) == 0)
		json_object_set_new(o, "orphanDependents",
				    json_boolean(orphan));
	q = api_op_query(op, "propagationPolicy");
	if (q && *q)
		json_object_set_new(o, "propagationPolicy", json_string(q));
	q = api_op_query(op, "dryRun"); /* its value is checked with the rest */
	if (q && *q)
		json_object_set_new(o, "dryRun", json_pack("[s]", q));
	if (json_array_size(json_object_get(o, "dryRun")))
		op->dry_run = true;
	d->propagation = json_string_value(json_object_get(o,
		"propagationPolicy"));
	orph = json_object_get(o, "orphanDependents");
	if (!d->propagation && json_is_boolean(orph))
		d->propagation = json_is_true(orph) ? "Orphan" : "Background";
	pre = json_object_get(o, "preconditions");
	d->pre_uid = json_string_value(json_object_get(pre, "uid"));
	d->pre_rv = json_string_value(json_object_get(pre,
		"resourceVersion"));
	d->options = o;
	if (d->propagation && strcmp(d->propagation, "Orphan") &&
	    strcmp(d->propagation, "Background") &&
	    strcmp(d->propagation, "Foreground"))
		return status_bad_request(st, "propagationPolicy: Unsupported "
			"value: \"%s\": supported values: \"Foreground\", "
			"\"Background\", \"Orphan\"", d->propagation);
	return 0;
}

static void verb_get(struct op *op, struct http_resp *resp, bool collection)
{
	struct list_opts lo;
	struct api_status st = API_STATUS_INIT;

	if (api_read_list_opts_parse(op, &lo, &st) < 0) {
		api_respond_status(op, resp, &st);
		return;
	}
	if (lo.watch && !*op->sub) {
		api_watch_serve(op, &lo, resp);
		return;
	}
	if (collection)
		api_read_list(op, &lo, resp);
	else
		api_read_get(op, resp);
}

static void verb_write(struct op *op, const struct http_req *req,
		       struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;
	struct media m;
	json_t *body = NULL, *out = NULL;
	int code = 200;
	int rc;

	if (api_media_negotiate(req, false, &m, &st) < 0 ||
	    parse_write_opts(op, &st) < 0)
		goto fail;
	if (!strcmp(req->method, "PATCH")) {
		const char *ct = http_header(req, "Content-Type");

		/* the type decides before the body is looked at */
		if (api_write_patch_ctype_check(op, ct ? ct : "", &st) < 0)
			goto fail;
		body = decode_write_body(op, ct, media_is(ct,
			"application/json-patch+json"), &st);
		if (!body)
			goto fail;
		rc = api_write_patch(op, ct, body, &out, &code, &st);
	} else {
		body = decode_req_body(op, &st);
		if (!body)
			goto fail;
		if (!strcmp(req->method, "POST")) {
			code = 201;
			rc = api_write_create(op, json_incref(body), &out, &st);
		} else {
			rc = api_write_update(op, json_incref(body), &out, &st);
		}
	}
	if (rc < 0)
		goto fail;
	json_decref(body);
	api_respond_json(op, resp, (unsigned)code,
			 api_read_render_media(op, &m, out, TABLE_OBJECT_METADATA),
			 m.ctype);
	return;
fail:
	json_decref(body);
	api_respond_status(op, resp, &st);
}

static void verb_delete(struct op *op, struct http_resp *resp,
			bool collection)
{
	struct api_status st = API_STATUS_INIT;
	struct delete_opts d;
	struct selectors sel;
	json_t *holder = NULL, *out = NULL;
	int rc;

	if (delete_opts_parse(op, &holder, &d, &st) < 0 ||
	    parse_write_opts(op, &st) < 0) {
		json_decref(holder);
		api_respond_status(op, resp, &st);
		return;
	}
	if (collection) {
		if (api_read_selectors_parse(op->type, api_op_query(op, "labelSelector"),
					     api_op_query(op, "fieldSelector"), &sel,
					     &st) < 0) {
			json_decref(holder);
			api_respond_status(op, resp, &st);
			return;
		}
		rc = api_write_delete_collection(op, &sel, &d, &out, &st);
		api_read_selectors_release(&sel);
	} else {
		rc = api_write_delete(op, &d, &out, &st);
	}
	json_decref(holder);
	if (rc < 0) {
		api_respond_status(op, resp, &st);
		return;
	}
	api_respond_json(op, resp, 200, out, NULL);
}

/*
 * /api/v1/... or /apis/<g>/<v>/...: seg are the segments after the
 * version. Parses like RequestInfoFactory: "namespaces/<x>/<more>" with
 * <more> not status/finalize names a namespaced resource in <x>.
 */
static void serve_resource(struct api *a, struct registry_snap *snap,
			   const struct http_req *req, struct http_resp *resp,
			   const char *group, const char *version,
			   char **seg, size_t nseg)
{
	const char *ns = NULL, *plural, *name = NULL, *sub = "";
	const struct rtype *t;
	const struct rversion *v;
	const char *m = req->method;
	struct api_status st = API_STATUS_INIT;
	struct op op;
	bool collection;

	if (nseg >= 3 && !strcmp(seg[0], "namespaces") &&
	    strcmp(seg[2], "status") && strcmp(seg[2], "finalize")) {
		ns = seg[1];
		seg += 2;
		nseg -= 2;
	}
	if (nseg > 3)
		goto not_found;
	plural = seg[0];
	name = nseg > 1 ? seg[1] : NULL;
	sub = nseg > 2 ? seg[2] : "";
	t = registry_find(snap, group, plural);
	v = t ? rtype_version(t, version) : NULL;
	if (!v || (ns && !t->namespaced) || (!ns && t->namespaced && name))
		goto not_found;
	if (*sub && !(!strcmp(sub, "status") && v->status) &&
	    !(!strcmp(sub, "finalize") && t->bi &&
	      (t->bi->flags & BI_FINALIZE)))
		goto not_found;
	if (name && !*name)
		goto not_found;
	collection = !name;
	api_op_init(&op, a, snap, t, v, ns, name, sub);
	op.req = req;
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD")) {
		if (!strcmp(sub, "finalize"))
			goto not_allowed;
		verb_get(&op, resp, collection);
	} else if (!strcmp(m, "POST")) {
		if (!collection || (t->namespaced && !ns))
			goto not_allowed;
		verb_write(&op, req, resp);
	} else if (!strcmp(m, "PUT") || !strcmp(m, "PATCH")) {
		/* finalize takes PUT only, like the real server */
		if (collection || (!strcmp(sub, "finalize") &&
				   !strcmp(m, "PATCH")))
			goto not_allowed;
		verb_write(&op, req, resp);
	} else if (!strcmp(m, "DELETE")) {
		if (*sub)
			goto not_allowed;
		verb_delete(&op, resp, collection);
	} else {
		goto not_allowed;
	}
	api_op_release(&op);
	return;
not_allowed:
	status_method_not_allowed(&st);
	api_respond_status(&op, resp, &st);
	api_op_release(&op);
	return;
not_found:
	serve_not_found(resp);
}

/* Splits path into segments (modifies buf). */
static size_t split_path(char *buf, char **seg, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(buf, "/", &save); t && n < max;
	     t = strtok_r(NULL, "/", &save))
		seg[n++] = t;
	return n;
}

/*
 * --fault-429 / --fault-500 before a request is served. Health probes
 * (kube-apiserver's priority and fairness exempts them) and the
 * devserver's own /debug/ endpoints get no faults; watches get only
 * their own (api_watch.c). True when resp holds the injected answer.
 */
static bool inject_before(struct api *a, bool exempt, struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;

	if (exempt)
		return false;
	if (fault_hit(a->faults, FAULT_429))
		status_too_many_requests(&st, 1);
	else if (fault_hit(a->faults, FAULT_500))
		status_internal(&st, "injected fault (cueue-devserver "
				"--fault-500)");
	else
		return false;
	api_respond_status(NULL, resp, &st);
	return true;
}

/* --fault-slow: holds the answer back (the request was served: a write
 * is done, its client only learns it late), waking for shutdown. */
static void inject_after(struct api *a, bool exempt)
{
	int64_t left;

	if (exempt || !fault_hit(a->faults, FAULT_SLOW))
		return;
	for (left = fault_slow_ms(a->faults);
	     left > 0 && !atomic_load(&a->stopping); left -= 50) {
		struct timespec d = { 0, (left < 50 ? left : 50) * 1000000L };

		nanosleep(&d, NULL);
	}
}

static bool is_watch_request(const struct http_req *req)
{
	const char *w = http_query(req, "watch");
	bool on = false;

	return w && api_parse_go_bool(w, &on) == 0 && on;
}

/* ---- aggregated APIs (kube-apiserver's aggregator) ---- */

#define PROXY_TIMEOUT_S 30

/*
 * A request under /apis/<group>/<version> that no local type serves goes
 * to the APIService "<version>.<group>" when it names a Service, as the
 * aggregator proxies it: GET only here (the visibility API is read-only),
 * the path and query as sent, the answer (status, Content-Type, body)
 * passed through; the backend verified against spec.caBundle unless
 * spec.insecureSkipTLSVerify. Returns false when no such APIService
 * exists (the caller answers 404).
 */
static bool serve_aggregated(struct api *a, const struct http_req *req,
			     struct http_resp *resp, const char *group,
			     const char *version)
{
	char *name = xasprintf("%s.%s", version, group);
	json_t *as = store_get(a->store, "apiregistration.k8s.io/apiservices",
			       "", name);
	const json_t *spec = json_object_get(as, "spec");
	const json_t *svc = json_object_get(spec, "service");
	struct api_status st = API_STATUS_INIT;
	struct webhook_proxy_answer ans;
	struct sbuf path = SBUF_INIT;
	struct err err = { "" };
	json_t *cc;

	free(name);
	if (!as || !json_is_object(svc)) {
		json_decref(as);
		return false;
	}
	if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
		json_decref(as);
		status_method_not_allowed(&st);
		api_respond_status(NULL, resp, &st);
		return true;
	}
	(void)sbuf_adds(&path, req->path);
	{
		char *q = http_query_string(req);

		(void)sbuf_adds(&path, q);
		free(q);
	}
	cc = json_pack("{s:O}", "service", svc);
	if (json_is_string(json_object_get(spec, "caBundle")))
		json_object_set(cc, "caBundle",
				json_object_get(spec, "caBundle"));
	if (webhook_client_proxy_get(a, cc, json_is_true(json_object_get(
					    spec, "insecureSkipTLSVerify")),
				     sbuf_cstr(&path), PROXY_TIMEOUT_S, &ans,
				     &err) < 0) {
		status_set(&st, 503, "ServiceUnavailable", NULL,
			   "error trying to reach service: %s", err.msg);
		api_respond_status(NULL, resp, &st);
	} else {
		size_t n = 0;
		char *body = sbuf_detach(&ans.body, &n);

		http_resp_set(resp, (unsigned)ans.code, ans.ctype, body, n);
		free(ans.ctype);
	}
	json_decref(cc);
	json_decref(as);
	sbuf_release(&path);
	return true;
}

void api_serve(void *ctx, const struct http_req *req, struct http_resp *resp)
{
	struct api *a = ctx;
	struct registry_snap *snap;
	char *buf = xstrdup(req->path);
	char *seg[16];
	size_t n = split_path(buf, seg, 16);
	bool exempt = n > 0 && (!strcmp(seg[0], "healthz") ||
				!strcmp(seg[0], "livez") ||
				!strcmp(seg[0], "readyz") ||
				!strcmp(seg[0], "debug"));

	if (!exempt && is_watch_request(req))
		exempt = true; /* watches: watch-drop and gone only */
	if (inject_before(a, exempt, resp)) {
		free(buf);
		return;
	}
	snap = registry_get(a->reg);
	if (n == 2 && !strcmp(seg[0], "debug") && !strcmp(seg[1], "faults")) {
		if (strcmp(req->method, "GET")) {
			struct api_status st = API_STATUS_INIT;

			status_method_not_allowed(&st);
			api_respond_status(NULL, resp, &st);
		} else {
			http_resp_json(resp, 200, fault_json(a->faults), NULL);
		}
	} else if (n == 0) {
		serve_root(snap, resp);
	} else if (!strcmp(seg[0], "version") && n == 1) {
		serve_text(resp, 200, "application/json", VERSION_JSON);
	} else if (!strcmp(seg[0], "healthz") || !strcmp(seg[0], "livez") ||
		   !strcmp(seg[0], "readyz")) {
		serve_text(resp, 200, "text/plain; charset=utf-8", "ok");
	} else if (!strcmp(seg[0], "openapi") && n == 2 &&
		   !strcmp(seg[1], "v2")) {
		serve_openapi_v2(req, resp);
	} else if (!strcmp(seg[0], "openapi") && n >= 2 &&
		   !strcmp(seg[1], "v3")) {
		const char *rest = req->path + strlen("/openapi/v3");

		while (*rest == '/')
			rest++;
		serve_openapi(snap, rest, resp);
	} else if (!strcmp(seg[0], "api")) {
		if (n == 1)
			serve_discovery(snap, req, resp, true);
		else if (n == 2 && registry_resource_list(snap, "", seg[1]))
			serve_text(resp, 200, "application/json",
				   registry_resource_list(snap, "", seg[1]));
		else if (n >= 3 && registry_serves_gv(snap, "", seg[1]))
			serve_resource(a, snap, req, resp, "", seg[1], seg + 2,
				       n - 2);
		else
			serve_not_found(resp);
	} else if (!strcmp(seg[0], "apis")) {
		if (n == 1)
			serve_discovery(snap, req, resp, false);
		else if (n == 2 && registry_api_group(snap, seg[1]))
			serve_text(resp, 200, "application/json",
				   registry_api_group(snap, seg[1]));
		else if (n == 3 && registry_resource_list(snap, seg[1], seg[2]))
			serve_text(resp, 200, "application/json",
				   registry_resource_list(snap, seg[1],
							  seg[2]));
		else if (n >= 4 && registry_serves_gv(snap, seg[1], seg[2]))
			serve_resource(a, snap, req, resp, seg[1], seg[2],
				       seg + 3, n - 3);
		else if (n < 3 || !serve_aggregated(a, req, resp, seg[1],
						    seg[2]))
			serve_not_found(resp);
	} else {
		serve_not_found(resp);
	}
	free(buf);
	registry_put(snap);
	inject_after(a, exempt);
}
