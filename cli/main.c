/*
 * kubectl-cueue: the kubectl plugin (cli/cli.h). kubectl runs it for
 * `kubectl cueue ...` when it is on PATH, with the arguments after
 * "cueue" and kubectl's environment (KUBECONFIG).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "model/timestamp.h"

static const char usage[] =
	"kubectl cueue: where a job is in its queue, why it waits, whether a "
	"job would be\n"
	"admitted, and what is wrong with the queue setup; answered by the "
	"scheduling\ncore cueue-manager decides with, on the cluster's live "
	"state. Writes nothing.\n"
	"\n"
	"Usage:\n"
	"  kubectl cueue pending [CLUSTERQUEUE | -n NS LOCALQUEUE]\n"
	"  kubectl cueue explain (JOB | job/NAME | workload/NAME) [-n NS]\n"
	"  kubectl cueue simulate -f FILE [-n NS]\n"
	"  kubectl cueue doctor\n"
	"\n"
	"Flags:\n"
	"  -n, --namespace NS       the namespace (default: the context's)\n"
	"  -A, --all-namespaces     pending: every namespace (the default "
	"without -n)\n"
	"  -o, --output json|table  output format (default table)\n"
	"  -f, --filename FILE      simulate: a Job or Workload manifest "
	"('-': stdin)\n"
	"      --kubeconfig FILE    the kubeconfig (default $KUBECONFIG, "
	"~/.kube/config)\n"
	"      --context NAME       a context of the kubeconfig\n"
	"      --manager-config FILE  the manager's Configuration file (default: "
	"the\n"
	"                           ConfigMap cueue-system/cueue-manager-config, "
	"then\n"
	"                           kueue-system/kueue-manager-config)\n"
	"      --config-map NS/NAME the ConfigMap holding it "
	"(key controller_manager_config.yaml)\n"
	"      --timing             where the time went, on stderr "
	"(benchmarks)\n"
	"\n"
	"Exit codes: 0 fine (simulate: admitted now), 1 simulate: waits / "
	"doctor: warnings,\n"
	"2 simulate: never fits / doctor: errors, 3 simulate: invalid, 4 "
	"usage or API failure.\n";

enum { OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_MCONFIG, OPT_CMAP, OPT_NOW,
       OPT_TIMING };

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "namespace", required_argument, NULL, 'n' },
		{ "all-namespaces", no_argument, NULL, 'A' },
		{ "output", required_argument, NULL, 'o' },
		{ "filename", required_argument, NULL, 'f' },
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "manager-config", required_argument, NULL, OPT_MCONFIG },
		{ "config-map", required_argument, NULL, OPT_CMAP },
		{ "now", required_argument, NULL, OPT_NOW },
		{ "timing", no_argument, NULL, OPT_TIMING },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_opts o = { 0 };
	struct cli c;
	struct err err = { "" };
	const char *cmd;
	bool timing = false;
	int64_t t0, t1, t2;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "n:Ao:f:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			o.ns = optarg;
			break;
		case 'A':
			o.all_ns = true;
			break;
		case 'o':
			if (!strcmp(optarg, "json"))
				o.json = true;
			else if (strcmp(optarg, "table") &&
				 strcmp(optarg, "wide")) {
				fprintf(stderr, "kubectl-cueue: --output: "
					"json or table, not \"%s\"\n", optarg);
				return CLI_FAIL;
			}
			break;
		case 'f':
			o.file = optarg;
			break;
		case OPT_KUBECONFIG:
			o.kubeconfig = optarg;
			break;
		case OPT_CONTEXT:
			o.context = optarg;
			break;
		case OPT_MCONFIG:
			o.config_file = optarg;
			break;
		case OPT_CMAP:
			o.config_map = optarg;
			break;
		case OPT_NOW:
			if (timestamp_parse(optarg, &o.now_ms) < 0) {
				fprintf(stderr, "kubectl-cueue: --now: not an "
					"RFC 3339 time: \"%s\"\n", optarg);
				return CLI_FAIL;
			}
			break;
		case OPT_TIMING:
			timing = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return CLI_OK;
		default:
			fputs(usage, stderr);
			return CLI_FAIL;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return CLI_FAIL;
	}
	cmd = argv[optind++];
	if (strcmp(cmd, "pending") && strcmp(cmd, "explain") &&
	    strcmp(cmd, "simulate") && strcmp(cmd, "doctor")) {
		fprintf(stderr, "kubectl-cueue: unknown command \"%s\"\n\n%s",
			cmd, usage);
		return CLI_FAIL;
	}
	if (!strcmp(cmd, "simulate") && !o.file) {
		fprintf(stderr, "kubectl-cueue: simulate needs -f FILE\n");
		return CLI_FAIL;
	}
	t0 = cli_mono_us();
	if (cli_open(&c, &o, &err) < 0 || cli_load(&c, &err) < 0) {
		fprintf(stderr, "kubectl-cueue: %s\n", err.msg);
		cli_close(&c);
		return CLI_FAIL;
	}
	t1 = cli_mono_us();
	if (!strcmp(cmd, "pending"))
		rc = cli_pending(&c, argc - optind, argv + optind);
	else if (!strcmp(cmd, "explain"))
		rc = cli_explain(&c, argc - optind, argv + optind);
	else if (!strcmp(cmd, "simulate"))
		rc = cli_simulate(&c, argc - optind, argv + optind);
	else
		rc = cli_doctor(&c, argc - optind, argv + optind);
	t2 = cli_mono_us();
	/* --timing (benchmarks): where the time went, on stderr */
	if (timing)
		fprintf(stderr,
			"timing: open+lists %.1f ms (lists and feed %.1f ms), "
			"warm-up cycle %.1f ms, command %.1f ms\n",
			(double)(t1 - t0 - c.warm_us) / 1e3,
			(double)c.load_us / 1e3, (double)c.warm_us / 1e3,
			(double)(t2 - t1) / 1e3);
	cli_close(&c);
	return rc;
}
