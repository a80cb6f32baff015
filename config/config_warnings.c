/*
 * config_warnings: the settings the loaders accept (every key of both API
 * versions parses, so one file serves Kueue and cueue) but that nothing in
 * controller/, webhook/ or flavors/ honours yet. The manager logs one
 * warning per such key its file sets, naming the key and what it does
 * instead, so that no setting is accepted and silently ignored.
 *
 * One static table row per key (STYLE P11). A row warns when the file
 * itself set the key (config_is_given: defaults never warn) and its
 * condition holds on the loaded value, so a setting the manager already
 * behaves as, such as leaderElect: false or an empty list, says nothing.
 * When a feature is built, its row goes: delete the one entry, nothing
 * else refers to it. Pure: no I/O, no logging (main.c logs).
 */
#include "config/config.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "config/config_int.h"

/* What must hold, beyond "the file set the key", for a row to warn. */
enum when {
	WHEN_GIVEN,   /* nothing more */
	WHEN_ON,      /* the bool at off is true (after defaults) */
	WHEN_ITEMS,   /* the list or map at off has entries */
	WHEN_ADDRESS, /* the string at off is an address ("", "0": off) */
	WHEN_OLD_TLS, /* the enum config_tls_version at off is 1.0 or 1.1 */
	WHEN_MLKEM,   /* the config_int_list at off has a group this build
			 cannot offer (config_tls_curve_unavailable) */
};

struct unhonoured {
	const char *key;     /* a dotted key of config.c's table */
	enum when when;      /* the condition on the loaded value */
	size_t off;          /* offsetof the struct config member it reads;
			      * 0 for WHEN_GIVEN */
	const char *instead; /* what the manager does instead */
};

#define M(m) offsetof(struct config, m)

/* In config.c's table order, which is roughly a file's order. */
static const struct unhonoured rows[] = {
	{ .key = "pprofBindAddress", .when = WHEN_ADDRESS,
	  .off = M(pprof_bind_address),
	  .instead = "profiling is not implemented; nothing listens on this "
		     "address" },
	{ .key = "metrics.localQueueMetrics", .when = WHEN_GIVEN,
	  .instead = "not read yet; LocalQueue metrics follow the "
		     "LocalQueueMetrics feature gate (on by default in a "
		     "v1beta2 file) and cover every LocalQueue" },
	{ .key = "metrics.customLabels", .when = WHEN_ITEMS,
	  .off = M(metrics_custom_labels),
	  .instead = "not implemented yet; metrics carry only Kueue's "
		     "standard labels" },
	{ .key = "controller.groupKindConcurrency", .when = WHEN_ITEMS,
	  .off = M(controller_gk_concurrency),
	  .instead = "not used; this manager reconciles every kind on its one "
		     "event-loop thread" },
	{ .key = "controller.cacheSyncTimeout", .when = WHEN_GIVEN,
	  .instead = "not used; this manager waits for its first lists "
		     "without a deadline, and /readyz fails until they are "
		     "done" },
	{ .key = "integrations.podOptions", .when = WHEN_GIVEN,
	  .instead = "not read; it scopes the pod integration, and this "
		     "manager reconciles batch/v1 Jobs only" },
	{ .key = "multiKueue", .when = WHEN_GIVEN,
	  .instead = "MultiKueue is not implemented yet; no Workload is "
		     "dispatched to a worker cluster, and a ClusterQueue "
		     "naming an admission check stays inactive" },
	{ .key = "tls.minVersion", .when = WHEN_OLD_TLS,
	  .off = M(tls_min_version),
	  .instead = "TLS 1.0 and 1.1 are never offered; the webhook serves "
		     "TLS 1.2 and 1.3" },
	{ .key = "tls.curvePreferences", .when = WHEN_MLKEM,
	  .off = M(tls_curve_preferences),
	  .instead = "4588 (X25519MLKEM768) is not offered: the GnuTLS this "
		     "manager is built with has no ML-KEM; the other groups "
		     "listed are, or X25519 when none is left" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static bool holds(const struct unhonoured *r, const struct config *c)
{
	const char *member = (const char *)c + r->off;
	const char *s;
	struct cfg_vec vec;
	int v;

	switch (r->when) {
	case WHEN_GIVEN:
		return true;
	case WHEN_ON:
		return *(const bool *)member;
	case WHEN_ITEMS:
		memcpy(&vec, member, sizeof(vec));
		return vec.n > 0;
	case WHEN_ADDRESS:
		s = *(char *const *)member;
		return s && *s && strcmp(s, "0");
	case WHEN_OLD_TLS:
		memcpy(&v, member, sizeof(v));
		return v == CONFIG_TLS_10 || v == CONFIG_TLS_11;
	case WHEN_MLKEM: {
		struct config_int_list il;

		memcpy(&il, member, sizeof(il));
		for (size_t i = 0; i < il.n; i++)
			if (config_tls_curve_unavailable(il.v[i]))
				return true;
		return false;
	}
	}
	BUG("config_warnings: row %s: condition %d", r->key, (int)r->when);
}

/* Where the file sets key; NULL when it does not. */
static const struct config_given *given_at(const struct config *c,
					   const char *key)
{
	for (size_t i = 0; i < c->ngiven; i++)
		if (!strcmp(c->given[i].key, key))
			return &c->given[i];
	return NULL;
}

size_t config_warnings_collect(const struct config *c,
			       struct config_warnings *out)
{
	size_t added = 0;

	for (size_t i = 0; i < NROWS; i++) {
		const struct unhonoured *r = &rows[i];
		const struct config_given *g;

		/* a row naming no key of the table would never warn */
		if (!config_row(r->key))
			BUG("config_warnings: no row %s in config.c", r->key);
		g = given_at(c, r->key);
		if (!g || !holds(r, c))
			continue;
		XGROW(out->v, out->cap, out->n + 1);
		out->v[out->n].key = r->key;
		out->v[out->n].text = xasprintf("%s:%zu:%zu: %s: %s",
						c->file ? c->file : "<config>",
						g->line, g->col, r->key,
						r->instead);
		out->n++;
		added++;
	}
	return added;
}

void config_warnings_release(struct config_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].text);
	free(w->v);
	memset(w, 0, sizeof(*w));
}
