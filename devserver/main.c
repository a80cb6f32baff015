/*
 * cueue-devserver: a Kubernetes API server stand-in for tests, the demo
 * and benchmarks (see devserver/README.md).
 *
 *   cueue-devserver [--listen 127.0.0.1:0] [--tls] [--token T]
 *       [--data-dir DIR] [--kubeconfig-out FILE] [--preload PATH]...
 *       [--service-endpoint NS/NAME=HOST:PORT[,HOST:PORT]...]...
 *       [--job-runtime DUR] [--no-job-runner] [--watch-history N]
 *       [--watch-history-seconds S] [--watch-history-max M]
 *       [--fault-seed N] [--fault-429 R] [--fault-500 R]
 *       [--fault-watch-drop R] [--fault-gone R] [--fault-slow R:DUR]
 *       [--fault-webhook-timeout R]
 *
 * Order of start: open the store (replaying --data-dir), start the
 * garbage collector (gc.h) and, unless --no-job-runner (for tests that
 * write Job status themselves), the job runner (jobrunner.h), apply every
 * --preload, listen, write --kubeconfig-out, then print one line
 * "listening on <url>" to stdout (flushed) so scripts can wait for it.
 * SIGINT/SIGTERM stop it cleanly, in the reverse order: watches end,
 * connections drain, the controller threads stop, everything is freed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/b64.h"
#include "devserver/api.h"
#include "devserver/fault.h"
#include "devserver/gc.h"
#include "devserver/http.h"
#include "devserver/jobrunner.h"
#include "devserver/tls.h"
#include "devserver/webhook_client.h"

struct flags {
	char *listen_addr;      /* owned; host part */
	unsigned port;
	bool tls;
	const char *token;
	const char *data_dir;
	const char *kubeconfig;
	const char **preload;   /* owned array of borrowed strings */
	size_t npreload;
	struct api_endpoint *eps; /* owned; strings owned */
	size_t neps;
	int64_t job_runtime_ms;
	bool no_job_runner;     /* --no-job-runner */
	size_t watch_history;   /* per resource */
	uint64_t watch_history_ms;
	size_t watch_history_max;
	struct fault_opts faults; /* --fault-* */
};

static void usage(FILE *f)
{
	fputs("usage: cueue-devserver [--listen ADDR:PORT] [--tls] "
	      "[--token T]\n"
	      "         [--data-dir DIR] [--kubeconfig-out FILE] "
	      "[--preload FILE_OR_DIR]...\n"
	      "         [--service-endpoint NS/NAME=HOST:PORT[,HOST:PORT]...]..."
	      "\n"
	      "         [--job-runtime DURATION] [--no-job-runner] "
	      "[--watch-history N]\n"
	      "         [--watch-history-seconds S] "
	      "[--watch-history-max M]\n"
	      "         [--fault-seed N] [--fault-429 RATE] "
	      "[--fault-500 RATE]\n"
	      "         [--fault-watch-drop RATE] [--fault-gone RATE] "
	      "[--fault-slow RATE:DUR]\n"
	      "         [--fault-webhook-timeout RATE]\n"
	      "\n"
	      "  --data-dir DIR   objects survive restarts; with --tls also "
	      "the CA,\n"
	      "                   certificate and key (DIR/tls.pem) and the "
	      "token\n"
	      "                   (DIR/token; made when no --token is given), "
	      "so a\n"
	      "                   kubeconfig stays valid; --preload then "
	      "leaves\n"
	      "                   restored objects as they are\n"
	      "  --service-endpoint NS/NAME=HOST:PORT[,HOST:PORT]...\n"
	      "                   where webhook calls to that Service go; "
	      "several\n"
	      "                   endpoints (a comma list or the flag "
	      "repeated) are\n"
	      "                   taken round robin, skipping those that "
	      "refuse\n"
	      "                   the connection\n"
	      "  --no-job-runner  do not run Jobs (no Pods, no Job status): "
	      "for tests\n"
	      "                   that drive Job status themselves\n"
	      "  --watch-history N          events kept per resource for "
	      "resuming\n"
	      "                             watches (default 10000)\n"
	      "  --watch-history-seconds S  also keep events younger than "
	      "S seconds\n"
	      "                             (default 75; 0: off)\n"
	      "  --watch-history-max M      per-resource cap on the "
	      "events kept\n"
	      "                             (default 102400)\n"
	      "\n"
	      "Fault injection (off by default; each RATE in [0, 1]; the "
	      "same seed\n"
	      "gives the same faults for the same requests; counts at GET\n"
	      "/debug/faults and on stderr at exit; health probes and "
	      "/debug/ get none):\n"
	      "  --fault-seed N             the seed (default 1)\n"
	      "  --fault-429 RATE           answer a request 429 "
	      "TooManyRequests,\n"
	      "                             Retry-After: 1, instead of "
	      "serving it\n"
	      "  --fault-500 RATE           answer a request 500 "
	      "InternalError\n"
	      "  --fault-watch-drop RATE    per watch event sent, cut the "
	      "stream\n"
	      "                             after it (no final chunk)\n"
	      "  --fault-gone RATE          answer a watch resumed from a "
	      "resourceVersion\n"
	      "                             410 Expired (too old resource "
	      "version)\n"
	      "  --fault-slow RATE:DUR      delay an answer by DUR "
	      "(0.05:500ms)\n"
	      "  --fault-webhook-timeout RATE\n"
	      "                             an admission webhook call times "
	      "out (its\n"
	      "                             failurePolicy decides)\n"
	      "Watches get only watch-drop and gone.\n", f);
}

/* Go time.ParseDuration for the units we need ("90s", "1m30s", "500ms"). */
static int parse_duration(const char *s, int64_t *ms)
{
	double total = 0;

	if (!*s)
		return -1;
	if (!strcmp(s, "0")) {
		*ms = 0;
		return 0;
	}
	while (*s) {
		char *end;
		double v = strtod(s, &end);
		double mul;

		if (end == s)
			return -1;
		s = end;
		if (!strncmp(s, "ms", 2)) {
			mul = 1;
			s += 2;
		} else if (!strncmp(s, "us", 2)) {
			mul = 0.001;
			s += 2;
		} else if (!strncmp(s, "ns", 2)) {
			mul = 0.000001;
			s += 2;
		} else if (*s == 's') {
			mul = 1000;
			s++;
		} else if (*s == 'm') {
			mul = 60000;
			s++;
		} else if (*s == 'h') {
			mul = 3600000;
			s++;
		} else {
			return -1;
		}
		total += v * mul;
	}
	*ms = (int64_t)total;
	return 0;
}

static int parse_listen(const char *s, struct flags *f)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (!colon)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535)
		return -1;
	if (s[0] == '[' && colon > s && colon[-1] == ']')
		f->listen_addr = strndup(s + 1, (size_t)(colon - s - 2));
	else
		f->listen_addr = strndup(s, (size_t)(colon - s));
	f->port = (unsigned)port;
	return 0;
}

/*
 * NS/NAME=HOST:PORT[,HOST:PORT]...: one Service's endpoints (a Service
 * has one per ready pod); the flag may also be repeated for the same
 * Service. An IPv6 HOST is written in brackets ([::1]:8443).
 */
static int parse_endpoint(const char *s, struct flags *f)
{
	const char *slash = strchr(s, '/'), *eq = strchr(s, '=');
	const char *p;

	if (!slash || !eq || slash > eq || slash == s || eq == slash + 1 ||
	    memchr(slash + 1, '/', (size_t)(eq - slash - 1)))
		return -1;
	for (p = eq + 1;;) {
		size_t len = strcspn(p, ",");
		const char *colon = NULL, *h = p;
		size_t hl;
		struct api_endpoint *e;
		char num[8], *end;
		long port;

		for (size_t i = 0; i < len; i++)
			if (p[i] == ':')
				colon = p + i;
		hl = colon ? (size_t)(colon - p) : 0;
		if (!colon || hl == 0 || len - hl - 1 == 0 ||
		    len - hl - 1 >= sizeof(num))
			return -1;
		memcpy(num, colon + 1, len - hl - 1);
		num[len - hl - 1] = '\0';
		port = strtol(num, &end, 10);
		if (*end || port <= 0 || port > 65535)
			return -1;
		if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		if (hl == 0)
			return -1;
		f->eps = xrealloc(f->eps, (f->neps + 1) * sizeof(*f->eps));
		e = &f->eps[f->neps++];
		e->ns = xstrndup(s, (size_t)(slash - s));
		e->name = xstrndup(slash + 1, (size_t)(eq - slash - 1));
		e->host = xstrndup(h, hl);
		e->port = (unsigned)port;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

/* --fault-KIND RATE (and RATE:DUR for slow); prints its own error. */
static int parse_fault(const char *name, const char *val, struct flags *f)
{
	static const struct {
		const char *flag;
		enum fault_kind kind;
	} kinds[] = {
		{ "--fault-429", FAULT_429 },
		{ "--fault-500", FAULT_500 },
		{ "--fault-watch-drop", FAULT_WATCH_DROP },
		{ "--fault-gone", FAULT_GONE },
		{ "--fault-slow", FAULT_SLOW },
		{ "--fault-webhook-timeout", FAULT_WEBHOOK_TIMEOUT },
	};
	struct err err = { "" };
	char *rate = xstrdup(val), *dur = NULL;
	bool known = false;
	int rc = -1;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		enum fault_kind k = kinds[i].kind;

		if (strcmp(name, kinds[i].flag))
			continue;
		known = true;
		if (k == FAULT_SLOW) {
			dur = strchr(rate, ':');
			if (!dur) {
				err_set(&err, "%s: want RATE:DURATION "
					"(0.05:500ms)", val);
				break;
			}
			*dur++ = '\0';
			if (parse_duration(dur, &f->faults.slow_ms) < 0 ||
			    f->faults.slow_ms < 0 ||
			    f->faults.slow_ms > 600000) {
				err_set(&err, "%s: want a duration up to 10m "
					"(500ms, 2s)", dur);
				break;
			}
		}
		rc = fault_parse_rate(rate, &f->faults.rate[k], &err);
		break;
	}
	if (!known)
		fprintf(stderr, "cueue-devserver: unknown flag %s\n", name);
	else if (rc < 0)
		fprintf(stderr, "cueue-devserver: bad value for %s: %s\n",
			name, err.msg);
	free(rate);
	return rc;
}

static void flags_release(struct flags *f)
{
	free(f->listen_addr);
	free(f->preload);
	for (size_t i = 0; i < f->neps; i++) {
		free((char *)f->eps[i].ns);
		free((char *)f->eps[i].name);
		free((char *)f->eps[i].host);
	}
	free(f->eps);
}

/* Parses argv; returns 0, 1 for --help, -1 on a bad flag (reported). */
static int parse_flags(int argc, char **argv, struct flags *f)
{
	for (int i = 1; i < argc; i++) {
		char *arg = argv[i], *val = NULL, *eq;
		char name[64];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
			return 1;
		if (!strcmp(arg, "--tls")) {
			f->tls = true;
			continue;
		}
		if (!strcmp(arg, "--no-job-runner")) {
			f->no_job_runner = true;
			continue;
		}
		if (strncmp(arg, "--", 2)) {
			fprintf(stderr, "cueue-devserver: unexpected argument "
				"%s\n", arg);
			return -1;
		}
		eq = strchr(arg, '=');
		if (eq) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - arg),
				 arg);
			val = eq + 1;
		} else {
			snprintf(name, sizeof(name), "%s", arg);
			if (i + 1 >= argc) {
				fprintf(stderr, "cueue-devserver: %s needs a "
					"value\n", arg);
				return -1;
			}
			val = argv[++i];
		}
		if (!strcmp(name, "--listen")) {
			free(f->listen_addr);
			f->listen_addr = NULL;
			if (parse_listen(val, f) < 0)
				goto bad;
		} else if (!strcmp(name, "--token")) {
			f->token = val;
		} else if (!strcmp(name, "--data-dir")) {
			f->data_dir = val;
		} else if (!strcmp(name, "--kubeconfig-out")) {
			f->kubeconfig = val;
		} else if (!strcmp(name, "--preload")) {
			f->preload = realloc(f->preload, (f->npreload + 1) *
					     sizeof(*f->preload));
			f->preload[f->npreload++] = val;
		} else if (!strcmp(name, "--service-endpoint")) {
			if (parse_endpoint(val, f) < 0)
				goto bad;
		} else if (!strcmp(name, "--job-runtime")) {
			if (parse_duration(val, &f->job_runtime_ms) < 0)
				goto bad;
		} else if (!strcmp(name, "--watch-history")) {
			char *end;
			long n = strtol(val, &end, 10);

			if (*end || n < 1)
				goto bad;
			f->watch_history = (size_t)n;
		} else if (!strcmp(name, "--watch-history-seconds")) {
			char *end;
			long n = strtol(val, &end, 10);

			if (!*val || *end || n < 0 || n > 86400)
				goto bad;
			f->watch_history_ms = (uint64_t)n * 1000;
		} else if (!strcmp(name, "--fault-seed")) {
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(val, &end, 10);
			if (!*val || *end || errno || val[0] == '-')
				goto bad;
			f->faults.seed = (uint64_t)n;
		} else if (!strncmp(name, "--fault-", 8)) {
			if (parse_fault(name, val, f) < 0)
				return -1;
		} else if (!strcmp(name, "--watch-history-max")) {
			char *end;
			long n = strtol(val, &end, 10);

			if (!*val || *end || n < 1)
				goto bad;
			f->watch_history_max = (size_t)n;
		} else {
			fprintf(stderr, "cueue-devserver: unknown flag %s\n",
				name);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "cueue-devserver: bad value for %s: %s\n",
			name, val);
		return -1;
	}
	return 0;
}

/* The names the serving certificate is for. */
static const char *const tls_dns[] = { "localhost", NULL };
static const char *const tls_ips[] = { "127.0.0.1", "::1", NULL };

/*
 * --tls with --data-dir: the CA, serving certificate and key
 * (DIR/tls.pem) and the bearer token (DIR/token) of the last run are
 * reused, so the kubeconfigs clients hold keep working across a restart;
 * an explicit --token wins (and is kept). *token: new.
 */
static int keep_credentials(const struct flags *f, struct tls_material *tm,
			    char **token, struct err *err)
{
	char *p = xasprintf("%s/tls.pem", f->data_dir);
	enum tls_kept how;
	int rc = tls_keep(p, tls_dns, tls_ips, tm, &how, err);

	if (rc == 0 && how == TLS_KEPT_RENEWED)
		fprintf(stderr, "cueue-devserver: %s: the serving certificate "
			"expires within a day: made a new CA and certificate "
			"(clients need the new kubeconfig)\n", p);
	free(p);
	if (rc < 0)
		return -1;
	p = xasprintf("%s/token", f->data_dir);
	rc = tls_token_keep(p, f->token, token, err);
	free(p);
	return rc;
}

/* Writes the kubeconfig atomically (temp file + rename). */
static int write_kubeconfig(const char *path, const char *url,
			    const char *ca_pem, const char *token)
{
	char *tmp = malloc(strlen(path) + 8);
	FILE *f;
	int rc = 0;

	if (!tmp)
		abort();
	sprintf(tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		free(tmp);
		return -1;
	}
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n"
		"- name: cueue-devserver\n  cluster:\n    server: %s\n", url);
	if (ca_pem) {
		char *b = b64_encode(ca_pem, strlen(ca_pem), B64_STD);

		fprintf(f, "    certificate-authority-data: %s\n", b);
		free(b);
	}
	fprintf(f, "users:\n- name: cueue-devserver\n  user:");
	if (token && ca_pem)
		fprintf(f, "\n    token: %s\n", token);
	else
		fprintf(f, " {}\n");
	fprintf(f, "contexts:\n- name: cueue-devserver\n  context:\n"
		"    cluster: cueue-devserver\n    user: cueue-devserver\n"
		"    namespace: default\n"
		"current-context: cueue-devserver\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		rc = -1;
	free(tmp);
	return rc;
}

int main(int argc, char **argv)
{
	struct flags f = {
		.watch_history = 10000,
		.watch_history_ms = 75000,  /* kube's eventFreshDuration */
		.watch_history_max = 102400, /* see README: measured */
		.faults = { .seed = 1 },
	};
	struct tls_material tm = TLS_MATERIAL_INIT;
	struct err err = { "" };
	struct api *api = NULL;
	struct gc *gc = NULL;
	struct jobrunner *runner = NULL;
	struct http_server *srv = NULL;
	char *token = NULL;     /* the kept token (--data-dir), or NULL */
	sigset_t set;
	int sig, rc, status = EXIT_FAILURE;

	rc = parse_flags(argc, argv, &f);
	if (rc != 0) {
		usage(rc > 0 ? stdout : stderr);
		flags_release(&f);
		return rc > 0 ? EXIT_SUCCESS : 2;
	}
	if (!f.listen_addr)
		f.listen_addr = strdup("127.0.0.1");
	if (f.token && !f.tls)
		fprintf(stderr, "cueue-devserver: --token without --tls: "
			"clients send no credentials over http, so none are "
			"required\n");
	/* Threads started from here on inherit the blocked signals; the
	 * main thread takes them with sigwait. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	{
		struct api_opts ao = {
			.data_dir = f.data_dir,
			.watch_history = f.watch_history,
			.watch_history_ms = f.watch_history_ms,
			.watch_history_max = f.watch_history_max,
			.job_runtime_ms = f.job_runtime_ms,
			.endpoints = f.eps,
			.nendpoints = f.neps,
			/* gc.c removes the orphan/foregroundDeletion
			 * finalizers of propagationPolicy */
			.propagation_finalizers = true,
			.faults = &f.faults,
		};

		api = api_new(&ao, &err);
	}
	if (!api)
		goto fail;
	if (fault_enabled(api_faults(api))) {
		fprintf(stderr, "cueue-devserver: fault injection on (seed "
			"%llu):", (unsigned long long)f.faults.seed);
		for (int k = 0; k < FAULT_KINDS; k++)
			if (f.faults.rate[k] > 0)
				fprintf(stderr, " %s=%g", fault_name(k),
					f.faults.rate[k]);
		fprintf(stderr, "; counts at GET /debug/faults\n");
	}
	gc = gc_start(api, &err);
	if (!gc)
		goto fail;
	if (!f.no_job_runner) {
		runner = jobrunner_start(api, &err);
		if (!runner)
			goto fail;
	}
	for (size_t i = 0; i < f.npreload; i++)
		if (api_preload(api, f.preload[i], &err) < 0)
			goto fail;
	if (f.tls && f.data_dir) {
		if (keep_credentials(&f, &tm, &token, &err) < 0)
			goto fail;
	} else if (f.tls) {
		if (tls_generate(tls_dns, tls_ips, &tm, &err) < 0)
			goto fail;
	}
	{
		struct http_opts ho = {
			.addr = f.listen_addr, .port = f.port,
			.cert_pem = tm.cert_pem, .key_pem = tm.key_pem,
			.token = token ? token : f.token,
			.max_body = (size_t)3 << 20,
		};

		srv = http_server_start(&ho, api_serve, api, &err);
	}
	if (!srv)
		goto fail;
	if (f.kubeconfig &&
	    write_kubeconfig(f.kubeconfig, http_server_url(srv), tm.ca_pem,
			     token ? token : f.token) < 0) {
		err_set(&err, "cannot write %s: %s", f.kubeconfig,
			strerror(errno));
		goto fail;
	}
	printf("listening on %s\n", http_server_url(srv));
	fflush(stdout);
	while (sigwait(&set, &sig) != 0)
		;
	status = EXIT_SUCCESS;
	goto out;
fail:
	fprintf(stderr, "cueue-devserver: %s\n", err.msg);
out:
	if (api)
		api_shutdown(api);
	http_server_stop(srv);
	jobrunner_stop(runner);
	gc_stop(gc);
	if (api)
		fault_report(api_faults(api), stderr);
	api_free(api);
	webhook_client_cleanup();
	tls_material_release(&tm);
	free(token);
	flags_release(&f);
	return status;
}
