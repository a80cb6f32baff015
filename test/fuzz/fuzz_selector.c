/* libFuzzer harness: label_selector_parse; the printed form of a parsed
 * selector parses again to the same printed form. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct label_selector a = LABEL_SELECTOR_INIT, b = LABEL_SELECTOR_INIT;
	struct err e;

	memcpy(s, data, size);
	s[size] = '\0';
	if (label_selector_parse(s, &a, &e) == 0) {
		char *t = label_selector_string(&a), *u;
		struct field_errors fe = FIELD_ERRORS_INIT;
		struct smap labels = SMAP_INIT;

		smap_set(&labels, "a", "b");
		smap_set(&labels, "k", "5");
		(void)label_selector_matches(&a, &labels);
		label_selector_validate(&a, "spec.sel", &fe);
		if (label_selector_parse(t, &b, &e) != 0) {
			fprintf(stderr, "[%s] -> [%s] fails: %s\n", s, t, e.msg);
			abort();
		}
		u = label_selector_string(&b);
		if (strcmp(t, u)) {
			fprintf(stderr, "[%s] -> [%s] -> [%s]\n", s, t, u);
			abort();
		}
		label_selector_copy(&b, &a);
		free(t);
		free(u);
		field_errors_release(&fe);
		smap_release(&labels);
	}
	label_selector_release(&a);
	label_selector_release(&b);
	free(s);
	return 0;
}
