/* Suite "hmap": the string-keyed hash map of base/ (moved here with the
 * module from the manager's suite): growth, deletion with tombstones,
 * replacement, iteration that removes, and the invariant check after each
 * step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "suites.h"
#include "test/support/support.h"

START_TEST(grow_delete)
{
	struct hmap m = HMAP_INIT;
	static char keys[5000][24];
	const char *k;
	size_t pos = 0, n = 0;
	void *v;

	for (int i = 0; i < 5000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "ns/wl-%d", i);
		ck_assert_ptr_null(hmap_put(&m, keys[i], keys[i]));
	}
	ck_assert(hmap_check(&m));
	ck_assert_uint_eq(hmap_count(&m), 5000);
	for (int i = 0; i < 5000; i += 2)
		ck_assert_ptr_eq(hmap_del(&m, keys[i]), keys[i]);
	ck_assert(hmap_check(&m));
	ck_assert_ptr_null(hmap_del(&m, "ns/wl-0"));
	for (int i = 0; i < 5000; i++)
		ck_assert_ptr_eq(hmap_get(&m, keys[i]),
				 i % 2 ? keys[i] : NULL);
	/* tombstones are reused and swept; replacing returns the old */
	for (int i = 0; i < 5000; i += 2)
		ck_assert_ptr_null(hmap_put(&m, keys[i], keys[i]));
	ck_assert(hmap_check(&m));
	ck_assert_ptr_eq(hmap_put(&m, keys[1], keys[3]), keys[1]);
	ck_assert_ptr_eq(hmap_get(&m, "ns/wl-1"), keys[3]);
	while ((v = hmap_next(&m, &pos, &k))) {
		ck_assert_ptr_nonnull(k);
		n++;
		if (n % 3 == 0)
			hmap_del(&m, k); /* removing the current entry */
	}
	ck_assert_uint_eq(n, 5000);
	ck_assert_uint_eq(hmap_count(&m), 5000 - 5000 / 3);
	ck_assert(hmap_check(&m));
	hmap_release(&m);
	ck_assert_ptr_null(hmap_get(&m, "x"));
	ck_assert_uint_eq(hmap_count(&m), 0);
}
END_TEST

/* Churn at a steady size: tombstones must not fill the table (a probe
 * that never meets an empty slot would spin forever). */
START_TEST(churn_keeps_free_slots)
{
	struct hmap m;
	static char keys[64][16];

	hmap_init(&m);
	for (int i = 0; i < 64; i++)
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 64; i++)
			hmap_put(&m, keys[i], keys[i]);
		for (int i = 0; i < 64; i++)
			ck_assert_ptr_eq(hmap_del(&m, keys[i]), keys[i]);
		ck_assert(hmap_check(&m));
		ck_assert_uint_lt(m.used, m.cap);
	}
	ck_assert_uint_eq(hmap_count(&m), 0);
	ck_assert_ptr_null(hmap_get(&m, "k1"));
	hmap_release(&m);
}
END_TEST

/* The key pointer is the caller's: a replacement stores the new one, so
 * a value that owns its key can be swapped for another. */
START_TEST(replace_takes_new_key)
{
	struct hmap m = HMAP_INIT;
	char *a = strdup("same"), *b = strdup("same");
	const char *k = NULL;
	size_t pos = 0;

	ck_assert_ptr_null(hmap_put(&m, a, a));
	ck_assert_ptr_eq(hmap_put(&m, b, b), a);
	free(a); /* the table must not read a any more */
	ck_assert_ptr_eq(hmap_get(&m, "same"), b);
	ck_assert_ptr_eq(hmap_next(&m, &pos, &k), b);
	ck_assert_ptr_eq(k, b);
	ck_assert_ptr_null(hmap_next(&m, &pos, &k));
	ck_assert(hmap_check(&m));
	hmap_release(&m);
	free(b);
}
END_TEST

Suite *hmap_suite(void)
{
	Suite *s = suite_create("hmap");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, grow_delete);
	tcase_add_test(tc, churn_keeps_free_slots);
	tcase_add_test(tc, replace_takes_new_key);
	suite_add_tcase(s, tc);
	return s;
}
