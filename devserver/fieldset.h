/*
 * fieldset: structured-merge-diff's field sets (sigs.k8s.io/
 * structured-merge-diff fieldpath.Set) and their FieldsV1 encoding, the
 * value of metadata.managedFields[].fieldsV1.
 *
 * A set is a tree. Each node is reached from its parent by one path
 * element, kept as its FieldsV1 key text: "f:<field>" (a field of a map or
 * struct), "k:<json>" (an item of a list-type map, by its keys, e.g.
 * k:{"name":"main"}), "v:<json>" (an item of a list-type set), "i:<n>"
 * (an index). A node is a member of the set (the field itself is owned)
 * or only leads to members below it, or both; FieldsV1 writes a member
 * without children as {}, and a member with children with a "." key:
 * {"f:labels":{".":{},"f:app":{}}}. Children are kept in
 * structured-merge-diff's order (fields, keys, values, indexes; by name
 * or text within each), which is also the order of the encoding.
 *
 * Pure data: no I/O, no JSON library in the set itself (fset_from_json
 * reads a jansson tree, for managedFields that arrive parsed). Every
 * function takes borrowed sets and returns new ones or changes only its
 * first argument, as documented.
 */
#ifndef DEVSERVER_FIELDSET_H
#define DEVSERVER_FIELDSET_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

/* One node: the root (pe NULL) or a child reached by pe. */
struct fset {
	char *pe;             /* owned FieldsV1 key; NULL at the root */
	bool member;          /* the path to this node is in the set */
	struct fset *kids;    /* owned; n children sorted by fset_pe_cmp */
	size_t n;
	size_t cap;
};

/* A new empty set (free with fset_free). */
struct fset *fset_new(void);
void fset_free(struct fset *s);
/* A deep copy (new). */
struct fset *fset_copy(const struct fset *s);

/* structured-merge-diff's PathElement order over FieldsV1 key texts. */
int fset_pe_cmp(const char *a, const char *b);

/* The child of s reached by pe (n bytes), made (not a member) when absent
 * and make is set, else NULL. Borrowed from s: valid until s changes. */
struct fset *fset_child(struct fset *s, const char *pe, size_t n, bool make);
const struct fset *fset_get(const struct fset *s, const char *pe);

/* True when no node is a member. */
bool fset_is_empty(const struct fset *s);
/* dst becomes dst ∪ src. */
void fset_union(struct fset *dst, const struct fset *src);
/* dst becomes dst − src (members of src stop being members of dst);
 * nodes left with nothing are dropped. Returns whether a member went. */
bool fset_subtract(struct fset *dst, const struct fset *src);
/* a ∩ b (new). */
struct fset *fset_intersect(const struct fset *a, const struct fset *b);
/* Removes the child pe of s and everything below it. */
void fset_drop(struct fset *s, const char *pe);
/* Drops nodes that are neither members nor lead to one. */
void fset_prune(struct fset *s);

/*
 * Parses FieldsV1 JSON text (len bytes). Returns a new set, or NULL when
 * the text is not a JSON object of objects whose keys (other than ".")
 * start with f:, k:, v: or i: (fieldpath.SetFromValue's rule).
 */
struct fset *fset_parse(const char *text, size_t len);
/* The same from a parsed jansson object (borrowed); NULL when invalid. */
struct fset *fset_from_json(const struct json_t *fields);
/* The compact FieldsV1 text of s: a new NUL-terminated string, its length
 * in *len when len is not NULL. */
char *fset_encode(const struct fset *s, size_t *len);

/*
 * Calls fn for every member, in fieldpath.Set.Iterate's order (a node's
 * member children first, then the subtrees below its children), with the
 * path as an array of n key texts (borrowed for the call).
 */
typedef void fset_each_fn(const char *const *path, size_t n, void *cls);
void fset_each(const struct fset *s, fset_each_fn *fn, void *cls);

#endif
