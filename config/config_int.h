/*
 * config_int: what the four files of the config module share: config.c
 * (the field table, the walk, defaults, the loaders), config_yaml.c (the
 * YAML tree, scalar resolution, Go durations), config_types.c (the
 * generic setters) and config_validate.c (the rules). Private: only these
 * and their unit tests (test/unit/check_config.c, for the duration
 * helpers) include it. It never names a libyaml type, so the setters and
 * the rules are read without libyaml's headers.
 */
#ifndef CONFIG_CONFIG_INT_H
#define CONFIG_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "model/errors.h"

/* ------------------------------------------------------------------ */
/* The YAML tree (config_yaml.c builds it from libyaml's events) */

enum cfg_kind {
	CFG_N_SCALAR,
	CFG_N_SEQ,
	CFG_N_MAP,
};

/* How a scalar was written, which decides what it resolves to. */
enum cfg_style {
	CFG_S_PLAIN,  /* untagged plain: YAML 1.1 resolution (go-yaml v2) */
	CFG_S_QUOTED, /* quoted or block, or tagged !!str: always a string */
	CFG_S_TAGGED, /* tagged !!int, !!float, !!bool or !!null: resolved as
		       * plain, then checked against the tag */
};

/* One node. Aliases are not nodes: an alias is the index of the node its
 * anchor names, so a subtree may be reached twice (the walk counts visits,
 * see CFG_MAX_VISITS). */
struct cfg_node {
	enum cfg_kind kind;
	size_t line, col;    /* 1-based start of the node (its anchor/tag) */
	enum cfg_style style;/* scalars only */
	char *tag;           /* owned; scalars with an explicit tag: "!!int" */
	char *text;          /* owned; scalar text, NUL-terminated */
	size_t len;          /* bytes in text (may hold NULs) */
	size_t *kids;        /* owned; seq: items; map: key, value, key, ... */
	size_t nkids;        /* entries in kids (twice the pairs for maps) */
	size_t capkids;
	bool merge;          /* scalar only: a `<<` merge key */
	bool done;           /* its end event was seen (aliases need it) */
};

struct cfg_doc {
	struct cfg_node *v;  /* owned; v[0] is unused (0 = "no node") */
	size_t n, cap;
	size_t root;         /* index of the document's root, 0 when none */
};

/* Most node visits one load may make: aliases can make the walk see a
 * subtree many times, and a 1 MiB file must not cost minutes. A file
 * without aliases has fewer than CONFIG_MAX_BYTES / 2 nodes. */
#define CFG_MAX_VISITS ((size_t)1 << 20)

/* What a scalar resolves to, as go-yaml v2 + encoding/json see it. */
enum cfg_sc {
	CFG_SC_NULL,
	CFG_SC_BOOL,
	CFG_SC_INT,   /* fits int64 */
	CFG_SC_UINT,  /* > INT64_MAX */
	CFG_SC_FLOAT, /* may be inf or nan */
	CFG_SC_STR,
};

struct cfg_scalar {
	enum cfg_sc type;
	bool b;
	int64_t i;
	uint64_t u;
	double d;
};

/* ------------------------------------------------------------------ */
/* The field table */

enum cfg_type {
	CFG_SECTION,     /* a mapping whose keys are the rows under it */
	CFG_STRING,      /* char * (owned) */
	CFG_BOOL,        /* bool */
	CFG_INT,         /* int64_t from a Go int */
	CFG_INT32,       /* int64_t from a Go int32 */
	CFG_FLOAT32,     /* double from a Go float32 */
	CFG_DURATION,    /* int64_t ms from a metav1.Duration ("5m") */
	CFG_NANOS,       /* int64_t ms from a time.Duration (integer ns) */
	CFG_ENUM,        /* an enum: aux is a struct cfg_enum */
	CFG_STRLIST,     /* struct config_strlist */
	CFG_INT32LIST,   /* struct config_int_list (Go []int32) */
	CFG_BOOLMAP,     /* struct config_bool_map */
	CFG_INTMAP,      /* struct config_int_map (Go int values) */
	CFG_FLOATMAP,    /* struct config_float_map (Go float64 values) */
	CFG_QUANTITYMAP, /* struct config_quantity_map (resource.Quantity) */
	CFG_SELECTOR,    /* struct config_selector (metav1.LabelSelector) */
	CFG_LIST,        /* a list of structs: aux is a struct cfg_list */
	CFG_OPAQUE,      /* any value, not kept: off is a bool "was given" */
};

/* Row flags. */
#define CFG_V1 1u      /* the key exists in v1beta1 */
#define CFG_V2 2u      /* the key exists in v1beta2 */
#define CFG_BOTH (CFG_V1 | CFG_V2)
#define CFG_ZERO1 4u   /* v1beta1: a zero value ("", 0, 0s, []) given in the
			* file also takes the default (Go's cmp.Or on a
			* non-pointer field) */
#define CFG_ZERO2 8u   /* the same for v1beta2 */
#define CFG_ZERO (CFG_ZERO1 | CFG_ZERO2)

/* An enum's names, in the order Kueue lists them in messages. */
struct cfg_enum {
	const char *const *names; /* NULL-terminated */
	const int *values;        /* the value of names[i] */
	bool empty_ok;            /* "" means the enum's value 0 */
};

struct cfg_field;

/* A list of structs: its rows are relative to one element. */
struct cfg_list {
	const struct cfg_field *rows;
	size_t nrows;
	size_t elem_size;    /* sizeof one element */
};

/*
 * Every list-of-structs member of struct config is { T *v; size_t n;
 * size_t cap; }. The generic code reads and writes it as this struct
 * through memcpy (never through a cast pointer), which relies only on
 * T * and void * sharing a representation, as they do on every target
 * cueue builds for.
 */
struct cfg_vec {
	void *v;
	size_t n;
	size_t cap;
};

struct cfg_field {
	const char *key;     /* dotted key below the table's root */
	enum cfg_type type;
	size_t off;          /* offsetof the member (sections: 0) */
	const char *dflt1;   /* v1beta1 default as text, NULL = none */
	const char *dflt2;   /* v1beta2 default as text, NULL = none */
	unsigned flags;      /* CFG_V1, CFG_V2, CFG_ZERO1, CFG_ZERO2 */
	const void *aux;     /* CFG_ENUM: cfg_enum; CFG_LIST: cfg_list */
	const char *hint;    /* one-version keys: said to the other version */
};

/* ------------------------------------------------------------------ */
/* A load in progress */

/* Where a value was written, for the positions of validation errors. */
struct cfg_pos {
	char *path;          /* owned; "waitForPodsReady.timeout" */
	size_t line, col;
};

/* The selectors whose matches validation checks (bad_selector). */
enum { CFG_SEL_MJNS, CFG_SEL_POD_NS, CFG_SEL_OTHER, CFG_SEL_N };

struct cfg_ctx {
	const char *file;           /* borrowed; the name in messages */
	enum config_api api;        /* 0 while apiVersion is unknown */
	struct config *c;           /* borrowed; being filled */
	struct cfg_doc doc;         /* owned */
	struct field_errors fe;     /* owned; problems, unsorted, texts
				     * without positions */
	size_t *fe_line, *fe_col;   /* owned; the position of each entry */
	size_t fe_cap, fe_marked;   /* allocated; entries with a position */
	bool *fe_derived;           /* owned; NULL, or one per entry once
				     * validation ran: true when the entry's
				     * value was not written (its position is
				     * an ancestor's) */
	struct cfg_pos *pos;        /* owned; every value set */
	size_t npos, cappos;
	bool *seen;                 /* borrowed; one per top-level row */
	struct config_given *seen_at; /* borrowed; one per top-level row:
				     * where its key is, when seen */
	size_t visits;              /* nodes visited; <= CFG_MAX_VISITS */
	bool too_many_visits;       /* reported once */
	bool bad_selector[CFG_SEL_N]; /* per selector: syntax errors
				     * found; its match rules are skipped */
};

/* Gives every entry of x->fe that has no position yet the position of
 * node n (or line:col when n is NULL). */
void config_mark(struct cfg_ctx *x, const struct cfg_node *n, size_t line,
		 size_t col);
/* Adds one problem whose text is "<path>: <fmt...>" (no Kubernetes
 * kind prefix), at node n. */
void config_add(struct cfg_ctx *x, const struct cfg_node *n,
		enum fe_kind kind, const char *path, const char *fmt, ...)
	PRINTF_LIKE(5, 6);
/* New array of n flags: true at each key equal to an earlier one (NULL
 * keys never match). */
bool *config_find_dups(char *const *keys, size_t n);
/* Records that path was written at node n. */
void config_note_pos(struct cfg_ctx *x, const char *path,
		     const struct cfg_node *n);
/* Counts one node visit; false (reported once) past CFG_MAX_VISITS. */
bool config_visit(struct cfg_ctx *x, const struct cfg_node *n);

/* Builds x->doc from the len bytes at text. -1 with one problem (a
 * whole-file one, with its position) added to x->fe when the YAML is
 * malformed or holds more than one document. */
int config_yaml_parse(struct cfg_ctx *x, const char *text, size_t len);
void config_doc_release(struct cfg_doc *d);

/* Resolves scalar n; -1 (problem added at path) when its text contradicts
 * its tag. */
int config_resolve(struct cfg_ctx *x, const struct cfg_node *n,
		   const char *path, struct cfg_scalar *out);
/* The key text of a mapping key node as Go makes it a string (a plain
 * `true` becomes "true", `0x1F` becomes "31"); new string, or NULL with a
 * problem added when the key cannot be a string. */
char *config_key_text(struct cfg_ctx *x, const struct cfg_node *k,
		      const char *path);

/*
 * A mapping's key/value pairs with `<<` merges expanded in place (a key
 * both merged and written is then a duplicate, as strict go-yaml v2 says);
 * *n_out pairs as node indexes key, value, key, value...; new array (free
 * it; NULL when empty).
 */
size_t *config_map_pairs(struct cfg_ctx *x, const struct cfg_node *m,
			 const char *path, size_t *n_out);

/* The top-level table's row of dotted key, or NULL. */
const struct cfg_field *config_row(const char *key);

/* Walks mapping node m against rows, storing into base. prefix is the
 * table key of m ("" for a table's root), path its display path ("" at
 * the file's root). seen: one flag per row, or NULL. */
void config_walk_map(struct cfg_ctx *x, size_t m, const struct cfg_field *rows,
		     size_t nrows, const char *prefix, const char *path,
		     char *base, bool *seen);

/* Stores value node v of row f at dst (base + f->off). */
void config_set(struct cfg_ctx *x, const struct cfg_field *f, size_t v,
		const char *path, void *dst);
/* Applies the default text of row f to dst (used by config_defaults). */
void config_set_default(const struct cfg_field *f, const char *text,
			void *dst);
/* Frees what row f owns at dst (rows of lists recurse). */
void config_release_field(const struct cfg_field *f, void *dst);

/* Kubernetes' type names for messages: "string", "integer", ... and the
 * value as a message shows it ("object", "array", 5, "text"). */
void config_type_error(struct cfg_ctx *x, size_t v, const char *path,
		       const char *want);

/* ------------------------------------------------------------------ */
/* Go's time.Duration */

/* time.ParseDuration: 0 and *ns set, or -1 and msg (>= 128 bytes) filled
 * with Go's message ("time: unknown unit \"x\" in duration \"5x\""). */
int config_parse_go_duration(const char *s, int64_t *ns, char *msg,
			     size_t msgsz);
/* Nanoseconds -> milliseconds, rounded away from zero. */
int64_t config_ns_to_ms(int64_t ns);
/* time.Duration.String() of ms milliseconds ("1h30m0s", "1.5s", "0s")
 * into buf (>= 40 bytes); returns buf. */
char *config_ms_string(int64_t ms, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* Validation (config_validate.c) */

struct cfg_vopts {
	bool skip_mjns_match;   /* managedJobsNamespaceSelector had syntax
				 * errors: its match rule is skipped */
	bool skip_pod_ns_match; /* the same for podOptions.namespaceSelector */
};

/* Every rule, into fe (paths, no positions). */
void config_check(const struct config *c, const struct cfg_vopts *vo,
		  struct field_errors *fe);

/* The built-in integrations Kueue knows, NULL-terminated, sorted. */
extern const char *const config_frameworks[];

#endif
