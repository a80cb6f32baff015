/*
 * cli: `kubectl cueue` (bin/kubectl-cueue), the answers to "where is my
 * job in the queue?", "why is it not running?", "would this job get
 * in?" and "is my queue setup broken?" (issue 20).
 *
 * DESIGN. The plugin reads the cluster through the normal API (the
 * kubeconfig, --context, -n) and rebuilds the scheduling state with the
 * manager itself in inspect mode (controller/manager.h opts.inspect):
 * the same informers' lists, the same decoding, validation and
 * workload -> LocalQueue -> ClusterQueue resolution, the same
 * Configuration (the manager's ConfigMap), fed to the same flavors/
 * core. It then runs the cycle the live manager would run next (its
 * decisions discarded), so workloads the manager found inadmissible
 * are parked as they are there, and asks that state. Its answers
 * therefore cannot disagree with the manager's decisions. Nothing is
 * ever written: the manager's client is fenced (controller/kube.h
 * kube_fence) and inspect mode decides and times nothing; simulate's
 * one write is a dryRun=All create, which the API server validates and
 * runs through the admission webhooks without persisting.
 *
 * Threads: one, the loop's. Output: stdout (a table, or -o json);
 * errors: stderr, one line each, "kubectl-cueue: ...".
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "model/errors.h"

struct json_t;
struct kube;
struct loop;
struct manager;
struct sched;
struct res_policy;
struct workload;

/* Exit codes (simulate's: 0 admits now, 1 waits, 2 never fits). */
enum {
	CLI_OK = 0,
	CLI_WAITS = 1,
	CLI_NEVER = 2,
	CLI_INVALID = 3, /* simulate: the object is invalid */
	CLI_FAIL = 4,    /* usage, connection or API failure */
};

struct cli_opts {
	const char *kubeconfig;   /* --kubeconfig */
	const char *context;      /* --context */
	const char *ns;           /* -n; NULL: the context's */
	bool all_ns;              /* -A */
	bool json;                /* -o json */
	const char *config_file;  /* --manager-config FILE */
	const char *config_map;   /* --config-map NS/NAME */
	const char *file;         /* simulate -f */
	int64_t now_ms;           /* --now (tests); 0: the clock */
};

struct cli {
	struct cli_opts o;
	const char *ns;           /* -n, else the kubeconfig's */
	struct loop *l;
	struct kube *k;           /* the manager's reads: fenced */
	struct kube *kw;          /* simulate's dry-run create */
	struct manager *m;
	struct sched *s;          /* the manager's, after cli_load */
	struct kubeconfig *kc;
	struct config *cfg;
	const char *config_source; /* where the Configuration came from */
	const char **afs_res;
	double *afs_w;
	struct res_policy *rp;    /* the Configuration's resource policy */
	int64_t now_ms;
	int64_t load_us;          /* list + feed, monotonic */
	int64_t warm_us;          /* the warm-up cycle's */
};

/* Connects (kubeconfig, clients) and reads the Configuration. */
int cli_open(struct cli *c, const struct cli_opts *o, struct err *err);
/* Lists everything, feeds the scheduling state and runs the warm-up
 * cycle. */
int cli_load(struct cli *c, struct err *err);
void cli_close(struct cli *c);
/*
 * One request, waited for: GET path into *out (new), or POST body
 * (dry_run adds ?dryRun=All). Returns the HTTP status (0: no answer)
 * and, on a non-2xx, the Status message in err.
 */
long cli_get(struct cli *c, const char *path, struct json_t **out,
	     struct err *err);
long cli_create_dry_run(struct cli *c, const char *path,
			const struct json_t *body, struct json_t **out,
			struct err *err);

/* "ns/name" of the workload behind a Job (its controller owner), or
 * NULL; new. */
char *cli_workload_of_job(struct cli *c, const char *ns, const char *job,
			  struct err *err);
/* The Job (kind/name) owning w, as "Job/name", or "" (static or
 * borrowed from w). */
const char *cli_owner(const struct workload *w, char *buf, size_t size);
/* "cpu=2,nvidia.com/gpu=1" per pod of pod set i (new). */
char *cli_podset_requests(const struct workload *w, size_t i);
/* A duration for people: "45s", "12m", "3h5m", "2d4h". */
void cli_duration(int64_t ms, char *buf, size_t size);
/* CLOCK_MONOTONIC in microseconds (--timing). */
int64_t cli_mono_us(void);
/* RFC 3339 UTC of ms into buf. */
void cli_time(int64_t ms, char *buf, size_t size);
/* Prints a JSON value on stdout (indented, one trailing newline). */
void cli_print_json(const struct json_t *v);

/* A table as kubectl prints one: upper-case headers, columns padded to
 * their widest cell and three spaces apart. */
struct cli_table {
	size_t ncol;
	char **cells; /* owned; row-major, headers first */
	size_t n, cap;
};
void cli_table_init(struct cli_table *t, size_t ncol, const char *const *hdr);
/* Appends one cell (copied); rows fill left to right. */
void cli_table_add(struct cli_table *t, const char *cell);
void cli_table_addf(struct cli_table *t, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
void cli_table_print(const struct cli_table *t); /* and releases it */

/* The commands (argv after the command word). */
int cli_pending(struct cli *c, int argc, char **argv);
int cli_explain(struct cli *c, int argc, char **argv);
int cli_simulate(struct cli *c, int argc, char **argv);
int cli_doctor(struct cli *c, int argc, char **argv);

#endif
