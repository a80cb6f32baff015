/* Suite "svec": string vectors are deep copies and free what they own
 * (ASan reports any leak or double free). */
#include <stdlib.h>
#include <string.h>

#include "model/svec.h"
#include "suites.h"
#include "test/support/support.h"

START_TEST(copy_and_free)
{
	const char *const in[] = { "a", "", "ccc" };
	char **c = svec_copy(in, 3);

	ck_assert_ptr_nonnull(c);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_str_eq(c[i], in[i]);
		ck_assert_ptr_ne(c[i], in[i]);
	}
	svec_free(c, 3);
	ck_assert_ptr_null(svec_copy(in, 0));
	svec_free(NULL, 0);
}
END_TEST

START_TEST(sort_order)
{
	const char *v[] = { "b", "", "ab", "a", "b" };
	char *w[] = { (char *)"z", (char *)"y" };

	qsort(v, 5, sizeof(*v), svec_cmp);
	ck_assert_str_eq(v[0], "");
	ck_assert_str_eq(v[1], "a");
	ck_assert_str_eq(v[2], "ab");
	ck_assert_str_eq(v[3], "b");
	ck_assert_str_eq(v[4], "b");
	qsort(w, 2, sizeof(*w), svec_cmp); /* char * elements too */
	ck_assert_str_eq(w[0], "y");
}
END_TEST

Suite *svec_suite(void)
{
	Suite *s = suite_create("svec");
	TCase *tc = tcase_create("lifecycle");

	tcase_add_test(tc, copy_and_free);
	tcase_add_test(tc, sort_order);
	suite_add_tcase(s, tc);
	return s;
}
