/*
 * managed: metadata.managedFields, kube-apiserver's field ownership
 * (k8s.io/apimachinery/pkg/util/managedfields and
 * sigs.k8s.io/structured-merge-diff), for the devserver's write path.
 *
 * Every write records which manager set which fields: one entry per
 * (manager, operation, apiVersion, subresource) of the form
 * {manager, operation: Apply|Update, apiVersion, time, fieldsType:
 * FieldsV1, fieldsV1, subresource}. A create, update or non-apply patch
 * (managed_update) gives its manager an Update entry owning what it
 * changed, and takes those fields from the other managers. A server-side
 * apply (managed_apply) merges the applied configuration into the live
 * object, removes what this manager applied before and dropped now (unless
 * another manager owns it), answers 409 when it would change a field
 * another manager owns (unless forced, which moves the ownership), and
 * gives its manager an Apply entry owning exactly the applied fields.
 *
 * The types come from the request version's CRD schema
 * (x-kubernetes-list-type, -list-map-keys, -map-type) or, for built-in
 * kinds, from patch.h's merge key table (lists of objects with a merge key
 * are maps by that key, finalizers a set, other lists atomic); ObjectMeta
 * is built in for both.
 *
 * DESIGN: fieldsV1 is computed on writes only and kept compact: the
 * stored entry holds it as a string of compact FieldsV1 JSON, which
 * jsonw.c writes out as the JSON object it is (as Go's FieldsV1 keeps
 * raw bytes), so an object's ownership costs about the size of its
 * field names, not a second JSON tree. Entries are parsed (fieldset.h)
 * only when a write changed something they might own.
 *
 * Pure functions of their arguments (the time is given); no I/O, no
 * locks. Objects are jansson trees; inputs are borrowed and never changed
 * except where a function says it sets obj's managedFields.
 */
#ifndef DEVSERVER_MANAGED_H
#define DEVSERVER_MANAGED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "devserver/patch.h"
#include "devserver/status.h"

/* Kubernetes' limit on Update entries (DefaultMaxUpdateManagers): older
 * ones merge into "ancient-changes". */
#define MANAGED_MAX_UPDATERS 10

/* What one write is, for the bookkeeping. */
struct managed_req {
	const char *manager;      /* the field manager (borrowed; "" ok) */
	const char *api_version;  /* the request's "group/version" */
	const char *subresource;  /* "" or "status" */
	const json_t *schema;     /* openAPIV3Schema of the request
				     version, or NULL (built-ins) */
	const struct smp_key *keys; /* built-ins: the list table; NULL
				     for custom resources */
	bool has_status;          /* the version has a status subresource:
				     the main resource owns no status, the
				     status subresource only status */
	int64_t now_ms;           /* the request's time */
};

/*
 * The bookkeeping of a create (live NULL), update or non-apply patch:
 * sets obj's metadata.managedFields (or removes them when none are left).
 * The entries are those obj carries when it sets them to a list that
 * decodes (a client rewriting them; [] or [{}] resets them to none;
 * never on a subresource), else the live object's. obj is changed in
 * place; live is borrowed.
 */
void managed_update(const struct managed_req *r, const json_t *live,
		    json_t *obj);

/*
 * Server-side apply of config (borrowed) over live (borrowed; NULL:
 * create). Returns the merged object with its managedFields (new
 * reference), or NULL with st: 409 Conflict naming the managers and
 * fields ("Apply failed with 1 conflict: conflict with \"mgr\" using
 * v1: .spec.x"; details.causes of type FieldManagerConflict) unless
 * force, 400 when config carries managedFields, 422 when a list-type map
 * holds duplicate keys or an item without any key.
 */
json_t *managed_apply(const struct managed_req *r, const json_t *live,
		      const json_t *config, bool force,
		      struct api_status *st);

/*
 * The default field manager of a request without ?fieldManager: the
 * User-Agent up to its first '/', non-printable characters dropped, at
 * most 128 bytes (kube-apiserver's prefixFromUserAgent). New string.
 */
char *managed_manager_from_agent(const char *user_agent);

#endif
