/* libFuzzer harness: codec_convert both ways. Oracles, for any input the
 * conversion accepts: the way back is accepted too, and so is a second
 * round trip; starting from the input's own version, the second round
 * trip changes nothing (the first may lose what the other version cannot
 * hold, as Kueue's conversion does, or respell a deprecated value);
 * metadata passes through untouched (no conversion annotation is ever
 * written); the input is not modified. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/codec.h"

#define V1 "kueue.x-k8s.io/v1beta1"
#define V2 "kueue.x-k8s.io/v1beta2"

static void must_equal(const json_t *a, const json_t *b, const char *what)
{
	char *x, *y;

	if ((!a && !b) || json_equal(a, b)) /* json_equal(NULL, NULL) is 0 */
		return;
	x = json_dumps(a, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	y = json_dumps(b, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fprintf(stderr, "%s:\n%s\n%s\n", what, x, y);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY,
				NULL);
	json_t *copy;
	const char *av;

	if (!in)
		return 0;
	copy = json_deep_copy(in);
	av = json_string_value(json_object_get(in, "apiVersion"));
	for (int i = 0; i < 2; i++) {
		const char *to = i ? V1 : V2, *back = i ? V2 : V1;
		json_t *mid = NULL, *out = NULL, *mid2 = NULL, *out2 = NULL;
		struct err e;

		/* Same version: a copy, which proves nothing about the input
		 * being convertible. */
		if (codec_convert(in, to, &mid, &e) != 0)
			continue;
		if (av && !strcmp(av, to)) {
			must_equal(mid, in, "same-version copy differs");
			json_decref(mid);
			continue;
		}
		must_equal(in, copy, "input modified");
		must_equal(json_object_get(mid, "metadata"),
			   json_object_get(in, "metadata"), "metadata changed");
		if (codec_convert(mid, back, &out, &e) != 0 ||
		    codec_convert(out, to, &mid2, &e) != 0 ||
		    codec_convert(mid2, back, &out2, &e) != 0) {
			fprintf(stderr, "way back refused: %s\n", e.msg);
			abort();
		}
		if (av && !strcmp(av, back))
			must_equal(out2, out, "second round trip not stable");
		json_decref(mid);
		json_decref(out);
		json_decref(mid2);
		json_decref(out2);
	}
	json_decref(copy);
	json_decref(in);
	return 0;
}
