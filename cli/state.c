/*
 * state: kubectl cueue's connection and its scheduling state (cli.h):
 * the kubeconfig, two clients (the manager's, fenced; one for
 * simulate's dry-run create), the manager's Configuration, and the
 * manager in inspect mode fed from the lists.
 */
#include "cli/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "config/config.h"
#include "controller/kube.h"
#include "controller/kubeconfig.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "flavors/sched.h"
#include "model/jobwl.h"
#include "model/objects.h"
#include "model/podreq.h"
#include "model/respolicy.h"
#include "model/quantity.h"
#include "model/resources.h"

/* How long the lists may take before kubectl cueue gives up. */
#define CLI_SYNC_TIMEOUT_MS 120000
/* The manager's ConfigMaps, cueue's then Kueue's, and their key. */
static const char *const config_maps[][2] = {
	{ "cueue-system", "cueue-manager-config" },
	{ "kueue-system", "kueue-manager-config" },
};
#define CONFIG_KEY "controller_manager_config.yaml"

int64_t cli_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- one request, waited for ---- */

struct wait {
	bool done;
	long code;
	json_t *body;
	char msg[ERR_MAX];
};

static void wait_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct wait *w = ud;

	w->done = true;
	w->code = r->code;
	if (r->outcome == KUBE_OK) {
		w->body = body;
		return;
	}
	snprintf(w->msg, sizeof(w->msg), "%s",
		 r->message && *r->message ? r->message : "request failed");
	json_decref(body);
}

static long run_request(struct cli *c, struct kube *k,
			const struct kube_req *rq, json_t **out,
			struct err *err)
{
	struct wait w = { .done = false };
	struct kube_req r = *rq;

	r.done = wait_done;
	r.ud = &w;
	kube_submit(k, &r);
	while (!w.done)
		if (loop_run_once(c->l, 1000, err) < 0)
			return 0;
	if (w.body && out)
		*out = w.body;
	else
		json_decref(w.body);
	if (w.code < 200 || w.code > 299)
		err_set(err, "%s", w.msg);
	return w.code;
}

long cli_get(struct cli *c, const char *path, json_t **out, struct err *err)
{
	struct kube_req r = { .verb = KUBE_GET, .path = path };

	return run_request(c, c->k, &r, out, err);
}

long cli_create_dry_run(struct cli *c, const char *path, const json_t *body,
			json_t **out, struct err *err)
{
	char *p = xasprintf("%s?dryRun=All", path);
	struct kube_req r = { .verb = KUBE_POST, .path = p, .body = body,
			      .no_retry = true };
	long code = run_request(c, c->kw, &r, out, err);

	free(p);
	return code;
}

/* ---- the Configuration ---- */

static int load_config(struct cli *c, struct err *err)
{
	struct config_opts co = { .namespace_file = "" };

	c->cfg = xcalloc(1, sizeof(*c->cfg));
	if (c->o.config_file) {
		if (config_load_file2(c->o.config_file, &co, c->cfg, NULL,
				      err) < 0)
			return -1;
		c->config_source = c->o.config_file;
		return 0;
	}
	size_t ntry = c->o.config_map
			      ? 1
			      : sizeof(config_maps) / sizeof(config_maps[0]);

	for (size_t i = 0; i < ntry; i++) {
		char ns[254], name[254];
		char *path;
		json_t *cm = NULL;
		const char *text;
		long code;
		struct err e2 = { "" };

		if (c->o.config_map) {
			const char *slash = strchr(c->o.config_map, '/');

			if (!slash || (size_t)(slash - c->o.config_map) >=
					      sizeof(ns) ||
			    strlen(slash + 1) >= sizeof(name))
				return err_set(err, "--config-map: want "
					       "NAMESPACE/NAME, got \"%s\"",
					       c->o.config_map);
			snprintf(ns, sizeof(ns), "%.*s",
				 (int)(slash - c->o.config_map),
				 c->o.config_map);
			snprintf(name, sizeof(name), "%s", slash + 1);
		} else {
			snprintf(ns, sizeof(ns), "%s", config_maps[i][0]);
			snprintf(name, sizeof(name), "%s", config_maps[i][1]);
		}
		path = xasprintf("/api/v1/namespaces/%s/configmaps/%s", ns,
				 name);
		code = cli_get(c, path, &cm, &e2);
		free(path);
		if (code == 200) {
			text = jx_str(jx_obj_peek(cm, "data"), CONFIG_KEY);
			if (text) {
				char *src = xasprintf("configmap %s/%s", ns,
						      name);

				co.source_name = src;
				if (config_load_string2(text, strlen(text), &co,
							c->cfg, NULL,
							err) < 0) {
					free(src);
					json_decref(cm);
					return -1;
				}
				c->config_source = src;
				json_decref(cm);
				return 0;
			}
		}
		json_decref(cm);
		if (c->o.config_map)
			return err_set(err, "--config-map %s: %s",
				       c->o.config_map,
				       code == 200 ? "no key " CONFIG_KEY
						   : e2.msg);
	}
	config_defaults(c->cfg, CONFIG_API_V1BETA2, &co);
	c->config_source = "defaults (no manager ConfigMap readable)";
	/* the answers may then differ from the manager's: say so */
	fprintf(stderr, "kubectl-cueue: warning: the manager's Configuration "
		"was not found (ConfigMap %s/%s or %s/%s); answering with "
		"Kueue's defaults (pass --manager-config FILE or --config-map "
		"NS/NAME)\n", config_maps[0][0], config_maps[0][1],
		config_maps[1][0], config_maps[1][1]);
	return 0;
}

/* ---- open, load, close ---- */

int cli_open(struct cli *c, const struct cli_opts *o, struct err *err)
{
	struct loop_opts lo = { .handle_signals = false };
	struct kube_opts ko = { .user_agent = "kubectl-cueue", .qps = -1,
				.max_retries = 3 };

	memset(c, 0, sizeof(*c));
	c->o = *o;
	log_set_level(LOG_OFF);
	c->kc = xcalloc(1, sizeof(*c->kc));
	kubeconfig_init(c->kc);
	if (kubeconfig_discover_context(o->kubeconfig, o->context, NULL, c->kc,
					err) < 0)
		return -1;
	c->ns = o->ns && *o->ns ? o->ns : c->kc->ns ? c->kc->ns : "default";
	c->l = loop_new(&lo, err);
	if (!c->l)
		return -1;
	c->k = kube_new(c->l, c->kc, &ko, err);
	if (!c->k)
		return -1;
	c->kw = kube_new(c->l, c->kc, &ko, err);
	if (!c->kw)
		return -1;
	if (load_config(c, err) < 0)
		return -1;
	kube_fence(c->k); /* the manager never writes from here */
	c->now_ms = o->now_ms ? o->now_ms : wall_ms();
	return 0;
}

int cli_load(struct cli *c, struct err *err)
{
	struct manager_opts mo = { 0 };
	struct sched_decisions d = { 0 };
	int64_t t0 = cli_mono_us(), t1;

	c->rp = xcalloc(1, sizeof(*c->rp));
	manager_opts_from_config(&mo, c->cfg, &c->afs_res, &c->afs_w, c->rp);
	mo.inspect = true;
	c->m = manager_new(c->k, &mo);
	while (!manager_synced(c->m)) {
		if (cli_mono_us() - t0 > CLI_SYNC_TIMEOUT_MS * 1000LL)
			return err_set(err, "the lists did not complete in "
				       "%d s", CLI_SYNC_TIMEOUT_MS / 1000);
		if (manager_api_failing_ms(c->m) > 10000)
			return err_set(err, "cannot list the queueing "
				       "objects from %s (is the API server "
				       "up, and are cueue's CRDs installed?)",
				       c->kc->server);
		if (loop_run_once(c->l, 200, err) < 0)
			return -1;
	}
	c->s = manager_sched(c->m);
	if (!c->s)
		return err_set(err, "the scheduling state was not built");
	t1 = cli_mono_us();
	c->load_us = t1 - t0;
	/* The cycle the manager runs next: what it would admit now is
	 * assumed, what it found inadmissible is parked, as there. */
	sched_cycle(c->s, c->now_ms, &d);
	sched_decisions_release(&d);
	c->warm_us = cli_mono_us() - t1;
	return 0;
}

void cli_close(struct cli *c)
{
	manager_free(c->m);
	kube_free(c->k);
	kube_free(c->kw);
	loop_free(c->l);
	if (c->cfg)
		config_release(c->cfg);
	free(c->cfg);
	if (c->kc)
		kubeconfig_release(c->kc);
	free(c->kc);
	free((void *)c->afs_res);
	free(c->afs_w);
	if (c->rp)
		res_policy_release(c->rp);
	free(c->rp);
	if (c->config_source && !strncmp(c->config_source, "configmap ", 10))
		free((char *)c->config_source);
	memset(c, 0, sizeof(*c));
}

/* ---- small helpers ---- */

char *cli_workload_of_job(struct cli *c, const char *ns, const char *job,
			  struct err *err)
{
	char *path = xasprintf("/apis/batch/v1/namespaces/%s/jobs/%s", ns,
			       job);
	json_t *obj = NULL;
	long code = cli_get(c, path, &obj, err);
	const char *uid;
	char *name, *key;

	free(path);
	if (code != 200)
		return NULL;
	uid = jx_meta_str(obj, "uid");
	name = jobwl_workload_name("Job", "batch", job, uid ? uid : "");
	json_decref(obj);
	key = xasprintf("%s/%s", ns, name);
	free(name);
	return key;
}

const char *cli_owner(const struct workload *w, char *buf, size_t size)
{
	for (size_t i = 0; i < w->meta.nowners; i++) {
		const struct owner_ref *o = &w->meta.owners[i];

		if (o->controller && o->kind && o->name) {
			snprintf(buf, size, "%s/%s", o->kind, o->name);
			return buf;
		}
	}
	return "";
}

char *cli_podset_requests(const struct workload *w, size_t i)
{
	struct reslist rl;
	struct err err = { "" };
	char *out, q[QUANTITY_BUF];

	reslist_init(&rl);
	if (i >= w->npod_sets ||
	    pod_requests(&w->pod_sets[i].tmpl, &rl, &err) < 0) {
		reslist_release(&rl);
		return xstrdup("");
	}
	out = xstrdup("");
	for (size_t k = 0; k < rl.n; k++) {
		char *n = xasprintf("%s%s%s=%s", out, k ? "," : "",
				    rl.v[k].name,
				    resource_format(rl.v[k].name, rl.v[k].milli,
						    q, sizeof(q)));

		free(out);
		out = n;
	}
	reslist_release(&rl);
	return out;
}

void cli_duration(int64_t ms, char *buf, size_t size)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	if (s < 60)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, size, "%lldh%lldm", (long long)(s / 3600),
			 (long long)(s % 3600 / 60));
	else
		snprintf(buf, size, "%lldd%lldh", (long long)(s / 86400),
			 (long long)(s % 86400 / 3600));
}

void cli_time(int64_t ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cli_print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
	}
	free(s);
}
