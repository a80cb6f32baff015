/* Test support helpers (see support.h). */
#include "test/support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "model/objects.h"
#include "model/resources.h"

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

json_t *t_jq(const char *text)
{
	char *s, *p;
	json_t *j;

	if (!text)
		return NULL;
	s = xstrdup(text);
	for (p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = t_json(s);
	free(s);
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

/* ---- time ---- */

int64_t t_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t t_wait_ms(int64_t ms)
{
	const char *v = getenv("CK_TIMEOUT_MULTIPLIER");
	double f = v ? atof(v) : 1.0;

	return f > 1.0 ? (int64_t)((double)ms * f) : ms;
}

void t_sleep_ms(int64_t ms)
{
	struct timespec d = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&d, NULL);
}

/* ---- Kueue objects ---- */

char *t_flavor_json(const char *name)
{
	return xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			 "\"kind\":\"ResourceFlavor\",\"metadata\":"
			 "{\"name\":\"%s\"}}", name);
}

char *t_cq_json(const char *name, const char *flavor, const char *cpu)
{
	return xasprintf(
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"%s\"},"
		"\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
		"\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"%s\","
		"\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"%s\"}]}]"
		"}]}}", name, flavor, cpu);
}

char *t_lq_json(const char *ns, const char *name, const char *cq)
{
	return xasprintf(
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"%s\","
		"\"namespace\":\"%s\"},\"spec\":{\"clusterQueue\":\"%s\"}}",
		name, ns, cq);
}

char *t_wl_json(const char *ns, const char *name, const char *lq,
		const char *cpu, int prio)
{
	return xasprintf(
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"Workload\",\"metadata\":{\"name\":\"%s\","
		"\"namespace\":\"%s\"},\"spec\":{\"queueName\":\"%s\","
		"\"priority\":%d,\"podSets\":[{\"name\":\"main\",\"count\":1,"
		"\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
		"\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
		"\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}}]}}",
		name, ns, lq, prio, cpu);
}

struct workload *t_workload(const char *ns, const char *name, int32_t prio,
			    int64_t created_ms, int32_t count, int64_t cpu_m)
{
	struct workload *w = xcalloc(1, sizeof(*w));
	struct pod_set *ps;
	struct container_res *c;

	w->meta.namespace = xstrdup(ns);
	w->meta.name = xstrdup(name);
	w->meta.uid = xasprintf("uid-%s", name);
	w->meta.creation_ms = created_ms;
	w->meta.generation = 1;
	w->has_priority = true;
	w->priority = prio;
	w->active = true;
	w->pod_sets = xcalloc(1, sizeof(*ps));
	w->npod_sets = 1;
	ps = &w->pod_sets[0];
	ps->name = xstrdup("main");
	ps->count = count;
	node_affinity_init(&ps->tmpl.affinity);
	ps->tmpl.containers = xcalloc(1, sizeof(*c));
	ps->tmpl.ncontainers = 1;
	c = &ps->tmpl.containers[0];
	c->name = xstrdup("c");
	reslist_set(&c->requests, "cpu", cpu_m);
	return w;
}
