/*
 * cueue-manager: the controller process. Parses the flags, loads the
 * Kueue Configuration and the kubeconfig, and runs the manager
 * (manager.h) on the one event loop (loop.h) until SIGINT or SIGTERM,
 * then frees everything in reverse order of creation.
 *
 *   --kubeconfig FILE   else $KUBECONFIG, in-cluster, ~/.kube/config
 *   --config FILE       Kueue Configuration YAML (config/config.h);
 *                       problems -> exit 2 with file:line:col messages;
 *                       each setting it gives that the manager does not
 *                       honour yet -> one warning line at startup
 *                       (config/config_warnings.c)
 *   --kube-api-qps N    override clientConnection.qps
 *   --kube-api-burst N  override clientConnection.burst
 *   --log-level LEVEL   debug, info (default), warn, error
 *   --metrics-bind-address ADDR       override metrics.bindAddress
 *   --health-probe-bind-address ADDR  override health.healthProbeBindAddress
 *   --webhook-bind-address ADDR       override webhook.host/port
 *                       (HOST:PORT, :PORT; port 0 = a free port; "0" =
 *                       no webhook server and no certificate management)
 *   --visibility-bind-address ADDR    override visibilityServer
 *                       bindAddress/bindPort (8082): the visibility API,
 *                       served with the webhook's certificates ("0" =
 *                       off; port 0 = a free port)
 *   --metrics-cert-dir DIR  serve /metrics over HTTPS with DIR/tls.crt,
 *                       DIR/tls.key (plain HTTP otherwise)
 *   --leader-elect true|false  cueue's own: overrides the Configuration's
 *                       leaderElection.leaderElect (devcluster runs a
 *                       single replica with false)
 *   The metrics, health, webhook and visibility servers:
 *   controller/wiring.h (each
 *   logs "... listening on ..." once bound).
 *
 * Leader election (leaderElection in the Configuration): election.h.
 * SIGTERM or SIGINT: no new decisions, the writes in flight finish (5 s
 * at most), the lease is released, exit 0; a second signal cuts the
 * wait short.
 *
 * Exit status: 0 after a signal, 1 on a runtime failure (no API server
 * configuration, the loop failing, the leader election lost), 2 on bad
 * flags or configuration.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "config/config.h"
#include "controller/election.h"
#include "controller/jobs.h"
#include "controller/kube.h"
#include "controller/kubeconfig.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "controller/wiring.h"
#include "model/respolicy.h"

struct flags {
	const char *kubeconfig;
	const char *config;
	bool has_qps;
	double qps;
	bool has_burst;
	long burst;
	const char *metrics_bind; /* NULL: from the Configuration */
	const char *health_bind;
	const char *webhook_bind;
	const char *visibility_bind;
	const char *metrics_cert_dir;
	int leader_elect;       /* -1: the Configuration's; 0/1 */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cueue-manager [--kubeconfig FILE] [--config FILE]\n"
		"                     [--kube-api-qps N] [--kube-api-burst N]\n"
		"                     [--log-level debug|info|warn|error]\n"
		"                     [--metrics-bind-address ADDR]\n"
		"                     [--health-probe-bind-address ADDR]\n"
		"                     [--webhook-bind-address ADDR]\n"
		"                     [--visibility-bind-address ADDR]\n"
		"                     [--metrics-cert-dir DIR]\n"
		"                     [--leader-elect true|false]\n");
}

/* Returns 0, or the exit status to leave with. */
static int parse_flags(int argc, char **argv, struct flags *fl)
{
	enum { F_KUBECONFIG = 1, F_CONFIG, F_QPS, F_BURST, F_LOG, F_HELP,
	       F_METRICS, F_HEALTH, F_WEBHOOK, F_METRICS_CERTS,
	       F_LEADER_ELECT, F_VISIBILITY };
	static const struct option opts[] = {
		{ "kubeconfig", required_argument, NULL, F_KUBECONFIG },
		{ "config", required_argument, NULL, F_CONFIG },
		{ "kube-api-qps", required_argument, NULL, F_QPS },
		{ "kube-api-burst", required_argument, NULL, F_BURST },
		{ "log-level", required_argument, NULL, F_LOG },
		{ "help", no_argument, NULL, F_HELP },
		{ "metrics-bind-address", required_argument, NULL, F_METRICS },
		{ "health-probe-bind-address", required_argument, NULL,
		  F_HEALTH },
		{ "webhook-bind-address", required_argument, NULL, F_WEBHOOK },
		{ "visibility-bind-address", required_argument, NULL,
		  F_VISIBILITY },
		{ "metrics-cert-dir", required_argument, NULL,
		  F_METRICS_CERTS },
		{ "leader-elect", required_argument, NULL, F_LEADER_ELECT },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(fl, 0, sizeof(*fl));
	fl->leader_elect = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end = NULL;

		switch (c) {
		case F_KUBECONFIG:
			fl->kubeconfig = optarg;
			break;
		case F_CONFIG:
			fl->config = optarg;
			break;
		case F_QPS:
			errno = 0;
			fl->qps = strtod(optarg, &end);
			if (errno || end == optarg || *end) {
				fprintf(stderr, "cueue-manager: --kube-api-qps: "
					"invalid value \"%s\"\n", optarg);
				return 2;
			}
			fl->has_qps = true;
			break;
		case F_BURST:
			errno = 0;
			fl->burst = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || fl->burst < 0 ||
			    fl->burst > 1000000) {
				fprintf(stderr, "cueue-manager: --kube-api-burst: "
					"invalid value \"%s\"\n", optarg);
				return 2;
			}
			fl->has_burst = true;
			break;
		case F_LOG:
			if (log_set_level_name(optarg) < 0) {
				fprintf(stderr, "cueue-manager: --log-level: "
					"unknown level \"%s\"\n", optarg);
				return 2;
			}
			break;
		case F_METRICS:
			fl->metrics_bind = optarg;
			break;
		case F_HEALTH:
			fl->health_bind = optarg;
			break;
		case F_WEBHOOK:
			fl->webhook_bind = optarg;
			break;
		case F_VISIBILITY:
			fl->visibility_bind = optarg;
			break;
		case F_METRICS_CERTS:
			fl->metrics_cert_dir = optarg;
			break;
		case F_LEADER_ELECT:
			if (!strcmp(optarg, "true")) {
				fl->leader_elect = 1;
			} else if (!strcmp(optarg, "false")) {
				fl->leader_elect = 0;
			} else {
				fprintf(stderr, "cueue-manager: --leader-elect: "
					"want true or false, got \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case F_HELP:
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "cueue-manager: unknown or incomplete "
				"flag \"%s\"\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cueue-manager: unexpected argument \"%s\"\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	return 0;
}

/* Logs, once each, the settings of c's file that nothing honours yet and
 * what the manager does instead. */
static void log_config_warnings(const struct config *c)
{
	struct config_warnings w = CONFIG_WARNINGS_INIT;

	config_warnings_collect(c, &w);
	for (size_t i = 0; i < w.n; i++)
		log_msg(LOG_WARN, "config", NULL, NULL, "%s", w.v[i].text);
	config_warnings_release(&w);
}

int main(int argc, char **argv)
{
	struct flags fl;
	struct config cfg;
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct err err = { "" };
	struct loop_opts lo = { .handle_signals = true };
	struct kube_opts ko = { .user_agent = "cueue-manager" };
	struct manager_opts mo = { 0 };
	const char **afs_res = NULL;
	double *afs_w = NULL;
	struct res_policy rp = RES_POLICY_INIT;
	struct loop *l = NULL;
	struct kube *k = NULL;
	struct manager *m = NULL;
	struct jobs_opts jo = { 0 };
	struct jobs *jobs = NULL;
	struct wiring *w = NULL;
	struct wiring_opts wo = { .git_version = "cueue" };
	struct election_opts eo = { 0 };
	struct election *el = NULL;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = parse_flags(argc, argv, &fl);
	if (rc)
		return rc;
	if (fl.config) {
		struct field_errors fe = FIELD_ERRORS_INIT;

		if (config_load_file2(fl.config, NULL, &cfg, &fe, &err) < 0) {
			/* every problem, the file's own values first */
			for (size_t i = 0; i < fe.n; i++)
				fprintf(stderr, "cueue-manager: %s\n",
					fe.v[i].text);
			if (!fe.n)
				fprintf(stderr, "cueue-manager: %s\n",
					err.msg);
			field_errors_release(&fe);
			return 2;
		}
		field_errors_release(&fe);
		log_config_warnings(&cfg);
	} else {
		config_defaults(&cfg, CONFIG_API_V1BETA2, NULL);
	}
	if (fl.leader_elect >= 0)
		cfg.le_leader_elect = fl.leader_elect;
	rc = 1;
	if (kubeconfig_discover(fl.kubeconfig, NULL, &kc, &err) < 0) {
		fprintf(stderr, "cueue-manager: %s\n", err.msg);
		goto out;
	}
	ko.qps = fl.has_qps ? fl.qps : cfg.client_qps;
	ko.burst = (int)(fl.has_burst ? fl.burst : cfg.client_burst);
	mo.pending_grace_ms = 1000; /* controller/README.md */
	mo.standby = cfg.le_leader_elect; /* election.h */
	manager_opts_from_config(&mo, &cfg, &afs_res, &afs_w, &rp);
	l = loop_new(&lo, &err);
	if (!l) {
		fprintf(stderr, "cueue-manager: %s\n", err.msg);
		goto out;
	}
	k = kube_new(l, &kc, &ko, &err);
	if (!k) {
		fprintf(stderr, "cueue-manager: %s\n", err.msg);
		goto out;
	}
	log_msg(LOG_INFO, "manager", NULL, NULL,
		"starting: server %s (from %s), qps %g, burst %d", kc.server,
		kc.source ? kc.source : "?", ko.qps, ko.burst);
	wo.cfg = &cfg;
	wo.metrics_bind = fl.metrics_bind;
	wo.health_bind = fl.health_bind;
	wo.webhook_bind = fl.webhook_bind;
	wo.visibility_bind = fl.visibility_bind;
	wo.metrics_cert_dir = fl.metrics_cert_dir;
	w = wiring_new(k, &wo, &err);
	if (!w) {
		log_msg(LOG_ERROR, "manager", NULL, NULL, "%s", err.msg);
		goto out;
	}
	mo.metrics = wiring_metrics(w);
	mo.registry = wiring_registry(w);
	m = manager_new(k, &mo);
	wiring_attach(w, m);
	/* batch/job is on unless integrations.frameworks leaves it out */
	jo.manage_without_queue_name = cfg.manage_jobs_without_queue_name;
	/* managedJobsNamespaceSelector (always set after loading); the
	 * reconciler honours it for every Job with the HEAD gate, GA there,
	 * so on for v1beta2 files as the webhook does (admit.h) */
	if (cfg.managed_jobs_ns_selector.set)
		jo.ns_selector = &cfg.managed_jobs_ns_selector.sel;
	jo.ns_selector_always = cfg.api == CONFIG_API_V1BETA2 ||
		config_feature_gate(&cfg,
				    "ManagedJobsNamespaceSelectorAlwaysRespected",
				    false);
	jo.no_partial_admission = mo.no_partial_admission;
	jo.wait_for_pods_ready = mo.ready.enabled;
	jo.label_keys_to_copy =
		(const char *const *)cfg.int_label_keys_to_copy.v;
	jo.nlabel_keys_to_copy = cfg.int_label_keys_to_copy.n;
	jo.registry = wiring_registry(w);
	for (size_t i = 0; i < cfg.int_frameworks.n || i == 0; i++)
		if (!cfg.int_frameworks.n ||
		    !strcmp(cfg.int_frameworks.v[i], "batch/job")) {
			jobs = jobs_new(k, m, &jo);
			break;
		}
	eo.cfg = &cfg;
	eo.m = m;
	eo.registry = wiring_registry(w);
	el = election_new(k, &eo);
	if (loop_run(l, &err) < 0) {
		log_msg(LOG_ERROR, "manager", NULL, NULL, "event loop: %s",
			err.msg);
		goto out;
	}
	if (election_lost(el)) {
		log_msg(LOG_ERROR, "manager", NULL, NULL,
			"exiting: leader election lost");
		goto out;
	}
	log_msg(LOG_INFO, "manager", NULL, NULL, "stopping on signal %d",
		loop_signal(l));
	if (election_shutdown(el, &err) < 0) {
		log_msg(LOG_ERROR, "manager", NULL, NULL, "event loop: %s",
			err.msg);
		goto out;
	}
	log_msg(LOG_INFO, "manager", NULL, NULL, "stopped");
	rc = 0;
out:
	election_free(el);
	jobs_free(jobs);
	manager_free(m);
	free(afs_res);
	free(afs_w);
	res_policy_release(&rp);
	wiring_free(w);
	kube_free(k);
	loop_free(l);
	kubeconfig_release(&kc);
	config_release(&cfg);
	return rc;
}
