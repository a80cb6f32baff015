/*
 * table: the meta.k8s.io/v1 Table responses `kubectl get` prints, with the
 * small JSONPath dialect CRD printer columns use (.a.b, [n], [*],
 * [?(@.k=='v')], [?(@.k=="v")]), the built-in printers (Job, Pod,
 * Namespace, Event, CRD, ...) and the server-side age humanisation
 * ("5s", "3m", "2d", "<invalid>"). Pure: `now` is passed in.
 */
#ifndef DEVSERVER_TABLE_H
#define DEVSERVER_TABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

/* Evaluates path on obj. Returns a new reference to the first result,
 * or NULL when the path selects nothing (or -1 + err for a bad path via
 * jsonpath_check). */
json_t *jsonpath_eval(const json_t *obj, const char *path);
/* 0 when path is in the supported dialect, -1 + err otherwise. */
int jsonpath_check(const char *path, struct err *err);

/* kubectl's duration format (HumanDuration / ShortHumanDuration as the
 * apiserver uses for Age): "0s", "59s", "5m", "5m30s"? -- follows
 * k8s.io/apimachinery duration.HumanDuration. Writes into buf. */
char *table_age(int64_t now_ms, int64_t then_ms, char *buf, size_t n);

enum table_object {
	TABLE_OBJECT_METADATA = 0, /* includeObject=Metadata (default) */
	TABLE_OBJECT_FULL,         /* includeObject=Object */
	TABLE_OBJECT_NONE,         /* includeObject=None */
};

/*
 * Column definitions for one resource. columns is the served version's
 * additionalPrinterColumns array (borrowed; NULL or empty: the CRD
 * default Age column). builtin_kind selects a built-in printer instead
 * ("Job", "Pod", "Namespace", "Event", "CustomResourceDefinition", or
 * NULL for a CRD). Returns a new columnDefinitions array (Name first).
 */
json_t *table_columns(const json_t *columns, const char *builtin_kind);

/*
 * One row for obj: {"cells":[...],"object":...}. Cells follow the
 * column definitions produced by table_columns with the same inputs.
 */
json_t *table_row(const json_t *obj, const json_t *columns,
		  const char *builtin_kind, enum table_object inc,
		  int64_t now_ms);

/*
 * A whole Table for a list of objects (items borrowed). with_columns
 * false leaves columnDefinitions null (watch events after the first).
 * list_meta (borrowed, may be NULL) becomes metadata.
 */
json_t *table_build(const json_t *items, const json_t *columns,
		    const char *builtin_kind, enum table_object inc,
		    bool with_columns, const json_t *list_meta,
		    int64_t now_ms);

#endif
