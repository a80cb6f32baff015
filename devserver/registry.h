/*
 * registry: the set of resource types the devserver serves, built from
 * the built-in table (builtin.h) plus every stored CustomResourceDefinition,
 * and the documents that describe it (aggregated and legacy discovery,
 * the /openapi/v3 index and per-group-version documents with their hash).
 *
 * DESIGN. The set is published as an immutable, reference-counted
 * snapshot. A request takes one reference (registry_get) and keeps it
 * until it is answered, so no lock is held while serving and a CRD change
 * never alters a type under a running request. registry_rebuild reads the
 * stored CRDs, builds a complete new snapshot and swaps the pointer under
 * the registry mutex; that mutex is held across the rebuild so concurrent
 * CRD writes publish in order. The old snapshot dies with its last
 * reader. Lock order: registry mutex, then the store's.
 *
 * Everything inside a snapshot (types, versions, strings, JSON) is owned
 * by it and read-only; pointers into it are borrowed for the life of the
 * caller's reference.
 */
#ifndef DEVSERVER_REGISTRY_H
#define DEVSERVER_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct builtin;
struct store;

enum conv_strategy {
	CONV_NONE = 0, /* apiVersion rewrite only */
	CONV_WEBHOOK,  /* spec.conversion.webhook (convert.h) */
};

struct rversion {
	char *name;             /* "v1beta2" */
	bool served;
	bool storage;           /* exactly one per type */
	bool deprecated;
	char *warning;          /* Warning header text, or NULL */
	const json_t *schema;   /* openAPIV3Schema (in the CRD), or NULL */
	const json_t *columns;  /* additionalPrinterColumns, or NULL */
	bool status;            /* has the status subresource */
	bool scale;             /* has the scale subresource */
};

struct rtype {
	char *group;            /* "" for the core group */
	char *plural;
	char *singular;
	char *kind;
	char *list_kind;
	char **short_names;     /* nshort entries */
	size_t nshort;
	char **categories;      /* ncat entries */
	size_t ncat;
	bool namespaced;
	struct rversion *versions; /* nversions, in preference order */
	size_t nversions;
	size_t storage;         /* index of the storage version */
	char *key;              /* store key "<group>/<plural>" */
	const struct builtin *bi; /* NULL for custom resources */
	enum conv_strategy conversion;
	json_t *crd;            /* the CRD (custom resources only) */
};

struct registry;
struct registry_snap;

/* New registry holding the built-in types only. */
struct registry *registry_new(void);
void registry_free(struct registry *r);

/* A new reference to the current snapshot (never NULL). Any thread. */
struct registry_snap *registry_get(struct registry *r);
/* Another reference to s (for a stream that outlives its request). */
struct registry_snap *registry_ref(struct registry_snap *s);
/* Drops a reference; NULL is a no-op. */
void registry_put(struct registry_snap *s);

/*
 * Rebuilds from the built-ins and every CRD stored under
 * "apiextensions.k8s.io/customresourcedefinitions" in st, then publishes.
 * CRDs that cannot be served (no served version) are skipped.
 */
void registry_rebuild(struct registry *r, struct store *st);

/* Types, all borrowed from s. */
size_t registry_ntypes(const struct registry_snap *s);
const struct rtype *registry_type_at(const struct registry_snap *s,
				     size_t i);
/* By group and plural (any version), or NULL. */
const struct rtype *registry_find(const struct registry_snap *s,
				  const char *group, const char *plural);
/* By group and Kind, or NULL. */
const struct rtype *registry_find_kind(const struct registry_snap *s,
				       const char *group, const char *kind);
/* The served version named v, or NULL. */
const struct rversion *rtype_version(const struct rtype *t, const char *v);
/* The preferred (first served) version. */
const struct rversion *rtype_preferred(const struct rtype *t);
const struct rversion *rtype_storage(const struct rtype *t);
/* "group/version" or "version" for the core group, into buf. */
const char *rtype_api_version(const struct rtype *t, const char *version,
			      char *buf, size_t n);
/* True when some type serves group/version. */
bool registry_serves_gv(const struct registry_snap *s, const char *group,
			const char *version);

enum registry_doc {
	DOC_AGG_API_V2,      /* /api as APIGroupDiscoveryList v2 */
	DOC_AGG_API_V2BETA1,
	DOC_AGG_APIS_V2,     /* /apis */
	DOC_AGG_APIS_V2BETA1,
	DOC_LEGACY_APIS,     /* APIGroupList */
	DOC_OPENAPI_INDEX,   /* /openapi/v3 */
	DOC_COUNT
};

/* A prebuilt document (borrowed string). */
const char *registry_doc(const struct registry_snap *s, enum registry_doc d);
/* APIResourceList of group/version ("" group: /api/v1), or NULL. */
const char *registry_resource_list(const struct registry_snap *s,
				   const char *group, const char *version);
/* APIGroup of group, or NULL. */
const char *registry_api_group(const struct registry_snap *s,
			       const char *group);
/*
 * The /openapi/v3 document for key ("api/v1", "apis/batch/v1"), or NULL;
 * *hash (when not NULL) receives its hash (borrowed).
 */
const char *registry_openapi(const struct registry_snap *s, const char *key,
			     const char **hash);

#endif
