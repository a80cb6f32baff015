/*
 * kube: the controller's REST client for the Kubernetes API, on the
 * loop's libcurl multi handle (loop.h). Asynchronous: a request is
 * submitted, and its done callback runs on the loop thread when the
 * answer (or the final failure) is in. Informers (list + watch) are in
 * kube_watch.h, on top of this.
 *
 * It uses only what a real kube-apiserver offers, as client-go does
 * (k8s-api.md §14.4): GET, POST, PUT, merge and JSON patches (never
 * strategic merge or server-side apply), DELETE with DeleteOptions. Writes
 * where a lost update matters carry metadata.resourceVersion, and a 409 is
 * handed back to the caller, which re-reads and retries.
 *
 * What the client does on its own:
 *  - rate limiting: a token bucket of qps and burst (client-go's
 *    flowcontrol); every send, retries and watches included, takes a
 *    token, and callers queue in FIFO order while there is none;
 *  - retries: 429 and 5xx answers, and transport failures (refused,
 *    reset, timeout), are sent again after the answer's Retry-After, else
 *    after a capped exponential backoff with jitter, up to max_retries.
 *    A retried write may meet its own earlier effect (POST: 409
 *    AlreadyExists; DELETE: 404; a PATCH with resourceVersion: 409) —
 *    answers the caller handles anyway. TLS verification failures,
 *    oversized answers and every other status are not retried;
 *  - ceilings (STYLE P5): an answer body larger than max_bytes (objects
 *    3 MiB, lists 64 MiB by default) aborts the transfer and fails the
 *    request with KUBE_TOO_LARGE; nothing partial is ever parsed;
 *  - credentials as client-go sends them: the bearer token and the client
 *    certificate only over https, the CA or the insecure flag for the
 *    server's certificate; a token file is re-read every minute.
 *
 * JSON: request bodies are borrowed and serialised at submission; the
 * body handed to a done callback is a new reference the callback owns.
 * Threads: the loop thread only.
 */
#ifndef CONTROLLER_KUBE_H
#define CONTROLLER_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"

struct json_t;
struct kubeconfig;
struct loop;
struct kube;
struct kube_call;

enum kube_verb {
	KUBE_GET,         /* one object (object ceiling) */
	KUBE_LIST,        /* GET of a collection (list ceiling) */
	KUBE_WATCH,       /* streaming GET, informers only (kube_watch.h) */
	KUBE_POST,        /* create; body required */
	KUBE_PUT,         /* update; body required, with resourceVersion */
	KUBE_PATCH_MERGE, /* application/merge-patch+json; body required */
	KUBE_PATCH_JSON,  /* application/json-patch+json; body required */
	KUBE_DELETE,      /* body: DeleteOptions, optional */
	KUBE_VERB_N
};

/* What became of a request. Ordered from success to the worst failure. */
enum kube_outcome {
	KUBE_OK,        /* a 2xx answer; body is its JSON (NULL if empty) */
	KUBE_HTTP,      /* a non-2xx answer: code, reason, message */
	KUBE_TOO_LARGE, /* the answer passed the request's ceiling */
	KUBE_BAD_BODY,  /* a 2xx answer that is not JSON */
	KUBE_STOPPED,   /* a stream's consumer stopped it (kube_int.h) */
	KUBE_TRANSPORT, /* no answer: connection, TLS, timeout (retries
			   spent) */
};

/* The result handed to a done callback; every pointer is borrowed for
 * the call. */
struct kube_reply {
	enum kube_outcome outcome;
	long code;              /* HTTP status; 0 when no answer came */
	const char *reason;     /* the Status reason of a non-2xx answer
				   ("NotFound", "Conflict", "Invalid"; from
				   the code when the body is no Status);
				   "" otherwise */
	const char *message;    /* the Status message, or what failed;
				   "" on success */
	int64_t retry_after_ms; /* the last answer's Retry-After; -1: none */
	unsigned attempts;      /* sends, retries included (>= 1) */
};

/*
 * The end of a request. body is a new reference the callback owns (and
 * must json_decref): the answer's JSON, a Status on most failures, NULL
 * when there was none. The call handle is gone once this runs. The
 * callback may submit and cancel other requests.
 */
typedef void kube_done_take_fn(void *ud, const struct kube_reply *r,
			       struct json_t *body);

struct kube_req {
	enum kube_verb verb;
	const char *path;       /* "/api/v1/namespaces/ns/configmaps/x",
				   maybe with "?query" (escaped); copied */
	const struct json_t *body; /* see enum kube_verb; borrowed */
	const char *propagation;   /* DELETE without body:
				      propagationPolicy, or NULL */
	const char *precondition_rv; /* DELETE without body:
					preconditions.resourceVersion */
	const char *precondition_uid; /* DELETE without body:
					 preconditions.uid */
	size_t max_bytes;       /* answer ceiling; 0: by verb */
	bool no_retry;          /* the first failure is final (callers that
				   run their own backoff) */
	bool discard_answer;    /* the done callback gets body NULL on a
				   2xx: the answer is neither kept nor
				   parsed (writes whose answer nobody
				   reads; failures still carry their
				   Status) */
	bool control;           /* the process's own coordination (the
				   leader election's Lease): sent at once,
				   past the rate limiter's queue (client-go
				   gives leader election a client of its
				   own), and exempt from the write fence */
	int64_t timeout_ms;     /* this send; 0: the client's */
	kube_done_take_fn *done; /* required */
	void *ud;               /* borrowed */
};

struct kube_opts {
	double qps;                /* sends per second; 0: 20; < 0: no limit */
	int burst;                 /* bucket size; 0: 30 */
	size_t max_object_bytes;   /* 0: 3 MiB */
	size_t max_list_bytes;     /* 0: 64 MiB */
	int max_retries;           /* resends per request; 0: 10; < 0: none */
	int64_t backoff_base_ms;   /* first retry delay; 0: 200 ms */
	int64_t backoff_max_ms;    /* 0: 30 s */
	int64_t request_timeout_ms; /* one send, streams excepted; 0: 60 s */
	int64_t retry_after_max_ms; /* Retry-After honoured up to; 0: 10 min */
	const char *user_agent;    /* NULL: "cueue-manager"; copied */
	uint64_t seed;             /* jitter; 0: from the clock */
};

/*
 * Returns a new client for cfg's server and credentials (copied; cfg is
 * borrowed) on loop l (borrowed; must outlive the client), or NULL + err
 * when the server URL is unusable. o may be NULL (all defaults).
 */
struct kube *kube_new(struct loop *l, const struct kubeconfig *cfg,
		      const struct kube_opts *o, struct err *err);
/*
 * Cancels every request still pending (their callbacks do not run) and
 * frees. Every informer must be freed first (BUG otherwise); not from
 * inside one of this client's callbacks. NULL-safe.
 */
void kube_free(struct kube *k);

/*
 * Submits a request: it waits for a rate-limit token, is sent, retried as
 * described above, and ends in r->done. r and everything it points to are
 * borrowed for the call only. Returns a handle, valid until done runs or
 * kube_cancel is called. Never fails here: every failure is reported
 * through done, never from inside this call.
 */
struct kube_call *kube_submit(struct kube *k, const struct kube_req *r);
/* Cancels a request; its done callback will not run. */
void kube_cancel(struct kube *k, struct kube_call *c);
/* Requests submitted and not yet done or cancelled. */
size_t kube_pending(const struct kube *k);
/*
 * The write fence, for a process that must stop writing at once (it lost
 * the leader election, or it is shutting down): from now on no write
 * (POST, PUT, PATCH, DELETE) that is not a control request is sent. The
 * ones queued, backing off or being sent are stopped (a send under way is
 * aborted: whether the server saw it is unknown, as with any transport
 * failure), and every such request, those submitted later too, ends with
 * KUBE_TRANSPORT "write fenced" from a timer, never from inside kube_fence
 * or kube_submit. Reads go on. There is no way back.
 */
void kube_fence(struct kube *k);
bool kube_fenced(const struct kube *k);
/* Writes (not control requests) submitted and not ended yet. */
size_t kube_writes_pending(const struct kube *k);
/* True while requests wait for a rate-limit token (qps/burst spent):
 * what best-effort senders hold back on. */
bool kube_saturated(const struct kube *k);

/* Counters for metrics; never reset. */
#define KUBE_STATS_MAX 64
struct kube_stat {
	enum kube_verb verb;
	long code;  /* HTTP status; 0 for sends that got no answer */
	uint64_t n; /* answers (or failures) of this verb and code */
};
struct kube_stats {
	struct kube_stat v[KUBE_STATS_MAX]; /* first n used, in order seen */
	size_t n;
	uint64_t dropped;          /* sends not counted: the table was full */
	uint64_t retries;          /* resends after 429, 5xx or transport */
	uint64_t throttled;        /* sends that waited for a token */
	uint64_t throttle_wait_ms; /* the sum of those waits */
	uint64_t too_large;        /* answers over their ceiling */
};
/* Borrowed; valid until kube_free. */
const struct kube_stats *kube_stats(const struct kube *k);
/* Sends of verb v answered with code (0: no answer). */
uint64_t kube_stats_count(const struct kube_stats *s, enum kube_verb v,
			  long code);
/* "GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE"; static. */
const char *kube_verb_name(enum kube_verb v);

/* The loop the client runs on; borrowed. */
struct loop *kube_loop(const struct kube *k);

/*
 * The REST path of a resource, collection or object (new string):
 * "/api/v1/..." for the core group (group "" or NULL), else
 * "/apis/<group>/<version>/...", then "namespaces/<ns>/" when ns is set,
 * the resource, "/<name>" and "/<subresource>" when set.
 */
struct kube_ref {
	const char *group;       /* "" or NULL: core */
	const char *version;     /* required */
	const char *resource;    /* plural; required */
	const char *ns;          /* NULL or "": cluster-scoped, or every
				    namespace for a collection */
	const char *name;        /* NULL: the collection */
	const char *subresource; /* "status", or NULL */
};
char *kube_path(const struct kube_ref *r);
/* s percent-encoded for a query value (RFC 3986 unreserved kept); new. */
char *kube_escape(const char *s);

#endif
