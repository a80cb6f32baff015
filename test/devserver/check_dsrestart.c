/*
 * Suite "dsrestart": what a devserver restarted on the same --data-dir
 * keeps, and the program's new flags.
 *
 *  - With --tls, the CA, serving certificate, key and bearer token are
 *    kept in the data dir (mode 0600), so a kubeconfig written before the
 *    restart still works after it (TLS verification against its CA, its
 *    token); an explicit --token wins and is kept; kept files that are
 *    not ours stop the start with an error naming them.
 *  - --preload on a restart creates what is absent and leaves what
 *    exists (a caBundle patched in since survives), while within one run
 *    later documents still merge into earlier ones.
 *  - The flags: --service-endpoint's comma list, --fault-* values, and
 *    the fault counts logged at exit.
 *
 * The program tests run bin/cueue-devserver (DEVSERVER_BIN_PATH) as a
 * child, on a port outside the kernel's ephemeral range (so no client
 * socket can take it between the two starts) that is free when picked.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "controller/kubeconfig.h"
#include "devserver/api.h"
#include "suites.h"
#include "test/support/support.h"

/* ---- the program ---- */

struct child {
	pid_t pid;
	char url[80];
	char *err_path;   /* its stderr, a file */
};

static char dir[] = "/tmp/cueue-dsrestart-XXXXXX";

/* A port in [20000, 32000) (below Linux's ephemeral range) that nothing
 * is bound to now. */
static unsigned pick_port(void)
{
	unsigned base = 20000 + (unsigned)getpid() % 12000;

	for (unsigned i = 0; i < 12000; i++) {
		unsigned p = 20000 + (base - 20000 + i * 7919) % 12000;
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons((uint16_t)p) };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

		ck_assert_int_ge(fd, 0);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
		close(fd);
		if (rc == 0)
			return p;
	}
	ck_abort_msg("no free port");
	return 0;
}

/* Runs the program with argv (NULL-terminated, without argv[0]). When
 * wait_listen, waits for its "listening on" line; else c->pid is left
 * for wait_exit. */
static void spawn(const char *const *args, bool wait_listen,
		  struct child *c)
{
	const char *bin = DEVSERVER_BIN_PATH;
	const char *argv[40];
	size_t n = 0;
	char line[256];
	struct stat sb;
	int p[2];
	FILE *f;

	ck_assert_msg(stat(bin, &sb) == 0 && (sb.st_mode & S_IXUSR),
		      "%s is missing: run make all", bin);
	argv[n++] = bin;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	free(c->err_path);
	c->err_path = xasprintf("%s/stderr", dir);
	ck_assert_int_eq(pipe(p), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		FILE *e = fopen(c->err_path, "w");

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], STDOUT_FILENO);
		if (e)
			dup2(fileno(e), STDERR_FILENO);
		close(p[0]);
		close(p[1]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	ck_assert_ptr_nonnull(f);
	c->url[0] = '\0';
	if (wait_listen) {
		ck_assert_msg(fgets(line, sizeof(line), f) != NULL,
			      "the devserver did not start");
		ck_assert_int_eq(sscanf(line, "listening on %79s", c->url), 1);
	}
	fclose(f);
}

/* Waits for the child; returns its exit status (-1: killed). */
static int wait_exit(struct child *c)
{
	int st;

	ck_assert_int_eq(waitpid(c->pid, &st, 0), c->pid);
	c->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* SIGTERM; it must exit 0. */
static void stop(struct child *c)
{
	ck_assert_int_eq(kill(c->pid, SIGTERM), 0);
	ck_assert_int_eq(wait_exit(c), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = xstrdup(""), buf[4096];
	size_t len = 0, n;

	if (!f)
		return s;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		s = xrealloc(s, len + n + 1);
		memcpy(s + len, buf, n);
		len += n;
		s[len] = '\0';
	}
	fclose(f);
	return s;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return sz * n;
}

/* GET path with what kubeconfig file kc_path says (its server, CA and
 * token; token_override replaces its token when not NULL, "" sends
 * none). Returns the HTTP code, or -(curl code) when the transfer
 * failed (e.g. TLS verification). */
static long kc_get(const char *kc_path, const char *token_override,
		   const char *path)
{
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct err err = { "" };
	struct curl_slist *h = NULL;
	const char *tok;
	char *url, *auth = NULL;
	CURL *c;
	CURLcode rc;
	long code = 0;

	ck_assert_msg(kubeconfig_load(kc_path, NULL, &kc, &err) == 0, "%s",
		      err.msg);
	ck_assert_ptr_nonnull(kc.ca_pem);
	tok = token_override ? token_override : kc.token;
	url = xasprintf("%s%s", kc.server, path);
	c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	{
		struct curl_blob blob = { kc.ca_pem, strlen(kc.ca_pem),
					  CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (tok && *tok) {
		auth = xasprintf("Authorization: Bearer %s", tok);
		h = curl_slist_append(h, auth);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	else
		code = -(long)rc;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(auth);
	free(url);
	kubeconfig_release(&kc);
	return code;
}

static char *path_in(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cueue-dsrestart-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void rm_tmp(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

static void copy_file(const char *from, const char *to)
{
	char *s = slurp(from);
	FILE *f = fopen(to, "w");

	ck_assert_ptr_nonnull(f);
	fputs(s, f);
	fclose(f);
	free(s);
}

static mode_t mode_of(const char *path)
{
	struct stat sb;

	ck_assert_msg(stat(path, &sb) == 0, "%s: %s", path, strerror(errno));
	return sb.st_mode & 0777;
}

/* ---- TLS material and token across restarts ---- */

START_TEST(kubeconfig_survives_restart)
{
	struct child c = { 0 };
	char listen[32], *data = path_in("data"), *kc = path_in("kubeconfig");
	char *old = path_in("kubeconfig.old"), *pem, *tok, *tok_path;
	char *pem_path;
	const char *args[] = { "--tls", "--listen", listen, "--data-dir",
			       data, "--kubeconfig-out", kc, NULL };

	snprintf(listen, sizeof(listen), "127.0.0.1:%u", pick_port());
	/* 1. first run: a token is made (none given), kept with the
	 * material, 0600 */
	spawn(args, true, &c);
	copy_file(kc, old);
	ck_assert_int_eq(kc_get(old, NULL, "/api/v1/namespaces/default"),
			 200);
	ck_assert_int_eq(kc_get(old, "", "/api/v1/namespaces/default"), 401);
	stop(&c);
	pem_path = xasprintf("%s/tls.pem", data);
	tok_path = xasprintf("%s/token", data);
	ck_assert_int_eq(mode_of(pem_path), 0600);
	ck_assert_int_eq(mode_of(tok_path), 0600);
	pem = slurp(pem_path);
	tok = slurp(tok_path);
	ck_assert_uint_eq(strlen(tok), 33); /* 32 hex digits + newline */
	/* 2. second run on the same dir and port: the old kubeconfig works
	 * (the server's certificate verifies against its CA; its token is
	 * accepted), and the new one is the same file */
	spawn(args, true, &c);
	ck_assert_int_eq(kc_get(old, NULL, "/api/v1/namespaces/default"),
			 200);
	{
		char *a = slurp(old), *b = slurp(kc), *p2 = slurp(pem_path);

		ck_assert_str_eq(a, b);
		ck_assert_str_eq(p2, pem);
		free(a);
		free(b);
		free(p2);
	}
	stop(&c);
	/* 3. without --data-dir nothing is kept: a new CA each start */
	{
		const char *mem[] = { "--tls", "--listen", listen,
				      "--kubeconfig-out", kc, "--token", "t",
				      NULL };

		spawn(mem, true, &c);
		ck_assert_int_lt(kc_get(old, NULL, "/version"), 0);
		stop(&c);
	}
	free(pem);
	free(tok);
	free(pem_path);
	free(tok_path);
	free(data);
	free(kc);
	free(old);
	free(c.err_path);
}
END_TEST

START_TEST(token_flag_wins)
{
	struct child c = { 0 };
	char listen[32], *data = path_in("data"), *kc = path_in("kubeconfig");
	char *old = path_in("kubeconfig.old"), *tok_path, *tok;
	const char *args[] = { "--tls", "--listen", listen, "--data-dir",
			       data, "--kubeconfig-out", kc, "--token",
			       "first", NULL };
	const char *second[] = { "--tls", "--listen", listen, "--data-dir",
				 data, "--kubeconfig-out", kc, "--token",
				 "second", NULL };
	const char *none[] = { "--tls", "--listen", listen, "--data-dir",
			       data, "--kubeconfig-out", kc, NULL };

	snprintf(listen, sizeof(listen), "127.0.0.1:%u", pick_port());
	tok_path = xasprintf("%s/token", data);
	spawn(args, true, &c);
	copy_file(kc, old);
	stop(&c);
	tok = slurp(tok_path);
	ck_assert_str_eq(tok, "first\n");
	free(tok);
	/* an explicit token wins: the old one is refused, and kept */
	spawn(second, true, &c);
	ck_assert_int_eq(kc_get(old, NULL, "/api/v1/namespaces"), 401);
	ck_assert_int_eq(kc_get(old, "second", "/api/v1/namespaces"), 200);
	stop(&c);
	tok = slurp(tok_path);
	ck_assert_str_eq(tok, "second\n");
	free(tok);
	/* without the flag the kept one serves */
	spawn(none, true, &c);
	ck_assert_int_eq(kc_get(old, "second", "/api/v1/namespaces"), 200);
	ck_assert_int_eq(kc_get(kc, NULL, "/api/v1/namespaces"), 200);
	stop(&c);
	free(tok_path);
	free(data);
	free(kc);
	free(old);
	free(c.err_path);
}
END_TEST

/* Writes text to data/name (creating data). */
static void put(const char *name, const char *text)
{
	char *data = path_in("data"), *p = xasprintf("%s/%s", data, name);
	FILE *f;

	mkdir(data, 0755);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
	free(data);
}

START_TEST(foreign_files_refused)
{
	struct child c = { 0 };
	char *data = path_in("data"), *err;
	const char *args[] = { "--tls", "--listen", "127.0.0.1:0",
			       "--data-dir", data, NULL };

	put("tls.pem", "not a certificate\n");
	spawn(args, false, &c);
	ck_assert_int_eq(wait_exit(&c), 1);
	err = slurp(c.err_path);
	ck_assert_msg(strstr(err, "/data/tls.pem: not the devserver's TLS "
			     "material") != NULL, "%s", err);
	free(err);
	/* a token that is not one */
	put("tls.pem", "");
	{
		char *p = xasprintf("%s/tls.pem", data);

		unlink(p);
		free(p);
	}
	put("token", "two words\n");
	spawn(args, false, &c);
	ck_assert_int_eq(wait_exit(&c), 1);
	err = slurp(c.err_path);
	ck_assert_msg(strstr(err, "/data/token: not a bearer token") != NULL,
		      "%s", err);
	free(err);
	free(data);
	free(c.err_path);
}
END_TEST

/* ---- flags ---- */

/* Runs the program with args; it must exit 2 with want on stderr. */
static void ck_bad_flag(const char *const *args, const char *want)
{
	struct child c = { 0 };
	char *err;

	spawn(args, false, &c);
	ck_assert_int_eq(wait_exit(&c), 2);
	err = slurp(c.err_path);
	ck_assert_msg(strstr(err, want) != NULL, "want %s in: %s", want, err);
	free(err);
	free(c.err_path);
}

START_TEST(flags)
{
	struct child c = { 0 };
	char *err;
	/* a comma list and a repeated flag for the same Service */
	const char *ok[] = { "--listen", "127.0.0.1:0", "--service-endpoint",
			     "ns/svc=127.0.0.1:8443,[::1]:9443",
			     "--service-endpoint", "ns/svc=localhost:1",
			     "--fault-seed", "42", "--fault-429", "1",
			     "--fault-slow=0:1s", NULL };

	ck_bad_flag((const char *[]){ "--service-endpoint", "ns/svc=h:1,",
				      NULL },
		    "bad value for --service-endpoint: ns/svc=h:1,");
	ck_bad_flag((const char *[]){ "--service-endpoint", "ns/svc=h:0",
				      NULL },
		    "bad value for --service-endpoint");
	ck_bad_flag((const char *[]){ "--service-endpoint", "svc=h:1",
				      NULL },
		    "bad value for --service-endpoint");
	ck_bad_flag((const char *[]){ "--fault-429", "1.5", NULL },
		    "bad value for --fault-429: 1.5: want a rate in [0, 1]");
	ck_bad_flag((const char *[]){ "--fault-slow", "0.5", NULL },
		    "bad value for --fault-slow: 0.5: want RATE:DURATION");
	ck_bad_flag((const char *[]){ "--fault-slow", "0.5:soon", NULL },
		    "bad value for --fault-slow: soon: want a duration");
	ck_bad_flag((const char *[]){ "--fault-seed", "-1", NULL },
		    "bad value for --fault-seed: -1");
	ck_bad_flag((const char *[]){ "--fault-often", "1", NULL },
		    "unknown flag --fault-often");
	/* good ones: it serves, injects, and logs the counts at exit */
	spawn(ok, true, &c);
	{
		char *url = xasprintf("%s/api/v1/namespaces", c.url);
		CURL *h = curl_easy_init();
		long code = 0;

		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		ck_assert_int_eq(code, 429);
		curl_easy_cleanup(h);
		free(url);
	}
	stop(&c);
	err = slurp(c.err_path);
	ck_assert_msg(strstr(err, "fault injection on (seed 42): 429=1; "
			     "counts at GET /debug/faults") != NULL, "%s",
		      err);
	ck_assert_msg(strstr(err, "cueue-devserver: fault 429: 1 injected of "
			     "1 (rate 1, seed 42)") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "fault slow") == NULL, "%s", err);
	free(err);
	free(c.err_path);
}
END_TEST

/* ---- --preload on a restart ---- */

static const char manifests[] =
	"apiVersion: admissionregistration.k8s.io/v1\n"
	"kind: ValidatingWebhookConfiguration\n"
	"metadata: {name: hooks}\n"
	"webhooks:\n"
	"- name: v.example.com\n"
	"  clientConfig:\n"
	"    service: {namespace: ns, name: svc, path: /validate}\n"
	"  sideEffects: None\n"
	"  admissionReviewVersions: [v1]\n"
	"  rules:\n"
	"  - {operations: [CREATE], apiGroups: [x.example.com],\n"
	"     apiVersions: [v1], resources: [things]}\n"
	"---\n"
	"apiVersion: v1\nkind: ConfigMap\n"
	"metadata: {name: conf, namespace: default}\n"
	"data: {k: from-file}\n"
	"---\n"
	"apiVersion: v1\nkind: ConfigMap\n"
	"metadata: {generateName: gen-, namespace: default}\n"
	"---\n"
	"apiVersion: v1\nkind: ConfigMap\n"
	"metadata: {name: dropped, namespace: default}\n"
	"---\n"
	"apiVersion: v1\nkind: ConfigMap\n"
	"metadata: {name: conf, namespace: default}\n"
	"data: {k2: second-doc}\n";

static struct api *open_api(const char *data)
{
	struct api_opts ao = { .data_dir = data, .watch_history = 100 };
	struct err err = { "" };
	struct api *a = api_new(&ao, &err);

	ck_assert_msg(a != NULL, "%s", err.msg);
	return a;
}

static json_t *get(struct api *a, const char *group, const char *res,
		   const char *ns, const char *name)
{
	struct api_ref r = { .group = group, .resource = res, .ns = ns,
			     .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *o = api_internal_get(a, &r, &st);

	status_release(&st);
	return o;
}

static const char *sget(const json_t *o, const char *k1, const char *k2)
{
	return json_string_value(json_object_get(json_object_get(o, k1), k2));
}

static size_t count_generated(struct api *a)
{
	struct api_ref r = { .group = "", .resource = "configmaps",
			     .ns = "default" };
	struct api_status st = API_STATUS_INIT;
	json_t *items = NULL, *it;
	size_t i, n = 0;

	ck_assert_int_eq(api_internal_list(a, &r, NULL, NULL, &items, NULL,
					   &st), 0);
	json_array_foreach(items, i, it)
		if (!strncmp(sget(it, "metadata", "name"), "gen-", 4))
			n++;
	json_decref(items);
	return n;
}

START_TEST(preload_leaves_changes)
{
	char *data = path_in("data"), *file = path_in("m.yaml");
	struct api_status st = API_STATUS_INIT;
	struct err err = { "" };
	struct api *a;
	json_t *o, *patch;
	FILE *f = fopen(file, "w");

	ck_assert_ptr_nonnull(f);
	fputs(manifests, f);
	fclose(f);
	/* 1. first run: everything created; the second conf document
	 * merges into the first */
	a = open_api(data);
	ck_assert_msg(api_preload(a, file, &err) == 0, "%s", err.msg);
	o = get(a, "", "configmaps", "default", "conf");
	ck_assert_str_eq(sget(o, "data", "k"), "from-file");
	ck_assert_str_eq(sget(o, "data", "k2"), "second-doc");
	json_decref(o);
	ck_assert_uint_eq(count_generated(a), 1);
	/* others change things: a caBundle is injected (as the manager's
	 * certificate management does), a value edited, an object
	 * deleted */
	{
		struct api_ref r = {
			.group = "admissionregistration.k8s.io",
			.resource = "validatingwebhookconfigurations",
			.name = "hooks" };

		patch = t_json("[{\"op\":\"add\",\"path\":\"/webhooks/0/"
			       "clientConfig/caBundle\",\"value\":\"Zm9v\"}]");
		ck_assert_msg(api_internal_patch(a, &r, "", API_PATCH_JSON,
						 patch, NULL, &st) == 0, "%s",
			      st.message);
		json_decref(patch);
	}
	{
		struct api_ref r = { .group = "", .resource = "configmaps",
				     .ns = "default", .name = "conf" };

		patch = t_json("{\"data\":{\"k\":\"edited\"}}");
		ck_assert_int_eq(api_internal_patch(a, &r, "", API_PATCH_MERGE,
						    patch, NULL, &st), 0);
		json_decref(patch);
		r.name = "dropped";
		ck_assert_int_eq(api_internal_delete(a, &r, NULL, NULL, &st),
				 0);
	}
	api_shutdown(a);
	api_free(a);
	/* 2. restart with the same preload */
	a = open_api(data);
	ck_assert_msg(api_preload(a, file, &err) == 0, "%s", err.msg);
	o = get(a, "admissionregistration.k8s.io",
		"validatingwebhookconfigurations", "", "hooks");
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(o, "webhooks"), 0),
		"clientConfig"), "caBundle")), "Zm9v");
	json_decref(o);
	o = get(a, "", "configmaps", "default", "conf");
	ck_assert_str_eq(sget(o, "data", "k"), "edited");
	ck_assert_str_eq(sget(o, "data", "k2"), "second-doc");
	json_decref(o);
	/* what is absent is created again; generateName only once */
	o = get(a, "", "configmaps", "default", "dropped");
	ck_assert_ptr_nonnull(o);
	json_decref(o);
	ck_assert_uint_eq(count_generated(a), 1);
	api_shutdown(a);
	api_free(a);
	free(data);
	free(file);
}
END_TEST

Suite *dsrestart_suite(void)
{
	Suite *s = suite_create("dsrestart");
	TCase *tc = tcase_create("credentials");

	tcase_add_checked_fixture(tc, mkdir_tmp, rm_tmp);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kubeconfig_survives_restart);
	tcase_add_test(tc, token_flag_wins);
	tcase_add_test(tc, foreign_files_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("flags");
	tcase_add_checked_fixture(tc, mkdir_tmp, rm_tmp);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, flags);
	suite_add_tcase(s, tc);
	tc = tcase_create("preload");
	tcase_add_checked_fixture(tc, mkdir_tmp, rm_tmp);
	tcase_add_test(tc, preload_leaves_changes);
	suite_add_tcase(s, tc);
	return s;
}
