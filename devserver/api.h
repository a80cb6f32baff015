/*
 * api: the Kubernetes REST API of cueue-devserver (k8s-api.md is the
 * contract): routing, discovery and OpenAPI, get/list/watch, the write
 * path shared by create/update/patch/delete, and an internal write API
 * with the same semantics for in-process controllers.
 *
 * It owns the store (store.h) and the type registry (registry.h). HTTP
 * requests arrive through api_serve (an http_handler_fn); everything a
 * request needs is taken from one registry snapshot reference and the
 * store, so requests run concurrently on connection threads without any
 * lock of this module.
 *
 * Seams for the helpers that come later:
 *  - admission webhooks: admission.c only (admission.h); it reads the
 *    webhook configurations with api_internal_list and resolves
 *    clientConfig.service with api_service_endpoints.
 *  - conversion webhooks: convert.c only (convert.h).
 *  - garbage collection and namespace lifecycle (gc.c): a thread that
 *    follows the store's event log (store_next_event on api_store) and
 *    acts through api_internal_delete / api_internal_update (subresource
 *    "finalize" for namespaces). With api_opts.propagation_finalizers set
 *    the write path adds the orphan / foregroundDeletion finalizers of
 *    propagationPolicy, which gc.c must then remove.
 *  - the job runner (jobrunner.c): follows Jobs the same way and writes
 *    Pods and Job status with api_internal_create and
 *    api_internal_update (subresource "status"); api_job_runtime_ms is
 *    the --job-runtime value.
 */
#ifndef DEVSERVER_API_H
#define DEVSERVER_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devserver/http.h"
#include "devserver/status.h"
#include "model/errors.h"

struct store;
struct fault_opts;
struct faults;

/* --service-endpoint NS/NAME=HOST:PORT */
struct api_endpoint {
	const char *ns;
	const char *name;
	const char *host;
	unsigned port;
};

struct api_opts {
	const char *data_dir;        /* NULL: memory only */
	size_t watch_history;        /* events kept per resource for watch
				      * resume; 0: 10000 */
	uint64_t watch_history_ms;   /* also keep events this young; 0: no */
	size_t watch_history_max;    /* per-resource cap with the window */
	int64_t job_runtime_ms;      /* --job-runtime; stored for jobrunner */
	const struct api_endpoint *endpoints; /* copied */
	size_t nendpoints;
	int bookmark_ms;             /* watch bookmark period; 0: 10 s */
	bool propagation_finalizers; /* add orphan/foregroundDeletion (gc.c) */
	const struct fault_opts *faults; /* copied; NULL: no fault injection */
};

struct api;

/*
 * Opens the store, rebuilds the registry from stored CRDs, and creates
 * the default namespaces when missing. Returns new, or NULL + err.
 */
struct api *api_new(const struct api_opts *o, struct err *err);
/* Frees; api_shutdown must have been called and the HTTP server stopped. */
void api_free(struct api *a);
/* Ends every watch stream soon (their readers return). Any thread. */
void api_shutdown(struct api *a);

/* The HTTP entry point (an http_handler_fn; ctx is the struct api). */
void api_serve(void *ctx, const struct http_req *req, struct http_resp *resp);

/*
 * Applies YAML/JSON manifests from a file or a directory (its *.yaml,
 * *.yml and *.json files in name order) as `kubectl apply
 * --server-side` would: create when missing, merge into the objects this
 * run created (bootstrap, earlier documents). Objects restored from the
 * data dir are left as they are (others may have changed them since),
 * and documents without a name are created only when the store started
 * empty. Objects whose type is not known yet are retried after the pass,
 * so a CRD and its objects may share a run in any order. Returns 0, or
 * -1 + err naming the file and object.
 */
int api_preload(struct api *a, const char *path, struct err *err) MUST_CHECK;

/* Borrowed accessors for the seams above. */
struct store *api_store(struct api *a);
struct admission_cache *api_admission_cache(struct api *a);
int64_t api_job_runtime_ms(const struct api *a);
/* The fault injector (fault.h) of --fault-*; borrowed, never NULL. */
struct faults *api_faults(struct api *a);
/*
 * The --service-endpoint entries of Service NS/NAME (a Service has one
 * endpoint per ready pod), in the order one webhook call tries them: a
 * rotation of the order they were given that advances by one per call
 * (round robin), so calls spread over the endpoints and a caller that
 * skips the ones refusing connections reaches a live one. Fills
 * out[0..max) with borrowed pointers (valid until api_free) and returns
 * how many it filled; 0 when none is configured. Any thread.
 */
size_t api_service_endpoints(struct api *a, const char *ns, const char *name,
			     const struct api_endpoint **out, size_t max);

/*
 * The internal API: the same semantics (defaults, admission, validation,
 * finalizers, events) as the HTTP verbs, without HTTP. Objects are JSON
 * in `version` (NULL: the preferred version); every json_t parameter is
 * borrowed and every *out receives a new reference (may be NULL to
 * ignore). On failure they return -1 and fill st with the Status the
 * HTTP client would have seen.
 */
struct api_ref {
	const char *group;     /* "" for the core group */
	const char *version;   /* NULL: preferred */
	const char *resource;  /* plural */
	const char *ns;        /* NULL or "" for cluster-scoped */
	const char *name;      /* NULL for collections */
	const char *user;      /* admission userInfo / fieldManager;
				  NULL: "cueue-devserver" */
};

enum api_patch_type {
	API_PATCH_MERGE,     /* application/merge-patch+json */
	API_PATCH_JSON,      /* application/json-patch+json */
	API_PATCH_STRATEGIC, /* built-ins only */
	API_PATCH_APPLY,     /* server-side apply (create or merge) */
};

/* New reference to the object, or NULL + st (404). */
json_t *api_internal_get(struct api *a, const struct api_ref *r,
			 struct api_status *st);
/* Items (new array) of a list with optional selectors; *rv the list RV. */
int api_internal_list(struct api *a, const struct api_ref *r,
		      const char *label_selector, const char *field_selector,
		      json_t **items, uint64_t *rv, struct api_status *st);
int api_internal_create(struct api *a, const struct api_ref *r,
			const json_t *obj, json_t **out,
			struct api_status *st);
/* PUT; sub is NULL/"" for the main resource, "status" or "finalize". */
int api_internal_update(struct api *a, const struct api_ref *r,
			const char *sub, const json_t *obj, json_t **out,
			struct api_status *st);
int api_internal_patch(struct api *a, const struct api_ref *r,
		       const char *sub, enum api_patch_type type,
		       const json_t *patch, json_t **out,
		       struct api_status *st);
/* propagation: NULL (the type's default), "Background", "Foreground",
 * "Orphan". *out: the object when it remains (finalizers), else NULL. */
int api_internal_delete(struct api *a, const struct api_ref *r,
			const char *propagation, json_t **out,
			struct api_status *st);

#endif
