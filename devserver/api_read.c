/*
 * api_read: GET of one object and LIST (§6.1, §6.2): label and field
 * selectors (§10.1, §10.2), limit/continue with opaque tokens, the
 * resourceVersion/resourceVersionMatch rules, and the three answer forms
 * (JSON, Table, PartialObjectMetadata).
 *
 * Lists are served from the current state; "not older than" always
 * holds, Exact reads of an RV the store no longer has answer 410, and an
 * RV from the future waits up to 3 s before 504. A list split in pages is
 * served from the first page's snapshot, as the real server's is (see
 * "list snapshots" below).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "devserver/api_int.h"
#include "devserver/builtin.h"
#include "devserver/convert.h"
#include "devserver/store.h"
#include "model/smap.h"

/* ---- selectors ---- */

/* Splits s at unescaped c; returns the pieces as a new NULL-terminated
 * array of new strings, with \\, \, and \= unescaped when unescape. */
static char **split_escaped(const char *s, char c, size_t *n)
{
	char **v = xcalloc(strlen(s) + 2, sizeof(*v));
	char *cur = xmalloc(strlen(s) + 1);
	size_t o = 0;

	*n = 0;
	for (const char *p = s;; p++) {
		if (*p == '\\' && p[1]) {
			cur[o++] = *p++;
			cur[o++] = *p;
			continue;
		}
		if (*p == c || !*p) {
			cur[o] = '\0';
			v[(*n)++] = xstrdup(cur);
			o = 0;
			if (!*p)
				break;
			continue;
		}
		cur[o++] = *p;
	}
	free(cur);
	return v;
}

static char *unescape_value(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *w = out;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*w++ = *s;
	}
	*w = '\0';
	return out;
}

static const char *field_path(const struct rtype *t, const char *f)
{
	if (!strcmp(f, "metadata.name"))
		return "metadata.name";
	if (!strcmp(f, "metadata.namespace") && t->namespaced)
		return "metadata.namespace";
	for (const struct builtin_field *bf = t->bi ? t->bi->fields : NULL;
	     bf && bf->name; bf++)
		if (!strcmp(bf->name, f))
			return bf->path;
	return NULL;
}

static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && (s[n - 1] == ' '))
		s[--n] = '\0';
	while (s[i] == ' ')
		i++;
	memmove(s, s + i, n - i + 1);
}

int api_read_selectors_parse(const struct rtype *t, const char *lsel,
			     const char *fsel, struct selectors *out,
			     struct api_status *st)
{
	struct err err = { "" };
	char **terms;
	size_t n;

	memset(out, 0, sizeof(*out));
	label_selector_init(&out->labels);
	if (lsel && *lsel &&
	    label_selector_parse(lsel, &out->labels, &err) < 0) {
		api_read_selectors_release(out);
		return status_bad_request(st, "unable to parse requirement: %s",
					  err.msg);
	}
	if (!fsel || !*fsel)
		return 0;
	terms = split_escaped(fsel, ',', &n);
	out->fields = xcalloc(n, sizeof(*out->fields));
	for (size_t i = 0; i < n; i++) {
		struct field_req *r = &out->fields[out->nfields];
		char *term = terms[i], *op = NULL, *val;
		size_t oplen = 1;

		trim(term);
		if (!*term)
			continue;
		for (char *p = term; *p; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				continue;
			}
			if (p[0] == '!' && p[1] == '=') {
				op = p;
				oplen = 2;
				r->neq = true;
				break;
			}
			if (p[0] == '=') {
				op = p;
				oplen = p[1] == '=' ? 2 : 1;
				break;
			}
		}
		if (!op) {
			status_bad_request(st, "invalid selector: '%s'; can't "
					   "understand '%s'", fsel, term);
			goto fail;
		}
		*op = '\0';
		val = op + oplen;
		trim(term);
		trim(val);
		r->path = field_path(t, term);
		if (!r->path) {
			status_bad_request(st, "field label not supported: %s",
					   term);
			goto fail;
		}
		r->field = xstrdup(term);
		r->value = unescape_value(val);
		out->nfields++;
	}
	for (size_t i = 0; i < n; i++)
		free(terms[i]);
	free(terms);
	return 0;
fail:
	for (size_t i = 0; i < n; i++)
		free(terms[i]);
	free(terms);
	api_read_selectors_release(out);
	return -1;
}

void api_read_selectors_release(struct selectors *s)
{
	label_selector_release(&s->labels);
	for (size_t i = 0; i < s->nfields; i++) {
		free(s->fields[i].field);
		free(s->fields[i].value);
	}
	free(s->fields);
	s->fields = NULL;
	s->nfields = 0;
}

bool api_read_selectors_match(const struct selectors *s, const json_t *obj)
{
	for (size_t i = 0; i < s->nfields; i++) {
		char *v = builtin_field_value(obj, s->fields[i].path);
		bool eq = !strcmp(v, s->fields[i].value);

		free(v);
		if (eq == s->fields[i].neq)
			return false;
	}
	if (s->labels.n) {
		struct smap m = SMAP_INIT;
		const json_t *labels = json_object_get(
			json_object_get(obj, "metadata"), "labels");
		const char *k;
		json_t *v;
		bool ok;

		json_object_foreach((json_t *)labels, k, v)
			if (json_is_string(v))
				smap_set(&m, k, json_string_value(v));
		ok = label_selector_matches(&s->labels, &m);
		smap_release(&m);
		return ok;
	}
	return true;
}

static bool filter_cb(void *ctx, const json_t *obj)
{
	return api_read_selectors_match(ctx, obj);
}

/* ---- list options ---- */

int api_read_list_opts_parse(const struct op *op, struct list_opts *o,
			     struct api_status *st)
{
	const char *q;
	bool b;

	memset(o, 0, sizeof(*o));
	o->timeout_s = -1;
	o->send_initial = -1;
	o->lsel = api_op_query(op, "labelSelector");
	o->fsel = api_op_query(op, "fieldSelector");
	o->cont = api_op_query(op, "continue");
	o->rv = api_op_query(op, "resourceVersion");
	o->rvm = api_op_query(op, "resourceVersionMatch");
	if (o->cont && !*o->cont)
		o->cont = NULL;
	if (o->rv && !*o->rv)
		o->rv = NULL;
	if (o->rvm && !*o->rvm)
		o->rvm = NULL;
	q = api_op_query(op, "limit");
	if (q && *q) {
		char *end;
		long long v = strtoll(q, &end, 10);

		if (*end)
			return status_bad_request(st, "limit: invalid value "
						  "\"%s\"", q);
		o->limit = v > 0 ? (size_t)v : 0;
	}
	q = api_op_query(op, "timeoutSeconds");
	if (q && *q) {
		char *end;
		long v = strtol(q, &end, 10);

		if (*end || v < 0)
			return status_bad_request(st, "timeoutSeconds: invalid "
						  "value \"%s\"", q);
		/* a year is forever for a watch; keeps ms arithmetic sane */
		o->timeout_s = v > WATCH_MAX_TIMEOUT_S ? WATCH_MAX_TIMEOUT_S : v;
	}
	static const char *const bools[] = { "watch", "allowWatchBookmarks",
					     "sendInitialEvents" };
	for (size_t i = 0; i < 3; i++) {
		q = api_op_query(op, bools[i]);
		if (!q || !*q)
			continue;
		if (api_parse_go_bool(q, &b) < 0)
			return status_bad_request(st, "%s: invalid value "
				"\"%s\": strconv.ParseBool: parsing \"%s\": "
				"invalid syntax", bools[i], q, q);
		if (i == 0)
			o->watch = b;
		else if (i == 1)
			o->bookmarks = b;
		else
			o->send_initial = b;
	}
	o->include = TABLE_OBJECT_METADATA;
	q = api_op_query(op, "includeObject");
	if (q && !strcmp(q, "Object"))
		o->include = TABLE_OBJECT_FULL;
	else if (q && !strcmp(q, "None"))
		o->include = TABLE_OBJECT_NONE;
	return 0;
}

/* ---- rendering ---- */

json_t *api_read_render_object(struct op *op, const json_t *stored,
			       struct api_status *st)
{
	return convert_object(op->api, op->type, stored, op->ver->name, st);
}

static const char *printer(const struct op *op)
{
	return op->type->bi ? op->type->bi->printer : NULL;
}

static json_t *partial(const json_t *obj)
{
	return json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata",
			 "apiVersion", "meta.k8s.io/v1", "metadata",
			 json_object_get(obj, "metadata"));
}

json_t *api_read_render_media(struct op *op, const struct media *m, json_t *obj,
			      enum table_object inc)
{
	json_t *items, *meta, *t;
	const char *rv;

	if (m->kind == MEDIA_JSON || !json_is_object(obj) ||
	    !strcmp(json_string_value(json_object_get(obj, "kind")) ?
		    json_string_value(json_object_get(obj, "kind")) : "",
		    "Status"))
		return obj;
	if (m->kind == MEDIA_PARTIAL) {
		t = partial(obj);
		json_decref(obj);
		return t;
	}
	items = json_pack("[O]", obj);
	meta = json_object();
	rv = json_string_value(json_object_get(json_object_get(obj,
		"metadata"), "resourceVersion"));
	if (rv)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	t = table_build(items, op->ver->columns, printer(op), inc, true, meta,
			op->now_ms);
	json_decref(items);
	json_decref(meta);
	json_decref(obj);
	return t;
}

/* ---- GET ---- */

void api_read_get(struct op *op, struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;
	struct media m;
	json_t *stored, *obj;
	const char *inc = api_op_query(op, "includeObject");
	enum table_object ti = TABLE_OBJECT_METADATA;

	if (api_media_negotiate(op->req, false, &m, &st) < 0)
		goto fail;
	stored = store_get(op->api->store, op->type->key, op->ns, op->name);
	if (!stored) {
		status_not_found(&st, op->type->group, op->type->plural,
				 op->name);
		goto fail;
	}
	obj = api_read_render_object(op, stored, &st);
	json_decref(stored);
	if (!obj)
		goto fail;
	if (inc && !strcmp(inc, "Object"))
		ti = TABLE_OBJECT_FULL;
	else if (inc && !strcmp(inc, "None"))
		ti = TABLE_OBJECT_NONE;
	api_respond_json(op, resp, 200,
			 api_read_render_media(op, &m, obj, ti), m.ctype);
	return;
fail:
	api_respond_status(op, resp, &st);
}

/* ---- continue tokens: unpadded base64url(JSON {"v","rv","start"}), as
 * Kubernetes' RawURLEncoding ---- */

static char *token_make(uint64_t rv, const char *start, uint64_t snap,
			size_t off)
{
	json_t *j = json_pack("{s:s, s:I, s:s, s:I, s:I}", "v",
			      "meta.k8s.io/v1", "rv", (json_int_t)rv, "start",
			      start, "snap", (json_int_t)snap, "off",
			      (json_int_t)off);
	char *s = json_dumps(j, JSON_COMPACT), *t;

	json_decref(j);
	t = b64_encode(s, strlen(s), B64_URL | B64_NOPAD);
	free(s);
	return t;
}

/* Returns the "ns/name" to continue after (new) and sets *snap_rv to the
 * list's snapshot resourceVersion, *snap and *off to its snapshot and
 * offset (0 when absent), or NULL + st. */
static char *token_parse(const char *tok, uint64_t *snap_rv, uint64_t *snap,
			 size_t *off, struct api_status *st)
{
	size_t n;
	char *raw = (char *)b64_decode(tok, strlen(tok), B64_URL | B64_NOPAD,
				       &n, NULL);
	json_t *j = raw ? json_loads(raw, 0, NULL) : NULL;
	const char *start = json_string_value(json_object_get(j, "start"));
	char *out = NULL;

	if (!start || !json_is_integer(json_object_get(j, "rv")))
		status_bad_request(st, "continue key is not valid: incorrect "
				   "encoded start resourceVersion (version "
				   "meta.k8s.io/v1)");
	else {
		out = xstrdup(start);
		*snap_rv = (uint64_t)json_integer_value(json_object_get(j, "rv"));
		*snap = (uint64_t)json_integer_value(json_object_get(j, "snap"));
		*off = (size_t)json_integer_value(json_object_get(j, "off"));
	}
	json_decref(j);
	free(raw);
	return out;
}

/* ---- list snapshots ---- */

/*
 * The real server serves every page of a list from the first page's
 * snapshot and reports that snapshot's resourceVersion on each, so a
 * client that lists page by page and then watches from that version sees
 * every change exactly once. This store keeps one version of each object,
 * so a list that does not fit its first page keeps the whole filtered
 * result (references to the stored objects, which are immutable) for
 * SNAP_TTL_MS; its continue tokens name that snapshot and an offset into
 * it. At most SNAP_MAX snapshots live (the oldest goes first), shared by
 * every devserver of the process under one leaf mutex. A token whose
 * snapshot is gone is served from the current state after its start key,
 * still reporting the snapshot's resourceVersion (k8s-api.md: acceptable);
 * a client then sees some changes twice, in order, but never misses one.
 */
#define SNAP_MAX 8
#define SNAP_TTL_MS 60000

struct list_snap {
	uint64_t id;        /* 0: free slot */
	int64_t born_ms;
	const struct store *store;
	char *key;          /* resource, namespace and selectors */
	json_t *items;      /* the whole filtered list */
};

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_snap snaps[SNAP_MAX]; /* under snap_lock */
static uint64_t snap_last_id;            /* under snap_lock */

static char *snap_key(const struct op *op, const struct list_opts *lo)
{
	return xasprintf("%s\n%s\n%s\n%s", op->type->key,
			 op->ns ? op->ns : "", lo->lsel ? lo->lsel : "",
			 lo->fsel ? lo->fsel : "");
}

static void snap_clear(struct list_snap *s)
{
	json_decref(s->items);
	free(s->key);
	memset(s, 0, sizeof(*s));
}

/* Keeps items (reference taken over); returns the snapshot's id. */
static uint64_t snap_put(const struct store *st, char *key, json_t *items,
			 int64_t now)
{
	struct list_snap *slot = &snaps[0];
	uint64_t id;

	pthread_mutex_lock(&snap_lock);
	for (size_t i = 0; i < SNAP_MAX; i++) {
		if (snaps[i].id && now - snaps[i].born_ms > SNAP_TTL_MS)
			snap_clear(&snaps[i]);
		if (!snaps[i].id || (slot->id &&
				     snaps[i].born_ms < slot->born_ms))
			slot = &snaps[i];
	}
	snap_clear(slot);
	id = ++snap_last_id;
	*slot = (struct list_snap){ .id = id, .born_ms = now, .store = st,
				    .key = key, .items = items };
	pthread_mutex_unlock(&snap_lock);
	return id;
}

/* Items [off, off + limit) of snapshot id (a new array of references),
 * and *total; NULL when the snapshot is gone or is another list's. */
static json_t *snap_slice(const struct store *st, const char *key,
			  uint64_t id, size_t off, size_t limit, size_t *total,
			  int64_t now)
{
	json_t *out = NULL;

	pthread_mutex_lock(&snap_lock);
	for (size_t i = 0; i < SNAP_MAX; i++) {
		struct list_snap *s = &snaps[i];
		size_t n;

		if (s->id != id || s->store != st || strcmp(s->key, key) ||
		    now - s->born_ms > SNAP_TTL_MS)
			continue;
		n = json_array_size(s->items);
		if (off > n)
			break;
		out = json_array();
		for (size_t k = off; k < n && k - off < limit; k++)
			json_array_append(out, json_array_get(s->items, k));
		*total = n;
		break;
	}
	pthread_mutex_unlock(&snap_lock);
	return out;
}

/* The store key ("ns/name", "/name") of a listed object. */
static char *item_key(const json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	return xasprintf("%s/%s", ns ? ns : "", name ? name : "");
}

/* ---- LIST ---- */

/* True when the store no longer has the events after rv. */
static bool rv_compacted(struct store *s, uint64_t rv)
{
	struct store_event ev;
	uint64_t cursor = rv;
	enum store_rc rc = store_next_event(s, &cursor, NULL, 0, &ev);

	if (rc == STORE_OK)
		store_event_release(&ev);
	return rc == STORE_GONE;
}

/* Waits up to 3 s for the store to reach rv; -1 + 504 when it does not. */
static int wait_for_rv(struct store *s, uint64_t rv, struct api_status *st)
{
	for (int i = 0; i < 30 && store_rv(s) < rv; i++) {
		struct store_event ev;
		uint64_t cursor = store_rv(s);

		if (store_next_event(s, &cursor, NULL, 100, &ev) == STORE_OK)
			store_event_release(&ev);
	}
	if (store_rv(s) < rv)
		return status_too_large_rv(st, (unsigned long long)rv,
					   (unsigned long long)store_rv(s));
	return 0;
}

/* The resourceVersion rules of §6.2 that can fail. */
static int check_list_rv(struct op *op, const struct list_opts *lo,
			 struct api_status *st)
{
	uint64_t rv = 0;
	bool has_rv = lo->rv != NULL, zero = lo->rv && !strcmp(lo->rv, "0");

	if (has_rv && api_parse_rv(lo->rv, &rv) < 0)
		return status_bad_request(st, "invalid resource version: %s",
					  lo->rv);
	if (lo->rvm) {
		if (strcmp(lo->rvm, "Exact") && strcmp(lo->rvm, "NotOlderThan"))
			return status_bad_request(st, "resourceVersionMatch: "
				"Unsupported value: \"%s\": supported values: "
				"\"Exact\", \"NotOlderThan\"", lo->rvm);
		if (!has_rv)
			return status_bad_request(st, "resourceVersionMatch is "
				"forbidden unless resourceVersion is provided");
		if (lo->cont)
			return status_bad_request(st, "resourceVersionMatch is "
				"forbidden when continue is provided");
		if (!strcmp(lo->rvm, "Exact") && zero)
			return status_bad_request(st, "resourceVersionMatch "
				"\"exact\" is forbidden for resourceVersion "
				"\"0\"");
	}
	if (lo->cont && has_rv && !zero)
		return status_bad_request(st, "specifying resource version is "
			"not allowed when using continue");
	if (!has_rv || zero)
		return 0;
	if (rv > store_rv(op->api->store))
		return wait_for_rv(op->api->store, rv, st);
	if (((lo->limit && !lo->rvm) || (lo->rvm && !strcmp(lo->rvm, "Exact")))
	    && rv_compacted(op->api->store, rv))
		return status_expired(st, (unsigned long long)rv,
				      (unsigned long long)store_rv(
					      op->api->store));
	return 0;
}

json_t *api_read_matching(struct op *op, const struct selectors *sel,
			  uint64_t *rv)
{
	struct store_list_opts o = {
		.ns = op->ns, .filter = filter_cb, .ctx = (void *)sel,
	};
	struct store_list_result r;
	json_t *items;

	store_list(op->api->store, op->type->key, &o, &r);
	items = json_incref(r.items);
	*rv = r.rv;
	store_list_result_release(&r);
	return items;
}

/* Built-in lists carry no per-item apiVersion/kind in the real server. */
static json_t *drop_type_meta(json_t *items)
{
	json_t *out = json_array(), *o;
	size_t i;

	json_array_foreach(items, i, o) {
		json_t *c = json_copy(o);

		json_object_del(c, "apiVersion");
		json_object_del(c, "kind");
		json_array_append_new(out, c);
	}
	json_decref(items);
	return out;
}

void api_read_list(struct op *op, const struct list_opts *lo,
		   struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;
	struct selectors sel;
	struct store_list_result r;
	struct store_list_opts o = { .ns = op->ns, .limit = lo->limit };
	struct media m;
	json_t *items, *meta, *out;
	char *after = NULL, *skey = NULL, *next = NULL;
	char av[300], rvb[32];
	uint64_t snap_rv = 0, snap = 0;
	size_t off = 0, total = 0, remaining = 0;
	json_t *page = NULL;

	if (api_media_negotiate(op->req, true, &m, &st) < 0 ||
	    check_list_rv(op, lo, &st) < 0)
		goto fail;
	if (lo->cont) {
		after = token_parse(lo->cont, &snap_rv, &snap, &off, &st);
		if (!after)
			goto fail;
	}
	if (api_read_selectors_parse(op->type, lo->lsel, lo->fsel, &sel, &st) < 0) {
		free(after);
		goto fail;
	}
	o.after = after;
	o.filter = filter_cb;
	o.ctx = &sel;
	if (lo->limit)
		skey = snap_key(op, lo);
	if (lo->limit && snap)
		page = snap_slice(op->api->store, skey, snap, off, lo->limit,
				  &total, op->now_ms);
	if (lo->limit && !lo->cont) {
		/* the first page: the whole list, kept when it does not fit */
		o.limit = 0;
		store_list(op->api->store, op->type->key, &o, &r);
		snap_rv = r.rv;
		total = json_array_size(r.items);
		if (total > lo->limit) {
			snap = snap_put(op->api->store, skey,
					json_incref(r.items), op->now_ms);
			skey = NULL;
			page = json_array();
			for (size_t k = 0; k < lo->limit; k++)
				json_array_append(page,
						  json_array_get(r.items, k));
		} else {
			page = json_incref(r.items);
		}
		store_list_result_release(&r);
	}
	if (page) {
		off += json_array_size(page);
		remaining = total - off;
		if (remaining)
			next = item_key(json_array_get(
				page, json_array_size(page) - 1));
	} else {
		/* no limit, or the token's snapshot is gone: current state */
		store_list(op->api->store, op->type->key, &o, &r);
		page = json_incref(r.items);
		if (!snap_rv)
			snap_rv = r.rv;
		snap = 0;
		off = 0;
		remaining = r.remaining;
		next = r.next ? xstrdup(r.next) : NULL;
		store_list_result_release(&r);
	}
	api_read_selectors_release(&sel);
	free(after);
	free(skey);
	items = convert_objects(op->api, op->type, page, op->ver->name, &st);
	json_decref(page);
	if (!items) {
		free(next);
		goto fail;
	}
	meta = json_object();
	snprintf(rvb, sizeof(rvb), "%llu", (unsigned long long)snap_rv);
	json_object_set_new(meta, "resourceVersion", json_string(rvb));
	if (next && lo->limit) {
		char *tok = token_make(snap_rv, next, snap, off);

		json_object_set_new(meta, "continue", json_string(tok));
		json_object_set_new(meta, "remainingItemCount",
				    json_integer((json_int_t)remaining));
		free(tok);
	}
	free(next);
	if (m.kind == MEDIA_TABLE) {
		out = table_build(items, op->ver->columns, printer(op),
				  lo->include, true, meta, op->now_ms);
		json_decref(items);
		json_decref(meta);
	} else if (m.kind == MEDIA_PARTIAL) {
		json_t *p = json_array(), *it;
		size_t i;

		json_array_foreach(items, i, it)
			json_array_append_new(p, partial(it));
		json_decref(items);
		out = json_pack("{s:s, s:s, s:o, s:o}", "kind",
				"PartialObjectMetadataList", "apiVersion",
				"meta.k8s.io/v1", "metadata", meta, "items", p);
	} else {
		if (op->type->bi)
			items = drop_type_meta(items);
		out = json_pack("{s:s, s:s, s:o, s:o}", "kind",
				op->type->list_kind, "apiVersion",
				api_op_version(op, av, sizeof(av)), "metadata",
				meta, "items", items);
	}
	api_respond_json(op, resp, 200, out, m.ctype);
	return;
fail:
	api_respond_status(op, resp, &st);
}
