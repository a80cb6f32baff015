/* Suite "jx": the JSON accessors answer NULL (or the default) for
 * anything that is not what they read, and borrow from the object. */
#include <jansson.h>
#include <stdlib.h>

#include "base/jx.h"
#include "suites.h"
#include "test/support/support.h"

START_TEST(accessors)
{
	json_t *o = t_json("{\"metadata\":{\"name\":\"a\",\"namespace\":"
			   "\"ns\",\"resourceVersion\":\"42\"},\"s\":\"x\","
			   "\"n\":1,\"o\":{\"p\":{\"q\":\"deep\"}},"
			   "\"a\":[1]}");
	json_t *arr = t_json("[1]");

	ck_assert_str_eq(jx_str(o, "s"), "x");
	ck_assert_ptr_null(jx_str(o, "n"));       /* not a string */
	ck_assert_ptr_null(jx_str(o, "missing"));
	ck_assert_ptr_null(jx_str(NULL, "s"));
	ck_assert_ptr_null(jx_str(arr, "s"));     /* not an object */
	ck_assert_str_eq(jx_text(o, "n"), "");
	ck_assert_str_eq(jx_text(o, "s"), "x");
	ck_assert_str_eq(jx_text(NULL, "s"), "");
	ck_assert_ptr_eq(jx_obj_peek(o, "o"), json_object_get(o, "o"));
	ck_assert_ptr_null(jx_obj_peek(o, "a"));
	ck_assert_ptr_null(jx_obj_peek(o, "s"));
	ck_assert_ptr_eq(jx_arr_peek(o, "a"), json_object_get(o, "a"));
	ck_assert_ptr_null(jx_arr_peek(o, "o"));
	ck_assert_str_eq(json_string_value(JX_DIG(o, "o", "p", "q")), "deep");
	ck_assert_ptr_null(JX_DIG(o, "o", "x", "q"));
	ck_assert_ptr_null(JX_DIG(o, "s", "p"));
	ck_assert_ptr_null(JX_DIG(NULL, "o"));
	ck_assert_str_eq(JX_STR(o, "o", "p", "q"), "deep");
	ck_assert_str_eq(JX_STR(o, "s"), "x");
	ck_assert_ptr_null(JX_STR(o, "o", "p"));   /* an object */
	ck_assert_ptr_null(JX_STR(o, "n"));
	ck_assert_str_eq(jx_name(o), "a");
	ck_assert_str_eq(jx_namespace(o), "ns");
	ck_assert_str_eq(jx_rv(o), "42");
	ck_assert_str_eq(jx_meta_str(o, "name"), "a");
	ck_assert_uint_eq(jx_rv_u64(o), 42);
	ck_assert_uint_eq(jx_rv_u64(arr), 0);
	ck_assert_ptr_null(jx_name(NULL));
	ck_assert_refcount(o, 1); /* nothing taken */
	json_decref(o);
	json_decref(arr);
}
END_TEST

Suite *jx_suite(void)
{
	Suite *s = suite_create("jx");
	TCase *tc = tcase_create("accessors");

	tcase_add_test(tc, accessors);
	suite_add_tcase(s, tc);
	return s;
}
