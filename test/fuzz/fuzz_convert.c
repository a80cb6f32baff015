/* libFuzzer harness: codec_convert both ways. Beyond not crashing, a
 * round trip (to the other version and back) must be stable: a second
 * one changes nothing. (The first may stash fields the source version
 * does not know, e.g. a v1beta2 object carrying spec.admissionChecks.) */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/codec.h"

#define V1 "kueue.x-k8s.io/v1beta1"
#define V2 "kueue.x-k8s.io/v1beta2"

static bool has_stash(const json_t *o)
{
	const json_t *ann = json_object_get(json_object_get(o, "metadata"),
					    "annotations");
	return json_object_get(ann, "kueue.x-k8s.io/conversion-data") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY,
				NULL);
	const char *av;

	if (!in)
		return 0;
	av = json_string_value(json_object_get(in, "apiVersion"));
	for (int i = 0; i < 2; i++) {
		const char *to = i ? V1 : V2, *back = i ? V2 : V1;
		json_t *mid = NULL, *out = NULL;
		struct err e;

		if (codec_convert(in, to, &mid, &e) != 0)
			continue;
		if (codec_convert(mid, back, &out, &e) != 0)
			abort();
		/* After one round trip, a second is the identity (the first
		 * may legitimately stash fields the source version does not
		 * know, e.g. a v1beta2 object carrying spec.admissionChecks). */
		if (av && !strcmp(av, back) && !has_stash(in)) {
			json_t *mid2 = NULL, *out2 = NULL;

			if (codec_convert(out, to, &mid2, &e) != 0 ||
			    codec_convert(mid2, back, &out2, &e) != 0)
				abort();
			if (!json_equal(out, out2)) {
				char *a = json_dumps(out, JSON_SORT_KEYS | JSON_ENCODE_ANY);
				char *b = json_dumps(out2, JSON_SORT_KEYS | JSON_ENCODE_ANY);
				fprintf(stderr, "round trip not stable:\n in=%s\nout=%s\n", a, b);
				abort();
			}
			json_decref(mid2);
			json_decref(out2);
		}
		json_decref(mid);
		json_decref(out);
	}
	json_decref(in);
	return 0;
}
