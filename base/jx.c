/*
 * jx: the JSON accessors (see jx.h). Thin wrappers over jansson's getters,
 * which already answer NULL for a NULL or non-object argument; what these
 * add is the type check on the value and one name per meaning.
 */
#include "base/jx.h"

#include <jansson.h>
#include <stdlib.h>

const char *jx_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

const char *jx_text(const json_t *o, const char *key)
{
	const char *s = jx_str(o, key);

	return s ? s : "";
}

json_t *jx_obj_peek(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_object(v) ? v : NULL;
}

json_t *jx_arr_peek(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_array(v) ? v : NULL;
}

json_t *jx_dig_peek(const json_t *o, const char *const *keys)
{
	json_t *v = (json_t *)o;

	for (size_t i = 0; keys[i] && v; i++)
		v = json_object_get(v, keys[i]);
	return v;
}

const char *jx_dig_str(const json_t *o, const char *const *keys)
{
	return json_string_value(jx_dig_peek(o, keys));
}

const char *jx_meta_str(const json_t *obj, const char *key)
{
	return jx_str(json_object_get(obj, "metadata"), key);
}

const char *jx_name(const json_t *obj)
{
	return jx_meta_str(obj, "name");
}

const char *jx_namespace(const json_t *obj)
{
	return jx_meta_str(obj, "namespace");
}

const char *jx_rv(const json_t *obj)
{
	return jx_meta_str(obj, "resourceVersion");
}

uint64_t jx_rv_u64(const json_t *obj)
{
	const char *s = jx_rv(obj);

	return s ? (uint64_t)strtoull(s, NULL, 10) : 0;
}
