/*
 * admission: the two admission seams of the devserver's write path
 * (api_write.c steps 4 and 7), as kube-apiserver runs them: mutating
 * admission after defaulting and before validation, validating admission
 * after validation and before the object is stored.
 *
 * admission.c today allows everything unchanged. The admission webhook
 * helper replaces admission.c alone: it reads Mutating/Validating
 * WebhookConfigurations through api_internal_list (api.h), maps
 * clientConfig.service with api_service_endpoint, calls the webhooks
 * (k8s-api.md §11) and reports denials through struct api_status with the
 * real server's codes and messages. Nothing else in the devserver needs to
 * change for that.
 *
 * Threads: called on HTTP connection threads (and by internal writers);
 * must not hold locks across webhook calls.
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
	const char *name;          /* "" on CREATE with generateName */
	const json_t *old;         /* stored object (request version);
				      NULL on CREATE */
	const json_t *options;     /* CreateOptions / UpdateOptions /
				      DeleteOptions as JSON */
	const char *user;          /* "kubernetes-admin" or an internal
				      writer's name ("system:gc") */
	bool dry_run;
	json_t *warnings;          /* array; append Warning texts here */
};

/*
 * Mutating admission. *obj is owned by the caller; a mutator may modify
 * it in place or replace it (decref the old, store a new reference).
 * Returns 0, or -1 + st (the request fails with st). Not called for
 * DELETE.
 */
int admission_mutate(const struct admission_req *req, json_t **obj,
		     struct api_status *st);

/*
 * Validating admission of the final object (NULL for DELETE, where
 * req->old is the object being deleted). Returns 0, or -1 + st.
 */
int admission_validate(const struct admission_req *req, const json_t *obj,
		       struct api_status *st);

#endif
