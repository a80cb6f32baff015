/*
 * yamlplain: go-yaml v2's resolve() for an untagged plain scalar, the rule
 * both of cueue's YAML readers share (config_yaml.c for the manager's
 * Configuration, yamljson.c for manifests), so one text means one value in
 * a config file and in a manifest, as it does to Kueue and to kubectl.
 * Pure: no I/O; allocates only a scratch copy, freed before it returns.
 */
#ifndef CONFIG_YAMLPLAIN_H
#define CONFIG_YAMLPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum yamlplain_type {
	YAMLPLAIN_NULL,
	YAMLPLAIN_BOOL,
	YAMLPLAIN_INT,   /* fits int64 */
	YAMLPLAIN_UINT,  /* > INT64_MAX */
	YAMLPLAIN_FLOAT, /* may be inf or nan (.inf, .nan); never out of
			    range */
	YAMLPLAIN_STR,   /* none of the above: the text stays a string */
};

struct yamlplain {
	enum yamlplain_type type; /* selects the field below */
	bool b;
	int64_t i;
	uint64_t u;
	double d;
};

/*
 * Resolves in[0..n) (need not be NUL-terminated; a NUL inside makes it a
 * string): the fixed table (y/yes/true/on and their false forms in go-yaml's
 * three spellings; ~, null and the empty scalar; .inf, .nan), then by the
 * first byte: `.` -> a decimal float; a digit or sign -> with `_` removed,
 * Go's ParseInt(s, 0, 64) (0x, 0o, 0b, leading-0 octal), then ParseUint,
 * then a decimal float that ParseFloat accepts (1e999 is out of range, so a
 * string, as in Go); anything else, timestamps included, a string.
 */
void yamlplain_resolve(const char *in, size_t n, struct yamlplain *out);

#endif
