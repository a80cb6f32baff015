/*
 * convert: moving custom resources between the versions their CRD
 * serves (k8s-api.md §12). Objects are stored in the storage version and
 * every response is converted to the version the client asked for; every
 * write is converted to the storage version before it is stored.
 *
 * This is the single conversion seam of the devserver. Strategy None
 * rewrites apiVersion and nothing else, as apiextensions-apiserver's
 * nopConverter does. Strategy Webhook sends one ConversionReview per call
 * to spec.conversion.webhook.clientConfig (through webhook_client.h),
 * checks the answer as webhookConverter does and restores each object's
 * metadata except labels and annotations; failures are 500s with the
 * converter's message. convert_objects sends a whole list in one review.
 *
 * Threads: any; no state. A webhook call blocks the calling thread and
 * must not be made with a devserver lock held.
 */
#ifndef DEVSERVER_CONVERT_H
#define DEVSERVER_CONVERT_H

#include <jansson.h>

struct api;
struct api_status;
struct rtype;

/*
 * Returns obj converted to to_version of type t, or NULL + st (500;
 * strategy Webhook: the webhook failed or answered something invalid).
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
