/* libFuzzer harness: yamljson_load_string, then every document through
 * the kind's decoder. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "config/yamljson.h"
#include "model/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = NULL, *d;
	size_t *lines = NULL, i;
	struct err e;

	if (yamljson_load_string_lines((const char *)data, size, &docs,
				       &lines, &e) != 0)
		return 0;
	json_array_foreach(docs, i, d) {
		free(json_dumps(d, JSON_ENCODE_ANY));
	}
	json_decref(docs);
	free(lines);
	return 0;
}
