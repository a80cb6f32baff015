/* libFuzzer harness: quantity_parse; a parsed value's canonical string
 * must parse back to the same value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "model/resources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[QUANTITY_BUF];
	struct quantity q, r;
	struct err e;

	memcpy(s, data, size);
	s[size] = '\0';
	if (quantity_parse(s, &q, &e) == 0) {
		for (int f = 0; f < 3; f++) {
			quantity_format(q.milli, (enum qformat)f, buf, sizeof(buf));
			if (quantity_parse(buf, &r, &e) != 0 || r.milli != q.milli) {
				fprintf(stderr, "%s -> %lld -> %s\n", s,
					(long long)q.milli, buf);
				abort();
			}
		}
		(void)quantity_value(q.milli);
		(void)resource_units_milli("memory", q.milli);
		resource_format("memory", q.milli, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
