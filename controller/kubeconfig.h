/*
 * kubeconfig: where the API server is and how to authenticate to it, as
 * client-go's clientcmd and rest.InClusterConfig work it out.
 *
 * Sources, in controller-runtime's order (kubeconfig_discover): the
 * --kubeconfig file, $KUBECONFIG (its first existing file), the in-cluster
 * service account, ~/.kube/config. A file is a kubeconfig YAML read with
 * config/yamljson.h; its current-context (or a named one) picks a cluster
 * (server, certificate-authority[-data], insecure-skip-tls-verify,
 * tls-server-name) and a user (token, tokenFile, client-certificate[-data],
 * client-key[-data]). Relative file paths are relative to the kubeconfig's
 * directory, as in clientcmd.
 *
 * Every file named by the config is read at load time into memory, so a
 * broken path fails here with its name instead of at the first request;
 * only a token file is also re-read later (kube.c), because projected
 * service-account tokens rotate.
 *
 * Never logs; owns only the strings of struct kubeconfig.
 */
#ifndef CONTROLLER_KUBECONFIG_H
#define CONTROLLER_KUBECONFIG_H

#include <stdbool.h>

#include "model/errors.h"

/* The in-cluster service-account directory. */
#define KUBECONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A resolved client configuration; every string is owned, NULL = unset. */
struct kubeconfig {
	char *server;          /* "https://host:port[/prefix]", no trailing
				  '/'; never NULL after a successful load */
	char *tls_server_name; /* name to verify the certificate against
				  (and send as SNI) instead of the host */
	bool insecure;         /* insecure-skip-tls-verify */
	char *ca_pem;          /* CA bundle (PEM); NULL: the system CAs */
	char *cert_pem;        /* client certificate (PEM) */
	char *key_pem;         /* its private key (PEM); set iff cert_pem */
	char *token;           /* bearer token, whitespace trimmed */
	char *token_file;      /* where token came from, to re-read; or NULL
				  when the token was given inline */
	char *ns;              /* the context's namespace, or the service
				  account's; "default" when neither says */
	char *source;          /* the file or "in-cluster", for messages */
};

#define KUBECONFIG_INIT { NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, \
			  NULL, NULL }

void kubeconfig_init(struct kubeconfig *c);
/* Frees every string and leaves c as after init (keys are wiped first). */
void kubeconfig_release(struct kubeconfig *c);

/*
 * Loads the kubeconfig file at path using context (NULL: its
 * current-context) into out, which must be initialised and is released
 * first. Returns 0, or -1 + err naming the file and the problem (no such
 * context, cluster or user; missing server; unreadable referenced file;
 * bad base64; a client certificate without its key; an exec or
 * auth-provider user, which cueue does not run).
 */
int kubeconfig_load(const char *path, const char *context,
		    struct kubeconfig *out, struct err *err) MUST_CHECK;
/*
 * As kubeconfig_load for YAML text already in memory; base_dir (may be
 * NULL: the working directory) resolves relative paths and source names
 * it in messages.
 */
int kubeconfig_parse(const char *text, size_t len, const char *base_dir,
		     const char *context, const char *source,
		     struct kubeconfig *out, struct err *err) MUST_CHECK;

/*
 * The in-cluster configuration: https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT, with sa_dir's token, ca.crt and namespace
 * (sa_dir NULL: KUBECONFIG_SA_DIR; tests pass a fake directory).
 * Returns 0, or -1 + err (not in a cluster; unreadable token).
 */
int kubeconfig_in_cluster(const char *sa_dir, struct kubeconfig *out,
			  struct err *err) MUST_CHECK;

/*
 * The manager's rule: path when given (--kubeconfig), else the first
 * existing file of $KUBECONFIG, else the in-cluster config (sa_dir as
 * above) when $KUBERNETES_SERVICE_HOST is set, else $HOME/.kube/config.
 * Returns 0, or -1 + err from the source tried, or saying none exists.
 */
int kubeconfig_discover(const char *path, const char *sa_dir,
			struct kubeconfig *out, struct err *err) MUST_CHECK;
/* As kubeconfig_discover with a named context of the file (kubectl's
 * --context; NULL: the current one); a context skips the in-cluster
 * config, which has none. */
int kubeconfig_discover_context(const char *path, const char *context,
				const char *sa_dir, struct kubeconfig *out,
				struct err *err) MUST_CHECK;

#endif
