/*
 * review: the two wire formats a webhook server speaks, decoded into
 * plain structs and encoded back: admission.k8s.io/v1 AdmissionReview
 * (v1beta1 is read and echoed too, as kube-apiserver may send it) and
 * apiextensions.k8s.io/v1 ConversionReview.
 *
 * Decoding checks the envelope only (apiVersion, kind, request, uid,
 * operation, the object's presence); the objects stay JSON for the
 * handlers. Encoding follows controller-runtime's responses: a denial
 * carries status {code, reason, message}, a mutation patchType JSONPatch
 * and the base64 patch, warnings as given; the uid is always echoed.
 *
 * Pure; any thread. json_t ownership per STYLE P3: the structs hold new
 * references (released by their _release).
 */
#ifndef WEBHOOK_REVIEW_H
#define WEBHOOK_REVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"

struct json_t;

#define REVIEW_ADMISSION_V1 "admission.k8s.io/v1"
#define REVIEW_ADMISSION_V1BETA1 "admission.k8s.io/v1beta1"
#define REVIEW_CONVERSION_V1 "apiextensions.k8s.io/v1"

enum review_op {
	REVIEW_OP_UNKNOWN = 0,
	REVIEW_OP_CREATE,
	REVIEW_OP_UPDATE,
	REVIEW_OP_DELETE,
	REVIEW_OP_CONNECT,
};

/* AdmissionReview.request, the parts handlers read. */
struct review_request {
	char *api_version;   /* owned; the review's, echoed in the answer */
	char *uid;           /* owned; never NULL after a decode */
	enum review_op op;
	char *group;         /* owned; request.kind.group ("" for core) */
	char *version;       /* owned; request.kind.version */
	char *kind;          /* owned; request.kind.kind */
	char *sub_resource;  /* owned or NULL; "status", ... */
	char *name;          /* owned or NULL */
	char *namespace;     /* owned or NULL; request.namespace */
	bool dry_run;
	struct json_t *object;     /* owned ref or NULL (DELETE) */
	struct json_t *old_object; /* owned ref or NULL (CREATE) */
};

void review_request_release(struct review_request *r);

/*
 * Decodes the len bytes at body into out (zeroed first; release it
 * whatever the result). On failure returns -1 with err saying what is
 * wrong in controller-runtime's words where it has them; out->uid and
 * out->api_version are kept when they could be read, so the denial can
 * echo them.
 */
int review_decode_admission(const char *body, size_t len,
			    struct review_request *out, struct err *err)
	MUST_CHECK;

/* An admission answer. Transparent; build on the stack. */
struct review_response {
	bool allowed;
	int32_t code;        /* status.code; 0: no status */
	const char *reason;  /* borrowed; status.reason or NULL */
	char *message;       /* owned; status.message or NULL */
	struct json_t *patch;/* owned ref; JSON array of operations or NULL
			      * (an empty array is left out) */
	char **warnings;     /* owned array of owned strings */
	size_t nwarnings;
};

void review_response_release(struct review_response *r);
/* Sets r to a denial: code, reason (static or NULL), message (copied). */
void review_deny(struct review_response *r, int32_t code,
		 const char *reason, const char *message);
void review_warn(struct review_response *r, const char *warning);

/*
 * Returns the new AdmissionReview answering uid (NULL: "") in
 * api_version (NULL: v1) with r.
 */
struct json_t *review_encode_admission(const char *api_version,
				       const char *uid,
				       const struct review_response *r);

/* ConversionReview.request. */
struct review_conversion {
	char *api_version;    /* owned; echoed */
	char *uid;            /* owned */
	char *desired;        /* owned; desiredAPIVersion */
	struct json_t *objects; /* owned ref; a JSON array of objects */
};

void review_conversion_release(struct review_conversion *c);

/* Decodes a ConversionReview; as review_decode_admission. */
int review_decode_conversion(const char *body, size_t len,
			     struct review_conversion *out, struct err *err)
	MUST_CHECK;

/*
 * Returns the new ConversionReview answer for uid: with failure NULL a
 * Success carrying converted (borrowed; a JSON array), else a Failure
 * with that message and no objects.
 */
struct json_t *review_encode_conversion(const char *api_version,
					const char *uid,
					const struct json_t *converted,
					const char *failure);

#endif
