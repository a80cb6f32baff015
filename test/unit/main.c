/*
 * The unit test runner: every test/unit/check_<module>.c suite in one
 * SRunner, one verdict. Suites are found by the Makefile (suites.h is
 * generated), so adding a module's tests needs no edit here.
 *
 * Fork mode isolates tests and enforces timeouts; run with CK_FORK=no to
 * debug a test in gdb. CK_RUN_SUITE / CK_RUN_CASE select a subset.
 */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

#define ADD_SUITE(name) srunner_add_suite(sr, name##_suite());

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	FOR_EACH_SUITE(ADD_SUITE)
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
