/*
 * kubeconfig: clientcmd's rules for one context, and rest.InClusterConfig
 * (see kubeconfig.h). The YAML arrives as a jansson tree from
 * config/yamljson.h; every value is copied out before the tree goes.
 *
 * Precedence follows client-go: *-data over the file form, token over
 * tokenFile; insecure-skip-tls-verify together with a CA is refused
 * (clientcmd's validation does the same).
 */
#include "controller/kubeconfig.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/b64.h"
#include "base/jx.h"
#include "config/yamljson.h"

/* Largest certificate, key or token file read; real ones are a few KiB. */
#define SMALL_FILE_MAX ((size_t)1 << 20)

void kubeconfig_init(struct kubeconfig *c)
{
	memset(c, 0, sizeof(*c));
}

static void wipe_free(char *s)
{
	if (s) {
		volatile char *p = s;

		while (*p)
			*p++ = '\0';
		free(s);
	}
}

void kubeconfig_release(struct kubeconfig *c)
{
	free(c->server);
	free(c->tls_server_name);
	free(c->ca_pem);
	free(c->cert_pem);
	wipe_free(c->key_pem);
	wipe_free(c->token);
	free(c->token_file);
	free(c->ns);
	free(c->source);
	kubeconfig_init(c);
}

/* ---- small helpers ---- */

/* Reads a whole (small) file into a new NUL-terminated string. */
static char *read_small(const char *path, struct err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t n;

		XGROW(buf, cap, len + 4096 + 1);
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len > SMALL_FILE_MAX) {
			err_set(err, "%s: larger than %zu bytes", path,
				SMALL_FILE_MAX);
			goto fail;
		}
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		err_set(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

/* Trims surrounding whitespace in place (strings.TrimSpace). */
static char *trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
	return s;
}

/* Decodes standard base64 (whitespace ignored, padding optional) into a
 * new NUL-terminated string, or NULL when malformed or not text. */
static char *decode_text(const char *in)
{
	size_t n;
	char *out = (char *)b64_decode(in, strlen(in), B64_SKIP_SPACE |
				       B64_PAD_OPTIONAL, &n, NULL);

	if (out && strlen(out) != n) { /* PEM and tokens are text */
		free(out);
		return NULL;
	}
	return out;
}

/* The "<what>" entry named name of the list at key (clusters, users,
 * contexts), i.e. its inner object; NULL when missing. */
static const json_t *named(const json_t *root, const char *key,
			   const char *what, const char *name)
{
	const json_t *list = json_object_get(root, key), *e;
	size_t i;

	json_array_foreach(list, i, e) {
		const char *n = jx_str(e, "name");

		if (n && !strcmp(n, name))
			return json_object_get(e, what);
	}
	return NULL;
}

/* base_dir/rel unless rel is absolute; new string. */
static char *resolve(const char *base_dir, const char *rel)
{
	if (rel[0] == '/' || !base_dir || !*base_dir)
		return xstrdup(rel);
	return xasprintf("%s/%s", base_dir, rel);
}

/*
 * Loads one credential: the data key (base64) when set, else the file
 * key (path). *out is a new string, or stays NULL when neither is set.
 */
static int load_blob(const json_t *o, const char *data_key,
		     const char *file_key, const char *base_dir,
		     const char *source, char **out, struct err *err)
{
	const char *data = jx_str(o, data_key), *file = jx_str(o, file_key);

	if (data && *data) {
		*out = decode_text(data);
		if (!*out)
			return err_set(err, "%s: %s: illegal base64 data",
				       source, data_key);
		return 0;
	}
	if (file && *file) {
		char *path = resolve(base_dir, file);
		struct err e2 = { "" };

		*out = read_small(path, &e2);
		free(path);
		if (!*out)
			return err_set(err, "%s: %s: %s", source, file_key,
				       e2.msg);
	}
	return 0;
}

/* "host:port" or "https://host:port/" -> "https://host:port". */
static char *normalize_server(const char *s)
{
	char *r;
	size_t n;

	if (!strncmp(s, "https://", 8) || !strncmp(s, "http://", 7))
		r = xstrdup(s);
	else
		r = xasprintf("https://%s", s);
	n = strlen(r);
	while (n && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

/* ---- kubeconfig files ---- */

static int from_tree(const json_t *root, const char *base_dir,
		     const char *context, const char *source,
		     struct kubeconfig *c, struct err *err)
{
	const json_t *ctx, *cluster, *user;
	const char *cluster_name, *user_name, *server, *ns, *token, *tfile;

	if (!json_is_object(root))
		return err_set(err, "%s: not a kubeconfig (no mapping)",
			       source);
	if (!context || !*context)
		context = jx_str(root, "current-context");
	if (!context || !*context)
		return err_set(err, "%s: no current-context is set", source);
	ctx = named(root, "contexts", "context", context);
	if (!ctx)
		return err_set(err, "%s: context \"%s\" does not exist",
			       source, context);
	cluster_name = jx_str(ctx, "cluster");
	user_name = jx_str(ctx, "user");
	cluster = cluster_name ? named(root, "clusters", "cluster",
				       cluster_name) : NULL;
	if (!cluster)
		return err_set(err, "%s: context \"%s\": cluster \"%s\" does "
			       "not exist", source, context,
			       cluster_name ? cluster_name : "");
	server = jx_str(cluster, "server");
	if (!server || !*server)
		return err_set(err, "%s: cluster \"%s\" has no server",
			       source, cluster_name);
	c->server = normalize_server(server);
	c->insecure = json_is_true(json_object_get(cluster,
				   "insecure-skip-tls-verify"));
	c->tls_server_name = xstrdup_or_null(jx_str(cluster,
						    "tls-server-name"));
	if (load_blob(cluster, "certificate-authority-data",
		      "certificate-authority", base_dir, source, &c->ca_pem,
		      err) < 0)
		return -1;
	if (c->insecure && c->ca_pem)
		return err_set(err, "%s: cluster \"%s\": specifying a root "
			       "certificates file with the insecure flag is "
			       "not allowed", source, cluster_name);
	user = user_name ? named(root, "users", "user", user_name) : NULL;
	if (user_name && *user_name && !user)
		return err_set(err, "%s: context \"%s\": user \"%s\" does not "
			       "exist", source, context, user_name);
	if (user) {
		if (load_blob(user, "client-certificate-data",
			      "client-certificate", base_dir, source,
			      &c->cert_pem, err) < 0 ||
		    load_blob(user, "client-key-data", "client-key",
			      base_dir, source, &c->key_pem, err) < 0)
			return -1;
		if (!c->cert_pem != !c->key_pem)
			return err_set(err, "%s: user \"%s\": a client "
				       "certificate needs its key (and a key "
				       "its certificate)", source, user_name);
		token = jx_str(user, "token");
		tfile = jx_str(user, "tokenFile");
		if (token && *token) {
			c->token = trim(xstrdup(token));
		} else if (tfile && *tfile) {
			struct err e2 = { "" };

			c->token_file = resolve(base_dir, tfile);
			c->token = read_small(c->token_file, &e2);
			if (!c->token)
				return err_set(err, "%s: tokenFile: %s",
					       source, e2.msg);
			trim(c->token);
		}
		if (!c->token && !c->cert_pem &&
		    (json_object_get(user, "exec") ||
		     json_object_get(user, "auth-provider")))
			return err_set(err, "%s: user \"%s\": exec and "
				       "auth-provider credentials are not "
				       "supported; use a token or a client "
				       "certificate", source, user_name);
	}
	ns = jx_str(ctx, "namespace");
	c->ns = xstrdup(ns && *ns ? ns : "default");
	c->source = xstrdup(source);
	return 0;
}

int kubeconfig_parse(const char *text, size_t len, const char *base_dir,
		     const char *context, const char *source,
		     struct kubeconfig *out, struct err *err)
{
	json_t *docs = NULL;
	struct err e2 = { "" };
	int rc = -1;

	kubeconfig_release(out);
	if (!source)
		source = "kubeconfig";
	if (yamljson_load_string(text, len, &docs, &e2) < 0) {
		err_set(err, "%s: %s", source, e2.msg);
		goto out;
	}
	if (json_array_size(docs) != 1) {
		err_set(err, "%s: want one YAML document, found %zu", source,
			json_array_size(docs));
		goto out;
	}
	rc = from_tree(json_array_get(docs, 0), base_dir, context, source,
		       out, err);
out:
	json_decref(docs);
	if (rc < 0)
		kubeconfig_release(out);
	return rc;
}

int kubeconfig_load(const char *path, const char *context,
		    struct kubeconfig *out, struct err *err)
{
	struct err e2 = { "" };
	char *text = NULL, *dir;
	const char *slash;
	FILE *f;
	size_t len = 0, cap = 0;
	int rc;

	kubeconfig_release(out);
	f = fopen(path, "rb");
	if (!f)
		return err_set(err, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t n;

		XGROW(text, cap, len + 65536);
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (len > YAMLJSON_MAX_BYTES) {
			fclose(f);
			free(text);
			return err_set(err, "%s: larger than %zu bytes", path,
				       YAMLJSON_MAX_BYTES);
		}
		if (n == 0)
			break;
	}
	fclose(f);
	slash = strrchr(path, '/');
	dir = slash ? xstrndup(path, (size_t)(slash - path + (slash == path)))
		    : NULL;
	rc = kubeconfig_parse(text, len, dir, context, path, out, &e2);
	if (rc < 0)
		err_set(err, "%s", e2.msg);
	free(dir);
	free(text);
	return rc;
}

/* ---- in-cluster ---- */

int kubeconfig_in_cluster(const char *sa_dir, struct kubeconfig *out,
			  struct err *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct err e2 = { "" };
	char *path, *ns;

	kubeconfig_release(out);
	if (!sa_dir)
		sa_dir = KUBECONFIG_SA_DIR;
	if (!host || !*host || !port || !*port)
		return err_set(err, "unable to load in-cluster configuration, "
			       "KUBERNETES_SERVICE_HOST and "
			       "KUBERNETES_SERVICE_PORT must be defined");
	/* net.JoinHostPort: an IPv6 literal needs brackets */
	out->server = strchr(host, ':')
		      ? xasprintf("https://[%s]:%s", host, port)
		      : xasprintf("https://%s:%s", host, port);
	out->token_file = xasprintf("%s/token", sa_dir);
	out->token = read_small(out->token_file, &e2);
	if (!out->token) {
		err_set(err, "in-cluster token: %s", e2.msg);
		kubeconfig_release(out);
		return -1;
	}
	trim(out->token);
	/* client-go goes on with the system CAs when ca.crt is missing. */
	path = xasprintf("%s/ca.crt", sa_dir);
	out->ca_pem = read_small(path, &e2);
	free(path);
	path = xasprintf("%s/namespace", sa_dir);
	ns = read_small(path, &e2);
	free(path);
	if (ns && *trim(ns))
		out->ns = ns;
	else {
		free(ns);
		out->ns = xstrdup("default");
	}
	out->source = xstrdup("in-cluster");
	return 0;
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int kubeconfig_discover_context(const char *path, const char *context,
				const char *sa_dir, struct kubeconfig *out,
				struct err *err)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	const char *svc = getenv("KUBERNETES_SERVICE_HOST");
	int rc;

	if (path && *path)
		return kubeconfig_load(path, context, out, err);
	if (env && *env) {
		char *list = xstrdup(env), *save = NULL;

		for (char *p = strtok_r(list, ":", &save); p;
		     p = strtok_r(NULL, ":", &save)) {
			if (is_file(p)) {
				rc = kubeconfig_load(p, context, out, err);
				free(list);
				return rc;
			}
		}
		free(list);
	}
	if (svc && *svc && !context)
		return kubeconfig_in_cluster(sa_dir, out, err);
	if (home && *home) {
		char *p = xasprintf("%s/.kube/config", home);

		if (is_file(p)) {
			rc = kubeconfig_load(p, context, out, err);
			free(p);
			return rc;
		}
		free(p);
	}
	kubeconfig_release(out);
	return err_set(err, "no kubeconfig: pass --kubeconfig, set KUBECONFIG, "
		       "or run in a cluster");
}

int kubeconfig_discover(const char *path, const char *sa_dir,
			struct kubeconfig *out, struct err *err)
{
	return kubeconfig_discover_context(path, NULL, sa_dir, out, err);
}
