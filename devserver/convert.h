/*
 * convert: moving custom resources between the versions their CRD
 * serves (k8s-api.md §12). Objects are stored in the storage version and
 * every response is converted to the version the client asked for; every
 * write is converted to the storage version before it is stored.
 *
 * This is the single conversion seam of the devserver. Strategy None (the
 * only one implemented here) rewrites apiVersion and nothing else, as
 * apiextensions-apiserver's nopConverter does. Strategy Webhook answers
 * 500 "conversion webhook not configured" until convert.c learns to call
 * spec.conversion.webhook with a ConversionReview; callers need no
 * change when it does (convert_objects exists so that a webhook can get a
 * whole list in one review).
 *
 * Threads: any; pure apart from what a future webhook call needs.
 */
#ifndef DEVSERVER_CONVERT_H
#define DEVSERVER_CONVERT_H

#include <jansson.h>

struct api;
struct api_status;
struct rtype;

/*
 * Returns obj converted to to_version of type t, or NULL + st (500).
 * The result is a new reference that may share structure with obj (when
 * nothing changes it is obj itself): treat it as read-only, and
 * json_deep_copy it before modifying. obj is borrowed. api is the server
 * (for webhook clients and service endpoints), may be NULL in tests.
 */
json_t *convert_object(struct api *api, const struct rtype *t,
		       const json_t *obj, const char *to_version,
		       struct api_status *st);

/* The same for a JSON array of objects: returns a new array, or NULL +
 * st when any object fails. Read-only, as for convert_object (it may be
 * objs itself). */
json_t *convert_objects(struct api *api, const struct rtype *t,
			const json_t *objs, const char *to_version,
			struct api_status *st);

#endif
