/*
 * api_internal: the write API without HTTP (api.h) for in-process
 * writers, the bootstrap objects every cluster has (the four default
 * namespaces), and --preload, which is `kubectl apply --server-side` of
 * manifest files through the same internal calls.
 *
 * Every function here builds a struct op from an api_ref and calls the
 * verb functions of api_read.c/api_write.c, so defaults, admission,
 * validation, finalizers and watch events are exactly those of the
 * HTTP verbs.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/yamljson.h"
#include "devserver/api_int.h"
#include "devserver/convert.h"
#include "devserver/store.h"
#include "model/svec.h"

static const char default_user[] = "cueue-devserver";

/* Sets up op for r; obj (may be NULL) may name the version through its
 * apiVersion. The caller releases op and the snapshot. */
static int internal_op(struct api *a, const struct api_ref *r,
		       const char *sub, const json_t *obj, struct op *op,
		       struct registry_snap **snap, struct api_status *st)
{
	const struct rtype *t;
	const struct rversion *v = NULL;
	const char *version = r->version;
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));

	*snap = registry_get(a->reg);
	t = registry_find(*snap, r->group ? r->group : "", r->resource);
	if (t && !version && av) {
		const char *slash = strchr(av, '/');

		if (slash && !strncmp(av, t->group, (size_t)(slash - av)) &&
		    strlen(t->group) == (size_t)(slash - av))
			version = slash + 1;
		else if (!slash && !*t->group)
			version = av;
	}
	if (t)
		v = version ? rtype_version(t, version) : rtype_preferred(t);
	if (!v) {
		registry_put(*snap);
		*snap = NULL;
		return status_path_not_found(st);
	}
	api_op_init(op, a, *snap, t, v, t->namespaced ? r->ns : "", r->name, sub);
	op->user = r->user ? r->user : default_user;
	op->field_manager = op->user;
	op->untracked = !strcmp(op->user, API_PRELOAD_USER);
	return 0;
}

static void done(struct op *op, struct registry_snap *snap)
{
	api_op_release(op);
	registry_put(snap);
}

json_t *api_internal_get(struct api *a, const struct api_ref *r,
			 struct api_status *st)
{
	struct registry_snap *snap;
	struct op op;
	json_t *stored, *obj = NULL;

	if (internal_op(a, r, "", NULL, &op, &snap, st) < 0)
		return NULL;
	stored = store_get(a->store, op.type->key, op.ns,
			   op.name ? op.name : "");
	if (!stored)
		status_not_found(st, op.type->group, op.type->plural,
				 op.name ? op.name : "");
	else
		obj = api_read_render_object(&op, stored, st);
	json_decref(stored);
	done(&op, snap);
	return obj;
}

int api_internal_list(struct api *a, const struct api_ref *r,
		      const char *label_selector, const char *field_selector,
		      json_t **items, uint64_t *rv, struct api_status *st)
{
	struct registry_snap *snap;
	struct selectors sel;
	struct op op;
	json_t *raw;
	uint64_t lrv;

	if (internal_op(a, r, "", NULL, &op, &snap, st) < 0)
		return -1;
	if (api_read_selectors_parse(op.type, label_selector, field_selector, &sel,
				     st) < 0) {
		done(&op, snap);
		return -1;
	}
	raw = api_read_matching(&op, &sel, &lrv);
	api_read_selectors_release(&sel);
	*items = convert_objects(a, op.type, raw, op.ver->name, st);
	json_decref(raw);
	if (rv)
		*rv = lrv;
	done(&op, snap);
	return *items ? 0 : -1;
}

static void give(json_t *obj, json_t **out)
{
	if (out)
		*out = obj;
	else
		json_decref(obj);
}

int api_internal_create(struct api *a, const struct api_ref *r,
			const json_t *obj, json_t **out,
			struct api_status *st)
{
	struct registry_snap *snap;
	struct op op;
	json_t *res = NULL;
	int rc;

	if (internal_op(a, r, "", obj, &op, &snap, st) < 0)
		return -1;
	rc = api_write_create(&op, json_deep_copy(obj), &res, st);
	if (rc == 0)
		give(res, out);
	done(&op, snap);
	return rc;
}

int api_internal_update(struct api *a, const struct api_ref *r,
			const char *sub, const json_t *obj, json_t **out,
			struct api_status *st)
{
	struct registry_snap *snap;
	struct op op;
	json_t *res = NULL;
	int rc;

	if (internal_op(a, r, sub, obj, &op, &snap, st) < 0)
		return -1;
	if (!op.name) {
		done(&op, snap);
		return status_method_not_allowed(st);
	}
	rc = api_write_update(&op, json_deep_copy(obj), &res, st);
	if (rc == 0)
		give(res, out);
	done(&op, snap);
	return rc;
}

int api_internal_patch(struct api *a, const struct api_ref *r,
		       const char *sub, enum api_patch_type type,
		       const json_t *patch, json_t **out,
		       struct api_status *st)
{
	static const char *const ctypes[] = {
		[API_PATCH_MERGE] = "application/merge-patch+json",
		[API_PATCH_JSON] = "application/json-patch+json",
		[API_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
		[API_PATCH_APPLY] = "application/apply-patch+yaml",
	};
	struct registry_snap *snap;
	struct op op;
	json_t *res = NULL;
	int code, rc;

	if (internal_op(a, r, sub, type == API_PATCH_APPLY ? patch : NULL,
			&op, &snap, st) < 0)
		return -1;
	if (!op.name) {
		done(&op, snap);
		return status_method_not_allowed(st);
	}
	rc = api_write_patch(&op, ctypes[type], patch, &res, &code, st);
	if (rc == 0)
		give(res, out);
	done(&op, snap);
	return rc;
}

int api_internal_delete(struct api *a, const struct api_ref *r,
			const char *propagation, json_t **out,
			struct api_status *st)
{
	struct registry_snap *snap;
	struct delete_opts d = { .propagation = propagation };
	struct op op;
	json_t *res = NULL;
	int rc;

	if (internal_op(a, r, "", NULL, &op, &snap, st) < 0)
		return -1;
	if (!op.name) {
		done(&op, snap);
		return status_method_not_allowed(st);
	}
	rc = api_write_delete(&op, &d, &res, st);
	if (rc == 0) {
		const char *k = json_string_value(json_object_get(res, "kind"));

		if (k && !strcmp(k, "Status")) {
			json_decref(res);
			res = NULL;
		}
		give(res, out);
	}
	done(&op, snap);
	return rc;
}

/* ---- bootstrap ---- */

int api_internal_bootstrap(struct api *a, struct err *err)
{
	static const char *const names[] = { "default", "kube-system",
					     "kube-public", "kube-node-lease",
					     NULL };

	for (size_t i = 0; names[i]; i++) {
		struct api_ref r = { .group = "", .resource = "namespaces",
				     .name = names[i] };
		struct api_status st = API_STATUS_INIT;
		json_t *ns = api_internal_get(a, &r, &st);
		json_t *obj;

		status_release(&st);
		if (ns) {
			json_decref(ns);
			continue;
		}
		obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
				"kind", "Namespace", "metadata", "name",
				names[i]);
		if (api_internal_create(a, &r, obj, NULL, &st) < 0) {
			err_set(err, "cannot create namespace %s: %s", names[i],
				st.message ? st.message : "");
			status_release(&st);
			json_decref(obj);
			return -1;
		}
		json_decref(obj);
	}
	return 0;
}

/* ---- --preload ---- */

struct pending {
	json_t *doc;      /* owned */
	char *file;       /* owned */
	size_t line;
};

struct plist {
	struct pending *v;
	size_t n;
	size_t cap;
};

static void plist_add(struct plist *l, json_t *doc, const char *file,
		      size_t line)
{
	XGROW(l->v, l->cap, l->n + 1);
	l->v[l->n].doc = json_incref(doc);
	l->v[l->n].file = xstrdup(file);
	l->v[l->n].line = line;
	l->n++;
}

static void plist_release(struct plist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		json_decref(l->v[i].doc);
		free(l->v[i].file);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int load_file(const char *file, struct plist *l, struct err *err)
{
	json_t *docs, *d;
	size_t *lines = NULL, i;

	if (yamljson_load_file_lines(file, &docs, &lines, err) < 0)
		return -1;
	json_array_foreach(docs, i, d) {
		const char *k = json_string_value(json_object_get(d, "kind"));
		json_t *items = json_object_get(d, "items");

		if (k && strlen(k) > 4 && !strcmp(k + strlen(k) - 4, "List") &&
		    json_is_array(items)) {
			size_t j;
			json_t *it;

			json_array_foreach(items, j, it)
				plist_add(l, it, file, lines ? lines[i] : 0);
		} else {
			plist_add(l, d, file, lines ? lines[i] : 0);
		}
	}
	free(lines);
	json_decref(docs);
	return 0;
}

static bool manifest_name(const char *n)
{
	size_t l = strlen(n);

	return (l > 5 && !strcmp(n + l - 5, ".yaml")) ||
	       (l > 4 && !strcmp(n + l - 4, ".yml")) ||
	       (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int load_path(const char *path, struct plist *l, struct err *err)
{
	struct stat sb;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (stat(path, &sb) < 0)
		return err_set(err, "%s: cannot read", path);
	if (!S_ISDIR(sb.st_mode))
		return load_file(path, l, err);
	d = opendir(path);
	if (!d)
		return err_set(err, "%s: cannot open directory", path);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && manifest_name(e->d_name)) {
			XGROW(names, cap, n + 1);
			names[n++] = xasprintf("%s/%s", path, e->d_name);
		}
	closedir(d);
	qsort(names, n, sizeof(*names), svec_cmp);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = load_file(names[i], l, err);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

enum apply_rc { APPLY_OK, APPLY_UNKNOWN, APPLY_FAILED };

/* True when the object came from an earlier run (restored from the data
 * dir), so --preload must leave it as it is. */
static bool is_restored(struct api *a, const struct rtype *t, const char *ns,
			const char *name)
{
	json_t *cur = store_get(a->store, t->key, ns, name);
	uint64_t rv = 0;
	bool old;

	if (!cur)
		return false;
	old = api_parse_rv(json_string_value(json_object_get(
		json_object_get(cur, "metadata"), "resourceVersion")),
		&rv) == 0 && rv <= a->restored_rv;
	json_decref(cur);
	return old;
}

/*
 * Applies one document: creates its object, or, when an object of this
 * run has its name, merges into it (server-side apply), so later
 * documents of the preloads refine earlier ones. An object restored from
 * the data dir is left as it is: others may have changed it since it was
 * preloaded (the manager patches the caBundle of webhook configurations
 * and CRDs), and a restart must not undo that. For the same reason a
 * document without a name (generateName) is created only when the store
 * started empty.
 */
static enum apply_rc apply_doc(struct api *a, const json_t *doc,
			       struct api_status *st)
{
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const json_t *m = json_object_get(doc, "metadata");
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *ns = json_string_value(json_object_get(m, "namespace"));
	struct registry_snap *snap;
	const struct rtype *t;
	char group[256] = "";
	const char *slash;
	struct api_ref r = { .user = API_PRELOAD_USER };
	int rc;

	if (!av || !kind) {
		status_bad_request(st, "apiVersion and kind are required");
		return APPLY_FAILED;
	}
	slash = strchr(av, '/');
	if (slash)
		snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
	snap = registry_get(a->reg);
	t = registry_find_kind(snap, group, kind);
	if (!t || !rtype_version(t, slash ? slash + 1 : av)) {
		registry_put(snap);
		return APPLY_UNKNOWN;
	}
	r.group = t->group;
	r.version = slash ? slash + 1 : av;
	r.resource = t->plural;
	r.ns = t->namespaced ? (ns && *ns ? ns : "default") : "";
	r.name = name;
	if (!name || !*name)
		rc = a->restored_rv ? 0
				    : api_internal_create(a, &r, doc, NULL, st);
	else if (is_restored(a, t, r.ns, name))
		rc = 0;
	else
		rc = api_internal_patch(a, &r, "", API_PATCH_APPLY, doc, NULL,
					st);
	registry_put(snap);
	return rc < 0 ? APPLY_FAILED : APPLY_OK;
}

int api_preload(struct api *a, const char *path, struct err *err)
{
	struct plist todo = { 0 };
	bool progress = true;
	int rc = 0;

	if (load_path(path, &todo, err) < 0) {
		plist_release(&todo);
		return -1;
	}
	while (todo.n && progress && rc == 0) {
		struct plist later = { 0 };

		progress = false;
		for (size_t i = 0; i < todo.n && rc == 0; i++) {
			struct pending *p = &todo.v[i];
			struct api_status st = API_STATUS_INIT;
			enum apply_rc ar = apply_doc(a, p->doc, &st);

			if (ar == APPLY_OK) {
				progress = true;
			} else if (ar == APPLY_UNKNOWN) {
				plist_add(&later, p->doc, p->file, p->line);
			} else {
				const char *n = json_string_value(
					json_object_get(json_object_get(p->doc,
						"metadata"), "name"));

				rc = err_set(err, "%s: document at line %zu "
					     "(%s %s): %s", p->file, p->line,
					     json_string_value(json_object_get(
						     p->doc, "kind")),
					     n ? n : "", st.message ? st.message
								    : "");
			}
			status_release(&st);
		}
		plist_release(&todo);
		todo = later;
	}
	if (rc == 0 && todo.n) {
		struct pending *p = &todo.v[0];

		rc = err_set(err, "%s: document at line %zu: no resource type "
			     "for apiVersion %s, kind %s", p->file, p->line,
			     json_string_value(json_object_get(p->doc,
							       "apiVersion")),
			     json_string_value(json_object_get(p->doc,
							       "kind")));
	}
	plist_release(&todo);
	return rc;
}
