/*
 * admission: the two admission seams of the devserver's write path
 * (api_write.c steps 4 and 7), as kube-apiserver runs them: mutating
 * admission after defaulting and before validation, validating admission
 * after validation and before the object is stored (and before every
 * DELETE).
 *
 * admission.c is kube-apiserver's MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook plugins: on every call it gets the
 * Mutating/ValidatingWebhookConfigurations through api_internal_list
 * (api.h), picks the webhooks whose rules, namespaceSelector and
 * objectSelector match, maps clientConfig.service with
 * api_service_endpoints, sends AdmissionReviews through webhook_client.h
 * (k8s-api.md §11.3), applies the mutating webhooks' JSON patches, and
 * reports denials and call failures through struct api_status with the
 * real server's codes and messages.
 *
 * What the webhooks see follows kube-apiserver's admission attributes:
 * on CREATE with generateName, mutating webhooks get metadata.name and
 * request.name empty (the generic store's create() generates the name
 * after mutation, registry/generic/registry/store.go); validating
 * webhooks get the generated name in both, as
 * AdmissionToValidateObjectFunc fills it in from the object.
 * request.options is what the client sent: CreateOptions for a create
 * (also an apply that creates), UpdateOptions for PUT and PATCH,
 * DeleteOptions for a delete.
 *
 * The configurations are read once and kept in a struct admission_cache
 * (one per api, api_admission_cache) until store_resource_rv says their
 * resource was written, so a write that changes them takes effect on the
 * next admission, and writes that find none pay no list.
 *
 * Threads: called on HTTP connection threads and by the internal writers
 * (gc, jobrunner); must not hold locks across webhook calls. The cache's
 * mutex is a leaf lock, held only to swap or take a reference.
 */
#ifndef DEVSERVER_ADMISSION_H
#define DEVSERVER_ADMISSION_H

#include <jansson.h>
#include <stdbool.h>

struct api;
struct api_status;
struct rtype;

enum admission_op {
	ADMISSION_CREATE,
	ADMISSION_UPDATE, /* PUT and PATCH */
	ADMISSION_DELETE,
};

/* One admission request; every pointer is borrowed for the call. */
struct admission_req {
	struct api *api;           /* the server (store, endpoints) */
	const struct rtype *type;  /* the resource */
	const char *version;       /* the version the client used */
	const char *subresource;   /* "" or "status", "finalize" */
	enum admission_op op;
	const char *ns;            /* "" for cluster-scoped */
	const char *name;          /* "" on a mutating CREATE with
				      generateName; the generated name on
				      the validating one */
	const json_t *old;         /* stored object (request version);
				      NULL on CREATE */
	const json_t *options;     /* CreateOptions / UpdateOptions /
				      DeleteOptions as the client sent them
				      (kind, apiVersion meta.k8s.io/v1);
				      NULL: built from op and dry_run */
	const char *user;          /* "kubernetes-admin" or an internal
				      writer's name ("system:gc") */
	bool dry_run;
	json_t *warnings;          /* array; append Warning texts here */
};

/* The parsed webhook configurations of one api; new / NULL-safe free. */
struct admission_cache;
struct admission_cache *admission_cache_new(void);
void admission_cache_free(struct admission_cache *c);

/*
 * Mutating admission. *obj is owned by the caller; a mutator may modify
 * it in place or replace it (decref the old, store a new reference).
 * Returns 0, or -1 + st (the request fails with st). The write path does
 * not call it for DELETE: admission_validate runs the mutating webhooks
 * of a DELETE itself (object null), as kube-apiserver's delete
 * validation step does.
 */
int admission_mutate(const struct admission_req *req, json_t **obj,
		     struct api_status *st);

/*
 * Validating admission of the final object (NULL for DELETE, where
 * req->old is the object being deleted; the mutating webhooks run first
 * then). Returns 0, or -1 + st.
 */
int admission_validate(const struct admission_req *req, const json_t *obj,
		       struct api_status *st);

#endif
