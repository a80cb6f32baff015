/*
 * builtin: the resource types the devserver serves without a CRD, as one
 * static table (STYLE P11), and what kube-apiserver's registry strategies
 * do for them: Go defaults (Job backoffLimit 6, pod template defaults,
 * generated Job selector and labels), system-set fields (Namespace
 * phase, finalizers and kubernetes.io/metadata.name label; CRD status
 * with NamesAccepted/Established), and the validation the devserver
 * enforces (Job template, restartPolicy, and on update the immutable
 * Job fields of jobval.h; CRD structure).
 *
 * Pure functions over JSON trees the caller owns; no I/O, no clock (the
 * caller passes now_ms). The table is read by registry.c, which turns
 * each row into a served type.
 */
#ifndef DEVSERVER_BUILTIN_H
#define DEVSERVER_BUILTIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"

enum builtin_flag {
	BI_STATUS = 1u << 0,         /* has the status subresource */
	BI_FINALIZE = 1u << 1,       /* has the finalize subresource */
	BI_GENERATION = 1u << 2,     /* maintains metadata.generation */
	BI_RETURN_DELETED = 1u << 3, /* DELETE answers with the object */
	BI_ORPHAN_DEFAULT = 1u << 4, /* default propagation is Orphan */
	BI_NAME_LABEL = 1u << 5,     /* names are DNS-1123 labels */
	BI_STATUS_RESET = 1u << 6,   /* create resets status to {} */
};

/* One extra fieldSelector field: its selector name and the dotted path
 * of the value in the object. */
struct builtin_field {
	const char *name; /* "involvedObject.kind" */
	const char *path; /* "involvedObject.kind" */
};

/* Hooks; any may be NULL. obj is owned by the caller and modified in
 * place; old is the stored object (NULL on create). */
typedef void builtin_defaults_fn(json_t *obj);
typedef void builtin_prepare_fn(json_t *obj, const json_t *old,
				int64_t now_ms);
typedef void builtin_validate_fn(const json_t *obj, const json_t *old,
				 struct field_errors *fe);

struct builtin {
	const char *group;     /* "" for the core group */
	const char *version;   /* the one served version */
	const char *plural;
	const char *singular;
	const char *kind;
	bool namespaced;
	unsigned flags;                    /* enum builtin_flag bits */
	const char *const *short_names;   /* NULL-terminated, or NULL */
	const char *const *categories;    /* NULL-terminated, or NULL */
	const char *printer;   /* table.h builtin_kind, NULL: generic */
	const struct builtin_field *fields; /* NULL-name terminated, or NULL */
	builtin_defaults_fn *defaults;     /* Go SetDefaults_* */
	builtin_prepare_fn *prepare;       /* system fields after admission */
	builtin_validate_fn *validate;     /* strategy Validate */
};

extern const struct builtin builtin_types[];
extern const size_t builtin_ntypes;

/* The value of a dotted path in obj as a field selector compares it:
 * strings as they are, integers in decimal, booleans "true"/"false",
 * anything missing "". Returns a new string. */
char *builtin_field_value(const json_t *obj, const char *path);

/* The pod spec defaults (dnsPolicy, restartPolicy, container
 * terminationMessagePath, imagePullPolicy, ...) applied to spec in place;
 * shared by Pods and Job templates. */
void builtin_pod_spec_defaults(json_t *spec);

/* Kubernetes' version priority: GA > beta > alpha, higher numbers first,
 * non-Kubernetes-like strings last in alphabetical order. Negative when
 * a sorts before b (is preferred). */
int builtin_version_cmp(const char *a, const char *b);

#endif
