/*
 * codec_int: the internals the codec files share and nobody else may see
 * (STYLE P1). The codec is one module split by layer:
 *   codec_cursor.c  the decode cursor and the field readers below
 *   codec_k8s.c     meta/v1, core/v1, batch/v1 shapes (codec_read_*)
 *   codec.c         the Kueue kinds
 *   codec_encode.c  structs -> JSON
 *   codec_convert.c v1beta1 <-> v1beta2
 * This header includes jansson, so it is for model/codec*.c only (make
 * check-deps rejects jansson anywhere else in model/).
 *
 * Reader conventions: every reader takes the cursor, the object o to look
 * key up in, and the key; the value is absent when o is not an object, key
 * is missing, or its value is JSON null. A present value of the wrong
 * shape adds one field error at <cursor path>.<key> and the reader returns
 * "nothing" (false, NULL, 0), leaving its output untouched. Readers named
 * codec_v_* take the value itself and report at the current path when key
 * is NULL (array items, map values).
 */
#ifndef MODEL_CODEC_INT_H
#define MODEL_CODEC_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"
#include "model/codec.h"

/* Deepest nesting a decoded object may have; the root object is level 1.
 * Kubernetes objects need about 20 (a pod template's affinity terms). */
#define CODEC_MAX_DEPTH 64
/* Longest string (value or key) a decoded object may carry. etcd caps a
 * whole object at about 1.5 MiB, so no real field comes near this. */
#define CODEC_MAX_STRING ((size_t)1 << 20)

/* Returns the compact JSON of j with sorted keys as a new string (xmalloc),
 * or NULL when jansson cannot dump it. */
char *codec_dump(const json_t *j);
/* Parses text written by codec_dump; returns a new reference or NULL. */
json_t *codec_load(const char *text);

/* ------------------------------------------------------------------ */
/* The decode cursor */

struct codec_ctx {
	struct field_errors *fe; /* borrowed; where errors go */
	size_t nerr0;       /* fe->n when the decode started */
	enum api_version v; /* version whose field names are read */
	struct sbuf path;   /* the field path: "" at the root, path.buf
			       never NULL from init to finish */
};

/*
 * Starts a decode: initialises c (finish it with codec_ctx_finish whatever
 * this returns), pushes path (NULL or "" for the root), and checks obj: it
 * must be an object (else a type error at path, or at kind, or at
 * "template"), no deeper than CODEC_MAX_DEPTH, and, when kind is given
 * and obj names its kind, of that kind. Reports over-long strings. Returns
 * -1 when the fields must not be read at all.
 */
int codec_begin(struct codec_ctx *c, const json_t *obj,
		struct field_errors *fe, const char *path, const char *kind)
	MUST_CHECK;
void codec_ctx_init(struct codec_ctx *c, struct field_errors *fe);
/* Frees the path; returns -1 when the decode added any error, else 0. */
int codec_ctx_finish(struct codec_ctx *c);
/*
 * The version of a Kueue object from its apiVersion, also stored in c->v.
 * Absent: v1beta1, the primary contract (kueue-api.md §0; list items carry
 * no apiVersion). Anything else is an error, and v1beta1 is used so the
 * remaining fields are still checked.
 */
enum api_version codec_kueue_version(struct codec_ctx *c, const json_t *obj);

/* Path segments: each push returns the mark codec_pop goes back to. */
size_t codec_push(struct codec_ctx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
size_t codec_push_field(struct codec_ctx *c, const char *name); /* .name */
size_t codec_push_index(struct codec_ctx *c, size_t i);         /* [i] */
size_t codec_push_key(struct codec_ctx *c, const char *key);    /* [key] */
void codec_pop(struct codec_ctx *c, size_t mark);

/* JSON type name as the API server says it ("integer", "object", ...). */
const char *codec_jtype(const json_t *j);
/* "<path>: Invalid value: "<type of j>": <path> in body must be of type
 * <want>", at key below the cursor (NULL: at the cursor). */
void codec_bad_type(struct codec_ctx *c, const char *key, const json_t *j,
		    const char *want);
/* o[key] unless absent or JSON null; borrowed. */
const json_t *codec_member(const json_t *o, const char *key);

/* ------------------------------------------------------------------ */
/* Field readers (conventions above) */

/* Strings: borrowed (valid while the tree lives) or new copies. */
const char *codec_v_str(struct codec_ctx *c, const char *key,
			const json_t *j);
const char *codec_str(struct codec_ctx *c, const json_t *o, const char *key);
char *codec_strdup(struct codec_ctx *c, const json_t *o, const char *key);
/* Like codec_strdup, but a new "" when absent (never-NULL fields). */
char *codec_strdup_empty(struct codec_ctx *c, const json_t *o,
			 const char *key);
/* Integers; int32 values outside its range are errors, not truncated. */
bool codec_i64(struct codec_ctx *c, const json_t *o, const char *key,
	       int64_t *out);
bool codec_i32(struct codec_ctx *c, const json_t *o, const char *key,
	       int32_t *out);
bool codec_bool(struct codec_ctx *c, const json_t *o, const char *key,
		bool *out);
/* metav1.Time: RFC 3339 -> epoch ms. */
bool codec_time(struct codec_ctx *c, const json_t *o, const char *key,
		int64_t *ms);
/* resource.Quantity (int-or-string) -> milli-units. */
bool codec_qty(struct codec_ctx *c, const json_t *o, const char *key,
	       int64_t *milli);

/* An enum: the spellings a version accepts and their values. A hidden
 * entry is accepted but not listed in the "supported values" message
 * ("" for a toleration's operator means Equal). Tables end with a NULL
 * name. */
struct codec_enum {
	const char *name;
	int value;
	bool hidden;
};

bool codec_enum(struct codec_ctx *c, const json_t *o, const char *key,
		const struct codec_enum *tab, int *out);

/* o[key] as an object (borrowed), or NULL. */
const json_t *codec_obj(struct codec_ctx *c, const json_t *o, const char *key);
/* Same, with key pushed onto the path when found (pop with *mark). */
const json_t *codec_enter(struct codec_ctx *c, const json_t *o,
			  const char *key, size_t *mark);
/* o[key] as an array: its size (0 when absent or not an array) and, in
 * *arr, the array; key is pushed in every case: always pop *mark. */
size_t codec_arr_begin(struct codec_ctx *c, const json_t *o, const char *key,
		       const json_t **arr, size_t *mark);
/* Item i of arr as an object with "[i]" pushed (pop with *mark), or NULL
 * (a type error reported, nothing pushed). */
const json_t *codec_elem_obj(struct codec_ctx *c, const json_t *arr, size_t i,
			     size_t *mark);
/* []string into a new array of new strings (items of another type are
 * reported and skipped); returns the count, *out NULL when 0. */
size_t codec_strv(struct codec_ctx *c, const json_t *o, const char *key,
		  char ***out);
/* map[string]string entries added to out. */
void codec_map(struct codec_ctx *c, const json_t *o, const char *key,
	       struct smap *out);
/* corev1.ResourceList entries added to out; true when the map is there. */
bool codec_reslist(struct codec_ctx *c, const json_t *o, const char *key,
		   struct reslist *out);
/* A sub-object kept opaque, as new compact JSON; want: "object"/"array". */
char *codec_opaque(struct codec_ctx *c, const json_t *o, const char *key,
		   const char *want);

/* ------------------------------------------------------------------ */
/* Kubernetes shapes (codec_k8s.c) */

/* obj.metadata into m. */
void codec_read_meta(struct codec_ctx *c, const json_t *obj,
		     struct object_meta *m);
/* status.conditions into out (metav1.Condition; Job conditions too). */
void codec_read_conditions(struct codec_ctx *c, const json_t *status,
			   struct conditions *out);
/* A metav1.LabelSelector at o[key]; true when present (nil and {} differ:
 * a nil namespaceSelector matches nothing). */
bool codec_read_selector(struct codec_ctx *c, const json_t *o,
			 const char *key, struct label_selector *out);
/* o.tolerations into a new array; returns the count. */
size_t codec_read_tolerations(struct codec_ctx *c, const json_t *o,
			      struct toleration **out);
/* One core/v1 Taint (effect required; timeAdded kept as text). */
void codec_read_taint(struct codec_ctx *c, const json_t *e, struct taint *t);
/* The required PodTemplateSpec o.template: absent is "Required value",
 * null or another type a type error. */
void codec_read_template(struct codec_ctx *c, const json_t *o,
			 struct pod_template *out);

#endif
