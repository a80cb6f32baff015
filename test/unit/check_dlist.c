/* Suite "dlist": the intrusive list of base/: order of insertion at
 * either end, removal from the front, middle and back, removal while
 * iterating, and removing an element that is on no list. */
#include <stdlib.h>

#include "base/dlist.h"
#include "suites.h"
#include "test/support/support.h"

struct item {
	int v;
	struct dlist link;
};

/* The values of head in order, as digits: "132". */
static const char *order(struct dlist *head)
{
	static char buf[32];
	struct dlist *pos;
	size_t n = 0;

	DLIST_FOREACH(pos, head) {
		struct item *it = DLIST_ENTRY(pos, struct item, link);

		buf[n++] = (char)('0' + it->v);
		/* each link agrees with its neighbours */
		ck_assert_ptr_eq(pos->next->prev, pos);
		ck_assert_ptr_eq(pos->prev->next, pos);
	}
	buf[n] = '\0';
	return buf;
}

START_TEST(insert_remove)
{
	struct dlist head = DLIST_INIT(head);
	struct item it[5];

	ck_assert(dlist_empty(&head));
	ck_assert_ptr_null(dlist_first(&head));
	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		dlist_init(&it[i].link);
		ck_assert(dlist_empty(&it[i].link)); /* on no list */
	}
	dlist_insert_before(&head, &it[1].link); /* back */
	dlist_insert_before(&head, &it[2].link);
	dlist_insert_after(&head, &it[0].link);  /* front */
	dlist_insert_after(&it[2].link, &it[4].link);
	dlist_insert_before(&it[4].link, &it[3].link);
	ck_assert_str_eq(order(&head), "01234");
	ck_assert_ptr_eq(dlist_first(&head), &it[0].link);
	dlist_remove(&it[2].link); /* middle */
	ck_assert_str_eq(order(&head), "0134");
	ck_assert(dlist_empty(&it[2].link));
	dlist_remove(&it[2].link); /* again: harmless */
	ck_assert_str_eq(order(&head), "0134");
	dlist_remove(&it[0].link); /* front */
	dlist_remove(&it[4].link); /* back */
	ck_assert_str_eq(order(&head), "13");
	ck_assert_ptr_eq(head.prev, &it[3].link);
	dlist_remove(&it[1].link);
	dlist_remove(&it[3].link);
	ck_assert(dlist_empty(&head));
	ck_assert_str_eq(order(&head), "");
}
END_TEST

START_TEST(remove_while_iterating)
{
	struct dlist head, *pos, *tmp;
	int left = 0;

	dlist_init(&head);
	for (int i = 0; i < 8; i++) {
		struct item *it = calloc(1, sizeof(*it));

		it->v = i;
		dlist_insert_before(&head, &it->link);
	}
	DLIST_FOREACH_SAFE(pos, tmp, &head) {
		struct item *it = DLIST_ENTRY(pos, struct item, link);

		if (it->v % 2 == 0) {
			dlist_remove(pos);
			free(it);
		}
	}
	ck_assert_str_eq(order(&head), "1357");
	DLIST_FOREACH_SAFE(pos, tmp, &head) {
		dlist_remove(pos);
		free(DLIST_ENTRY(pos, struct item, link));
		left++;
	}
	ck_assert_int_eq(left, 4);
	ck_assert(dlist_empty(&head));
}
END_TEST

Suite *dlist_suite(void)
{
	Suite *s = suite_create("dlist");
	TCase *tc = tcase_create("list");

	tcase_add_test(tc, insert_remove);
	tcase_add_test(tc, remove_while_iterating);
	suite_add_tcase(s, tc);
	return s;
}
