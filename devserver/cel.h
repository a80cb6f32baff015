/*
 * cel: the subset of the Common Expression Language that CRD validation
 * rules (x-kubernetes-validations) use, compiled once and evaluated over
 * borrowed jansson values, as apiextensions-apiserver evaluates them with
 * cel-go. Pure: no I/O, no globals; a compiled program is immutable, so
 * any number of threads may evaluate it at once.
 *
 * The subset: int, double, string (quoted '...', "...", triple-quoted,
 * raw r'...', with CEL's escapes), bool and null literals, list literals;
 * self and oldSelf; field selection, indexing (lists by int, maps by
 * string); has(); == != < <= > >= (heterogeneous equality is false, lists
 * and maps compare deeply, int and double compare numerically); && || !
 * with CEL's commutative error absorption; ?:; + - * / % (int overflow is
 * an error); + on strings and lists; in; size() (strings in code points);
 * the macros all, exists, exists_one, filter, map over lists and map
 * keys; startsWith, endsWith, contains, matches (RE2 patterns run as
 * POSIX ERE: \d \w \s and (?:) rewritten, what ERE would misread refused).
 * Anything else (uint and bytes literals, map literals, the Kubernetes
 * library functions, optional syntax) is refused at compile time with a
 * cel-go style message and position, never at evaluation.
 *
 * JSON maps to CEL as: integer -> int, real -> double, string, bool,
 * null, array -> list, object -> map. There is no static type check: a
 * type mismatch is the evaluation error "no such overload".
 *
 * Bounds: a source is at most CEL_MAX_SOURCE bytes, nests at most 250
 * levels, and every evaluation counts a cost (one per operation, per
 * comprehension step, per element compared or copied) and stops with
 * CEL_COST_LIMIT past the limit it is given, so a hostile rule cannot
 * hang or exhaust the server.
 */
#ifndef DEVSERVER_CEL_H
#define DEVSERVER_CEL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

struct json_t;

/* kube-apiserver's limits (k8s.io/apiserver/pkg/apis/cel/config.go): one
 * evaluation, and all the rules of one object together. */
#define CEL_PER_CALL_LIMIT 1000000
#define CEL_RUNTIME_BUDGET 10000000

#define CEL_MAX_SOURCE 65536 /* bytes of one expression */

struct cel_program;

/* What the compiler knows of a program's result type without a schema. */
enum cel_type {
	CEL_TYPE_DYN,    /* known only at evaluation */
	CEL_TYPE_BOOL,
	CEL_TYPE_STRING,
	CEL_TYPE_OTHER,  /* int, double, null, list: never bool or string */
};

/*
 * Compiles src. Returns a new program (free with cel_program_free), or
 * NULL with err set to cel-go's issue format:
 *   ERROR: <input>:1:6: undeclared reference to 'foo' (in container '')
 *    | self.foo(1)
 *    | .....^
 */
struct cel_program *cel_compile(const char *src, struct err *err) MUST_CHECK;
void cel_program_free(struct cel_program *p);

/* True when the program references oldSelf (a transition rule). */
bool cel_uses_old_self(const struct cel_program *p);

enum cel_type cel_result_type(const struct cel_program *p);

enum cel_outcome {
	CEL_OK,          /* *out holds the result */
	CEL_ERROR,       /* evaluation error; err holds cel-go's words
			    ("no such key: cohort", "no such overload") */
	CEL_COST_LIMIT,  /* the cost passed limit; err holds
			    "operation cancelled: actual cost limit exceeded" */
};

/*
 * Evaluates p with self and old_self bound (both borrowed; old_self may
 * be NULL when p does not use it). *cost receives the cost spent (also
 * on failure). On CEL_OK, *out is a new reference (json true/false for
 * a rule, a string for a message expression); otherwise *out is NULL and
 * err is set.
 */
enum cel_outcome cel_eval(const struct cel_program *p,
			  const struct json_t *self,
			  const struct json_t *old_self, uint64_t limit,
			  uint64_t *cost, struct json_t **out,
			  struct err *err) MUST_CHECK;

#endif
