/* Test support helpers (see support.h). */
#include "test/support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"

char *t_src_path(const char *rel)
{
	return xasprintf("%s/%s", TOP_SRCDIR, rel);
}

json_t *t_fixture_json(const char *name)
{
	char *path = xasprintf("%s/test/fixtures/%s", TOP_SRCDIR, name);
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	ck_assert_msg(j != NULL, "fixture %s: line %d: %s", path, e.line, e.text);
	free(path);
	return j;
}

json_t *t_json(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

	ck_assert_msg(j != NULL, "bad inline JSON (%s): %s", e.text, text);
	return j;
}

bool t_fe_contains(const struct field_errors *fe, const char *needle)
{
	for (size_t i = 0; i < fe->n; i++)
		if (strstr(fe->v[i].text, needle))
			return true;
	return false;
}

const char *t_fe_text(const struct field_errors *fe)
{
	static char buf[8192];
	char *s = field_errors_aggregate(fe);

	snprintf(buf, sizeof(buf), "%s", *s ? s : "(no errors)");
	free(s);
	return buf;
}
