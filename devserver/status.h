/*
 * status: the API server's error carrier and its metav1.Status bodies.
 *
 * Every non-2xx answer of the devserver is a Status object whose message,
 * reason and details follow kube-apiserver word for word (k8s-api.md §7),
 * because kubectl prints them verbatim and tests compare them. The
 * constructors below hold those templates in one place; callers pass the
 * resource's group and plural (or Kind for 422) and never format the
 * common messages themselves.
 *
 * struct api_status is the `struct err` of the devserver (STYLE P6): a
 * function that fails returns -1 and fills it; it is untouched on success.
 * Admission (admission.h) and conversion (convert.h) report through it so
 * a webhook's denial reaches the client with its own code and message.
 */
#ifndef DEVSERVER_STATUS_H
#define DEVSERVER_STATUS_H

#include <jansson.h>

#include "base/alloc.h"
#include "model/errors.h"

struct api_status {
	int code;          /* HTTP status code; 0 while unset */
	char reason[40];   /* metav1.StatusReason ("NotFound"); "" for none */
	char *message;     /* owned; NULL while unset */
	json_t *details;   /* owned; NULL: "details" is omitted */
	int retry_after;   /* seconds for a Retry-After header; 0: none */
};

#define API_STATUS_INIT { 0, "", NULL, NULL, 0 }

void status_init(struct api_status *st);
void status_release(struct api_status *st);
/* True once a failure has been recorded. */
static inline int status_is_set(const struct api_status *st)
{
	return st->code != 0;
}

/*
 * Records a failure unless st already holds one (the first failure
 * wins, as with struct err). details is taken (may be NULL). Returns -1.
 */
int status_set(struct api_status *st, int code, const char *reason,
	       json_t *details, const char *fmt, ...) PRINTF_LIKE(5, 6);

/* The Status object for st (new reference). */
json_t *status_to_json(const struct api_status *st);

/* A Success Status with details (taken, may be NULL); new reference. */
json_t *status_success(json_t *details);

/*
 * "<plural>.<group>" or "<plural>" for the core group into a new string:
 * the qualified resource name messages use.
 */
char *status_qualified(const char *group, const char *plural);

/* {"name","group","kind":plural} as the real server writes details
 * (group omitted when ""; name omitted when NULL). New reference. */
json_t *status_details(const char *group, const char *plural,
		       const char *name);

/* The §7.1 constructors; each returns -1. group "" means core. */
int status_not_found(struct api_status *st, const char *group,
		     const char *plural, const char *name);
int status_already_exists(struct api_status *st, const char *group,
			  const char *plural, const char *name);
/* "the object has been modified; please apply your changes ..." */
int status_conflict(struct api_status *st, const char *group,
		    const char *plural, const char *name);
/* "Operation cannot be fulfilled on <qr> "<name>": <detail>" */
int status_conflict_detail(struct api_status *st, const char *group,
			   const char *plural, const char *name,
			   const char *detail);
/* 422 Invalid: "<Kind>.<group> "<name>" is invalid: <errors>" with one
 * cause per field error; details.kind is the Kind. fe is borrowed. */
int status_invalid(struct api_status *st, const char *group,
		   const char *kind, const char *name,
		   const struct field_errors *fe);
int status_bad_request(struct api_status *st, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
/* 403: "<qr> "<name>" is forbidden: <detail>" */
int status_forbidden(struct api_status *st, const char *group,
		     const char *plural, const char *name, const char *detail);
/* 500: "Internal error occurred: <detail>" */
int status_internal(struct api_status *st, const char *detail);
/* 404 "the server could not find the requested resource" */
int status_path_not_found(struct api_status *st);
/* 405 "the server does not allow this method on the requested resource" */
int status_method_not_allowed(struct api_status *st);
/* 410 Expired: "too old resource version: <req> (<cur>)" */
int status_expired(struct api_status *st, unsigned long long req,
		   unsigned long long cur);
/* 504 Timeout "Too large resource version: <req>, current: <cur>" with
 * Retry-After: 1. */
int status_too_large_rv(struct api_status *st, unsigned long long req,
			unsigned long long cur);
/* 415 UnsupportedMediaType with the accepted types list. */
int status_unsupported_media(struct api_status *st, const char *accepted);
/* 413 "Request entity too large: limit is <n>" */
int status_too_large_body(struct api_status *st, unsigned long limit);
/* 429 TooManyRequests "Too many requests, please try again later." with
 * details.retryAfterSeconds and Retry-After (kube-apiserver's max-in-flight
 * answer, which client-go retries). */
int status_too_many_requests(struct api_status *st, int retry_after_s);
/* 401 "Unauthorized" */
int status_unauthorized(struct api_status *st);
/* 406 NotAcceptable */
int status_not_acceptable(struct api_status *st);

#endif
