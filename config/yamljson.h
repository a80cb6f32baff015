/*
 * yamljson: YAML manifests -> JSON (jansson) trees, read the way kubectl
 * reads them.
 *
 * Kubernetes turns YAML into JSON with sigs.k8s.io/yaml: go-yaml v2 (YAML
 * 1.1 scalar rules) decodes each `---` document, the result is converted
 * to JSON-able values and run through encoding/json. cueue must see the
 * same JSON for the same file, so this module follows that pipeline rule
 * by rule (the list is at the top of yamljson.c) rather than YAML 1.2:
 * `yes`/`on`/`y` are booleans, `017` is octal, `1_000` is 1000, `2.0` is
 * the integer 2 (encoding/json prints it as `2`), quoted scalars are
 * always strings, mapping keys are turned into strings (`true`, `1`),
 * anchors and aliases are expanded, `<<` merges.
 *
 * Used by the unit tests, the devserver's --preload and the manager's
 * --config. It owns nothing between calls and never logs. libyaml does
 * the parsing; nothing outside config/ includes <yaml.h>.
 *
 * A deliberate exception to STYLE P3(c), which names the only holders of
 * json_t: producing JSON trees is this module's whole job. It stays out of
 * the core (config/, not model/), and its trees reach the structs only
 * through model/codec.h.
 */
#ifndef CONFIG_YAMLJSON_H
#define CONFIG_YAMLJSON_H

#include <stddef.h>

#include "model/errors.h"

struct json_t;

/* Largest input accepted, in bytes; a Kubernetes object is at most ~1.5
 * MiB, so this is room for a big multi-document file, not a limit users
 * should meet. */
#define YAMLJSON_MAX_BYTES ((size_t)64 << 20)
/* Deepest nesting of sequences and mappings, counted after alias
 * expansion; the root collection is level 1. */
#define YAMLJSON_MAX_DEPTH 256
/* Most nodes alias expansion may add in one call, over all documents.
 * Each document must also pass go-yaml's own "excessive aliasing" ratio
 * (at most 99% of a small document may come from aliases, ~10% of a
 * huge one), so what kubectl rejects is rejected here too. */
#define YAMLJSON_MAX_ALIAS_NODES ((size_t)1000000)

/*
 * Parses the len bytes at text (need not be NUL-terminated) as a stream of
 * YAML documents. On success returns 0 and sets *docs_out to a new JSON
 * array holding one value per document, in order; documents that are
 * empty, only comments, or null (`~`, `null`) are skipped, as kubectl
 * skips them, so the array may be empty. A document need not be a
 * mapping; callers check.
 *
 * On failure returns -1, leaves *docs_out NULL and fills err with one
 * line naming where the problem is, 1-based:
 *   "line 3, column 5: mapping values are not allowed in this context"
 * Failures: malformed YAML, input over YAMLJSON_MAX_BYTES, nesting over
 * YAMLJSON_MAX_DEPTH, unknown or self-containing anchors, excessive
 * aliasing, keys that cannot become JSON strings (null, collections),
 * `.inf`/`.nan` values, bad `<<` merges, values that contradict their
 * explicit tag (`!!int abc`).
 */
int yamljson_load_string(const char *text, size_t len,
			 struct json_t **docs_out, struct err *err) MUST_CHECK;

/*
 * As yamljson_load_string for the contents of the file at path. The error
 * message starts with the path ("x.yaml: line 3, column 5: ..."), and also
 * covers files that cannot be read or are larger than YAMLJSON_MAX_BYTES.
 */
int yamljson_load_file(const char *path, struct json_t **docs_out,
		       struct err *err) MUST_CHECK;

/*
 * As the two loaders above, and also sets *lines_out (when lines_out is
 * not NULL) to a new array (free() it) of json_array_size(*docs_out)
 * entries: the 1-based line where each returned document starts (its
 * `---`, or its first token when the marker is implicit), so callers can
 * say "document at line 23: ...". With no documents *lines_out may be
 * NULL. On failure *lines_out is NULL.
 */
int yamljson_load_string_lines(const char *text, size_t len,
			       struct json_t **docs_out, size_t **lines_out,
			       struct err *err) MUST_CHECK;
int yamljson_load_file_lines(const char *path, struct json_t **docs_out,
			     size_t **lines_out, struct err *err) MUST_CHECK;

#endif
