/*
 * api_int: what api.c, api_read.c, api_write.c, api_watch.c and
 * api_internal.c share. Not for use outside devserver/api*.c.
 *
 * A request becomes one struct op: the resource it names (type and
 * version from a registry snapshot the op's owner holds a reference to),
 * namespace, name, subresource, and the request-wide settings (dryRun,
 * fieldValidation, fieldManager) plus the Warning texts collected on the
 * way. HTTP handlers and internal callers both fill an op and call the
 * same verb functions.
 */
#ifndef DEVSERVER_API_INT_H
#define DEVSERVER_API_INT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "devserver/api.h"
#include "devserver/registry.h"
#include "devserver/status.h"
#include "devserver/table.h"
#include "model/selector.h"

#define API_MAX_BODY ((size_t)3 << 20)

/* The internal user of --preload, whose writes own no fields: preloaded
 * objects are as if they predated field tracking, so any later apply
 * (kubectl's) merges into them without conflicts. */
#define API_PRELOAD_USER "cueue-devserver-preload"

/* One Service of --service-endpoint: its entries of api.eps. */
struct api_svc {
	const char *ns;               /* borrowed from api.eps */
	const char *name;             /* borrowed from api.eps */
	size_t *idx;                  /* owned; n indexes into api.eps, in
				       * the order given */
	size_t n;                     /* >= 1 */
	atomic_size_t next;           /* calls so far: the rotation */
};

struct api {
	struct store *store;          /* owned */
	struct registry *reg;         /* owned */
	struct admission_cache *adm;  /* owned (admission.h) */
	atomic_bool stopping;         /* set by api_shutdown */
	int64_t job_runtime_ms;
	int bookmark_ms;              /* > 0 */
	bool propagation_finalizers;
	struct api_endpoint *eps;     /* owned copies (strings owned) */
	size_t neps;
	struct api_svc *svcs;         /* owned; the Services of eps */
	size_t nsvcs;
	struct faults *faults;        /* owned (fault.h) */
	uint64_t restored_rv;         /* the store's RV once the data dir
				       * was replayed: objects at or below it
				       * came from an earlier run (0: the
				       * store started empty) */
};

enum field_validation {
	FV_IGNORE,
	FV_WARN,   /* the server default */
	FV_STRICT,
};

struct op {
	struct api *api;
	struct registry_snap *snap;   /* borrowed; the owner holds a ref */
	const struct rtype *type;     /* in snap */
	const struct rversion *ver;   /* the request version, in snap */
	char *ns;                     /* owned; "" cluster-scoped or all */
	char *name;                   /* owned; NULL for collections */
	const char *sub;              /* "", "status" or "finalize" */
	const struct http_req *req;   /* NULL for internal calls */
	const char *user;             /* admission userInfo.username */
	const char *field_manager;    /* borrowed or NULL (never "") */
	const char *field_validation; /* as sent (borrowed), or NULL */
	bool dry_run;
	bool untracked;               /* writes record no managedFields
				       * (API_PRELOAD_USER's, --preload) */
	enum field_validation fv;
	json_t *warnings;             /* owned array of strings */
	int64_t now_ms;               /* read once per request */
};

/* Initializes op for type/version; ns and name are copied (NULL ok). */
void api_op_init(struct op *op, struct api *a, struct registry_snap *snap,
		 const struct rtype *t, const struct rversion *v, const char *ns,
		 const char *name, const char *sub);
void api_op_release(struct op *op);
/* Adds a Warning text. */
void api_op_warn(struct op *op, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* A query parameter of the HTTP request, NULL for internal calls. */
const char *api_op_query(const struct op *op, const char *name);
/* The CreateOptions / UpdateOptions (kind) the request carried, as
 * kube-apiserver hands them to admission (dryRun, fieldManager,
 * fieldValidation; omitempty). New reference. */
json_t *api_op_options(const struct op *op, const char *kind);
/* "apiVersion" of the request version into buf. */
const char *api_op_version(const struct op *op, char *buf, size_t n);

/* Go strconv.ParseBool; -1 when s is not a boolean. */
int api_parse_go_bool(const char *s, bool *out);
/* A resourceVersion: decimal digits only, no sign, no overflow (so
 * "-5" or a 30-digit number is invalid rather than wrapped); -1 when
 * s is not one. */
int api_parse_rv(const char *s, uint64_t *out);
int64_t api_now_ms(void);
/* A random RFC 4122 v4 UUID into out (37 bytes). */
void api_uuid(char out[37]);
/* 5 random characters of the real generateName alphabet into out (6). */
void api_name_suffix(char out[6]);

/* The answer encodings of §8 chosen from the Accept header. */
enum media_kind {
	MEDIA_JSON,
	MEDIA_TABLE,
	MEDIA_PARTIAL, /* PartialObjectMetadata(List) */
};

struct media {
	enum media_kind kind;
	char ctype[160];   /* the response Content-Type */
};

/* Picks the encoding; -1 + st (406) when nothing acceptable is offered.
 * list selects PartialObjectMetadataList over PartialObjectMetadata. */
int api_media_negotiate(const struct http_req *req, bool list, struct media *m,
			struct api_status *st);

/* Responses; they add the op's warnings as Warning headers. obj taken. */
void api_respond_json(struct op *op, struct http_resp *resp, unsigned code,
		      json_t *obj, const char *ctype);
void api_respond_status(struct op *op, struct http_resp *resp,
			struct api_status *st);
/* A 200 streamed (chunked) answer read from fn; cls is freed by free_fn
 * when the stream ends. */
void api_respond_stream(struct op *op, struct http_resp *resp,
			const char *ctype, http_stream_fn *fn, void *cls,
			http_stream_free_fn *free_fn);

/* ---- api_read.c ---- */

struct field_req {
	char *field;       /* owned; selector name */
	char *value;       /* owned */
	const char *path;  /* dotted path in the object (static) */
	bool neq;
};

struct selectors {
	struct label_selector labels;
	struct field_req *fields; /* owned, nfields */
	size_t nfields;
};

int api_read_selectors_parse(const struct rtype *t, const char *lsel,
			     const char *fsel, struct selectors *out,
			     struct api_status *st);
bool api_read_selectors_match(const struct selectors *s, const json_t *obj);
void api_read_selectors_release(struct selectors *s);

#define WATCH_MAX_TIMEOUT_S (366L * 24 * 3600)

/* Parsed list/watch parameters. */
struct list_opts {
	const char *lsel;        /* labelSelector or NULL */
	const char *fsel;        /* fieldSelector or NULL */
	size_t limit;            /* 0: none */
	const char *cont;        /* continue token or NULL */
	const char *rv;          /* resourceVersion or NULL */
	const char *rvm;         /* resourceVersionMatch or NULL */
	bool watch;
	bool bookmarks;          /* allowWatchBookmarks */
	long timeout_s;          /* timeoutSeconds; -1 unset; at most
				    WATCH_MAX_TIMEOUT_S */
	int send_initial;        /* sendInitialEvents: -1 unset, 0, 1 */
	enum table_object include;
};

int api_read_list_opts_parse(const struct op *op, struct list_opts *o,
			     struct api_status *st);

/* The stored object as the client sees it: converted to the request
 * version. New reference (read-only), or NULL + st. */
json_t *api_read_render_object(struct op *op, const json_t *stored,
			       struct api_status *st);
/* A Table or PartialObjectMetadata form of obj per media; obj taken. */
json_t *api_read_render_media(struct op *op, const struct media *m, json_t *obj,
			      enum table_object inc);

void api_read_get(struct op *op, struct http_resp *resp);
void api_read_list(struct op *op, const struct list_opts *lo,
		   struct http_resp *resp);
/* List items (stored form) matching sel in op->ns; new array. */
json_t *api_read_matching(struct op *op, const struct selectors *sel,
			  uint64_t *rv);

/* ---- api_watch.c ---- */

void api_watch_serve(struct op *op, const struct list_opts *lo,
		     struct http_resp *resp);

/* ---- api_write.c ---- */

/* Outcome of a write: the object to answer with (request version) and
 * the HTTP code (200/201); or -1 + st. */
int api_write_create(struct op *op, json_t *obj, json_t **out,
		     struct api_status *st);
int api_write_update(struct op *op, json_t *obj, json_t **out,
		     struct api_status *st);
/* 415 unless ctype (a PATCH Content-Type) is a patch type the resource
 * takes (strategic merge: built-ins only). Returns 0 or -1 + st. */
int api_write_patch_ctype_check(const struct op *op, const char *ctype,
				struct api_status *st);
/* ctype: the patch Content-Type; patch: the parsed body (borrowed).
 * *code is 200, or 201 when an apply created the object. */
int api_write_patch(struct op *op, const char *ctype, const json_t *patch,
		    json_t **out, int *code, struct api_status *st);

struct delete_opts {
	const char *propagation;     /* NULL: the type's default */
	const char *pre_uid;         /* preconditions, or NULL */
	const char *pre_rv;
	const json_t *options;       /* DeleteOptions as sent (borrowed), for
					admission; NULL: built from the above */
};

/* *out: the object (finalizers pending, or Pods), or a Status Success;
 * code 200. */
int api_write_delete(struct op *op, const struct delete_opts *d, json_t **out,
		     struct api_status *st);
/* DELETE on the collection: the list of deleted objects. */
int api_write_delete_collection(struct op *op, const struct selectors *sel,
				const struct delete_opts *d, json_t **out,
				struct api_status *st);

/* The default namespaces and other objects every cluster has. */
int api_internal_bootstrap(struct api *a, struct err *err);

#endif
