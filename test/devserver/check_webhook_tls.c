/*
 * Suite "webhook_tls": the webhook server's TLS floor seen by a client
 * that is not ours: the openssl command (s_client, run with posix_spawn)
 * against a webhook server started on a free loopback port. TLS 1.0 and
 * 1.1 are refused by the server (the client is told to offer them, with
 * OpenSSL's security level lowered so that the refusal is the server's:
 * its ClientHello goes out and no ServerHello comes back, never the
 * client's "no protocols available"); TLS 1.2 and 1.3 complete, with the
 * chain verified against the generated CA under the Service's name.
 * With tls.minVersion
 * VersionTLS13 (min_tls13) 1.2 is refused too.
 *
 * Each test passes with a note on stderr when there is no openssl
 * program on PATH (make deps installs it).
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/certs.h"
#include "webhook/webhook.h"

extern char **environ;

#define SVC "kueue-webhook-service"
#define NS "kueue-system"
#define HOST SVC "." NS ".svc"

static struct {
	struct certs c;
	struct webhook *wh;
	char cafile[64]; /* the CA as a file for -CAfile */
} T;

static void start_with(bool tls13)
{
	struct certs_opts co = { .service = SVC, .namespace = NS,
				 .key_type = CERTS_EC_P256,
				 .now_s = (int64_t)time(NULL) };
	struct webhook_opts o;
	struct err err = { "" };
	int fd;

	memset(&T, 0, sizeof(T));
	ck_assert_msg(certs_generate(&co, &T.c, &err) == 0, "%s", err.msg);
	snprintf(T.cafile, sizeof(T.cafile), "/tmp/cueue-tls-ca-XXXXXX");
	fd = mkstemp(T.cafile);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, T.c.ca_pem, strlen(T.c.ca_pem)),
			 (ssize_t)strlen(T.c.ca_pem));
	close(fd);
	webhook_opts_init(&o);
	o.addr = "127.0.0.1";
	o.port = 0;
	o.cert_pem = T.c.cert_pem;
	o.key_pem = T.c.key_pem;
	o.min_tls13 = tls13;
	T.wh = webhook_new(&o, &err);
	webhook_opts_release(&o);
	ck_assert_msg(T.wh != NULL, "webhook_new: %s", err.msg);
}

static void start(void)
{
	start_with(false);
}

static void start13(void)
{
	start_with(true);
}

static void stop(void)
{
	webhook_free(T.wh);
	certs_release(&T.c);
	if (T.cafile[0])
		unlink(T.cafile);
	memset(&T, 0, sizeof(T));
}

/* Is there an openssl program to run? */
static bool have_openssl(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (!path)
		return false;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/openssl", *dir ? dir : ".");

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

struct outcome {
	int status;  /* the exit status; -1: killed */
	char *out;   /* stdout and stderr together (new) */
};

/*
 * openssl s_client -<version> against the server, verifying the chain and
 * the name, with stdin at EOF (so it ends right after the handshake).
 * weak: let the client offer TLS 1.0/1.1 (SECLEVEL=0); msg: print the
 * handshake messages (-msg).
 */
static struct outcome s_client(const char *version, bool weak, bool msg)
{
	char connect[32], *argv[20];
	int n = 0, pipefd[2], status = 0;
	posix_spawn_file_actions_t fa;
	struct sbuf out = SBUF_INIT;
	struct outcome r;
	char buf[4096];
	ssize_t k;
	pid_t pid;

	snprintf(connect, sizeof(connect), "127.0.0.1:%u", webhook_port(T.wh));
	argv[n++] = (char *)"openssl";
	argv[n++] = (char *)"s_client";
	argv[n++] = (char *)"-connect";
	argv[n++] = connect;
	argv[n++] = (char *)"-servername";
	argv[n++] = (char *)HOST;
	argv[n++] = (char *)"-verify_hostname";
	argv[n++] = (char *)HOST;
	argv[n++] = (char *)"-CAfile";
	argv[n++] = T.cafile;
	argv[n++] = (char *)"-verify_return_error";
	argv[n++] = (char *)"-brief";
	argv[n++] = (char *)version;
	if (msg)
		argv[n++] = (char *)"-msg";
	if (weak) {
		argv[n++] = (char *)"-cipher";
		argv[n++] = (char *)"DEFAULT:@SECLEVEL=0";
	}
	argv[n] = NULL;
	ck_assert_int_eq(pipe(pipefd), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	ck_assert_int_eq(posix_spawnp(&pid, "openssl", &fa, NULL, argv,
				      environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	while ((k = read(pipefd[0], buf, sizeof(buf))) > 0)
		ck_assert_int_eq(sbuf_add(&out, buf, (size_t)k), 0);
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r.out = xstrdup(sbuf_cstr(&out));
	sbuf_release(&out);
	return r;
}

/* The handshake completed with version want and a verified chain. */
static void assert_served(const char *flag, const char *want)
{
	struct outcome r = s_client(flag, false, false);
	char *line = xasprintf("Protocol version: %s", want);

	ck_assert_msg(r.status == 0, "%s: exit %d:\n%.1500s", flag, r.status,
		      r.out);
	ck_assert_msg(strstr(r.out, line), "%s: no \"%s\":\n%.1500s", flag,
		      line, r.out);
	ck_assert_msg(strstr(r.out, "Verification: OK"), "%s:\n%.1500s", flag,
		      r.out);
	free(line);
	free(r.out);
}

/*
 * The server refused the only version the client offered: the client's
 * ClientHello for that version went out (-msg shows it; a client that
 * offered nothing would say "no protocols available" and send nothing),
 * no ServerHello came back, and no handshake completed. (GnuTLS under
 * libmicrohttpd closes the connection without a protocol_version alert;
 * where one comes, it is accepted too.)
 */
static void assert_refused(const char *flag, const char *hello)
{
	struct outcome r = s_client(flag, true, true);

	ck_assert_msg(r.status != 0, "%s: accepted:\n%.1500s", flag, r.out);
	ck_assert_msg(!strstr(r.out, "no protocols available"),
		      "%s: the client offered nothing:\n%.1500s", flag, r.out);
	ck_assert_msg(strstr(r.out, hello) && strstr(r.out, "ClientHello"),
		      "%s: no \"%s\" ClientHello:\n%.1500s", flag, hello,
		      r.out);
	ck_assert_msg(!strstr(r.out, "ServerHello"),
		      "%s: the server answered:\n%.1500s", flag, r.out);
	ck_assert_msg(!strstr(r.out, "Protocol version:"),
		      "%s: a handshake completed:\n%.1500s", flag, r.out);
	free(r.out);
}

START_TEST(floor_tls12)
{
	if (!have_openssl()) {
		fprintf(stderr, "webhook_tls: no openssl on PATH; skipped\n");
		return;
	}
	assert_refused("-tls1", ">>> TLS 1.0, Handshake");
	assert_refused("-tls1_1", ">>> TLS 1.1, Handshake");
	assert_served("-tls1_2", "TLSv1.2");
	assert_served("-tls1_3", "TLSv1.3");
}
END_TEST

START_TEST(floor_tls13)
{
	if (!have_openssl()) {
		fprintf(stderr, "webhook_tls: no openssl on PATH; skipped\n");
		return;
	}
	assert_refused("-tls1", ">>> TLS 1.0, Handshake");
	assert_refused("-tls1_1", ">>> TLS 1.1, Handshake");
	assert_refused("-tls1_2", ">>> TLS 1.2, Handshake");
	assert_served("-tls1_3", "TLSv1.3");
}
END_TEST

Suite *webhook_tls_suite(void)
{
	Suite *s = suite_create("webhook_tls");
	TCase *tc = tcase_create("tls12");

	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, floor_tls12);
	suite_add_tcase(s, tc);
	tc = tcase_create("tls13");
	tcase_add_checked_fixture(tc, start13, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, floor_tls13);
	suite_add_tcase(s, tc);
	return s;
}
