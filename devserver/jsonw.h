/*
 * jsonw: a faster json_dumps(JSON_COMPACT) for the devserver's hot paths
 * (every answer body, every watch event line, every WAL line).
 *
 * It writes exactly the bytes jansson's JSON_COMPACT encoder writes for
 * the same tree (keys in insertion order, the same string escapes, the
 * same integer form), and fails where jansson fails (a top-level value
 * that is neither an object nor an array, a string that is not valid
 * UTF-8). It is faster because it appends to one growable buffer (an
 * sbuf) instead of calling back per token, copies runs of plain string
 * bytes at once,
 * and skips jansson's cycle check (a hash table insert and delete, keyed
 * by a printf'd pointer, per object and array). The devserver never builds
 * a cyclic tree; nesting deeper than JSONW_MAX_DEPTH fails instead of
 * recursing further. Reals and strings with non-ASCII bytes are handed to
 * jansson itself (json_dump_callback with JSON_ENCODE_ANY), so their
 * formatting and UTF-8 checks are jansson's by construction.
 *
 * One exception, on purpose: a string member "fieldsV1" of an element of
 * a "managedFields" array inside a "metadata" object, when the string
 * holds compact FieldsV1 JSON (an object of objects), is written as that
 * JSON, not as a string. That is how managed.h keeps field ownership
 * compact (Go's FieldsV1 is raw JSON bytes too); anything else in that
 * place is written as jansson would.
 *
 * Threads: any; no state.
 */
#ifndef DEVSERVER_JSONW_H
#define DEVSERVER_JSONW_H

#include <jansson.h>
#include <stddef.h>

#define JSONW_MAX_DEPTH 4096

struct sbuf;

/*
 * Appends the encoding of j to b (which must have no ceiling). Returns 0,
 * or -1 where json_dump_callback(j, ..., JSON_COMPACT) fails; on -1, b is
 * back at its old length.
 */
int jsonw_append(const json_t *j, struct sbuf *b);

/* json_dumps(j, JSON_COMPACT) with the length: a new NUL-terminated string
 * (free it), or NULL where jansson returns NULL. */
char *jsonw_dumps(const json_t *j, size_t *len);

#endif
