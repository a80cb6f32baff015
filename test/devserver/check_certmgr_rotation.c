/*
 * Suite "certmgr_rotation": certificates rotated under load, not one
 * review failing. The webhook server (webhook/webhook.h) runs on a free
 * loopback port; the in-process devserver (manifests/webhooks.yaml
 * preloaded, the Service cueue-system/cueue-webhook-service resolving to
 * that port) calls it for every Job created; the certificate manager
 * (controller/certmgr.h) runs on the test's loop with validities of a
 * few seconds, handing each new certificate to the server.
 *
 * While it rotates, two kinds of clients run without pause on threads of
 * their own:
 *  - two threads create Jobs through the devserver, which calls the
 *    mutating and validating webhooks with the caBundle stored in the
 *    configurations at that moment (kube-apiserver's behaviour; its
 *    libcurl pool keeps connections alive across rotations);
 *  - one thread posts AdmissionReviews straight to the server with
 *    libcurl on one kept-alive handle, verifying against the caBundle it
 *    reads from the MutatingWebhookConfiguration before each request,
 *    and records every distinct serving certificate it was shown. It
 *    also counts as a failure every new connection the server did not
 *    announce: one not preceded by an answer with "Connection: close"
 *    (or by a new caBundle, which libcurl does not reuse a connection
 *    across). libcurl silently resends a request on a kept-alive
 *    connection the server closed under it; kube-apiserver's Go client
 *    does not resend a POST, and fails the call.
 * Not one request may fail, across at least two rotations:
 *  - serving certificates renewed (the CA kept: the bundle never
 *    changes, only the certificate the new daemon serves);
 *  - the CA itself rotated (the new CA joins the bundle, followed by the
 *    old one, before anything it signed is served).
 * And the direct client must have been shown at least three different
 * serving certificates, so its requests did cross the rotations.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "controller/certmgr.h"
#include "controller/kube.h"
#include "controller/loop.h"
#include "devserver/status.h"
#include "inproc.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/certs.h"
#include "webhook/webhook.h"

#define NS "cueue-system"
#define SVC "cueue-webhook-service"
#define HOST SVC "." NS ".svc"
#define SECRET "cueue-webhook-server-cert"
#define MWC "cueue-mutating-webhook-configuration"
#define NCREATORS 2
#define MAX_SEEN 64

static struct {
	struct webhook *wh;
	struct certmgr *cm;
	atomic_uint served;     /* requests the server answered */
	unsigned handed;        /* certificates the server took (loop) */
	atomic_bool stop;
} R;

/* One client thread's tally (written by it, read after the join; ok is
 * also read while it runs). */
struct client {
	int id;
	atomic_uint ok;
	unsigned failed;
	char first_error[512];
	char *seen[MAX_SEEN]; /* distinct serving certificates (PEM) */
	size_t nseen;
};

static void on_observe(void *ud, const char *path, unsigned code,
		       double seconds)
{
	(void)ud;
	(void)path;
	(void)code;
	(void)seconds;
	atomic_fetch_add(&R.served, 1);
}

static int on_certs(void *ud, const struct certs *c)
{
	struct err err = { "" };

	(void)ud;
	if (webhook_set_certificate(R.wh, c->cert_pem, c->key_pem, &err) < 0)
		return -1;
	R.handed++;
	return 0;
}

/* The server first serves a throwaway certificate (so its port is known
 * before the devserver starts); the certmgr's first one replaces it. */
static void start(const struct certmgr_opts *validity)
{
	struct certs_opts co = { .service = SVC, .namespace = NS,
				 .key_type = CERTS_EC_P256,
				 .now_s = (int64_t)time(NULL) };
	struct certs first = CERTS_INIT;
	struct webhook_opts wo;
	struct err err = { "" };
	struct api_endpoint ep = { NS, SVC, "127.0.0.1", 0 };
	struct certmgr_opts o = {
		.namespace = NS,
		.secret_name = SECRET,
		.service_name = SVC,
		.key_type = CERTS_EC_P256,
		.retry_ms = 100,
		.ca_validity_s = validity->ca_validity_s,
		.serving_validity_s = validity->serving_validity_s,
		.lookahead_s = validity->lookahead_s,
		.on_certs = on_certs,
	};

	memset(&R, 0, sizeof(R));
	atomic_init(&R.served, 0);
	atomic_init(&R.stop, false);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ck_assert_msg(certs_generate(&co, &first, &err) == 0, "%s", err.msg);
	webhook_opts_init(&wo);
	wo.addr = "127.0.0.1";
	wo.port = 0;
	wo.cert_pem = first.cert_pem;
	wo.key_pem = first.key_pem;
	wo.threads = 4;
	wo.observe = on_observe;
	R.wh = webhook_new(&wo, &err);
	webhook_opts_release(&wo);
	certs_release(&first);
	ck_assert_msg(R.wh != NULL, "webhook_new: %s", err.msg);
	ep.port = webhook_port(R.wh);
	inp_start(&(struct inp_opts){ .manifests = true, .endpoint = &ep });
	R.cm = certmgr_new(inp_kube(), &o);
	WAIT_FOR(certmgr_ready(R.cm), 15000);
}

static void stop(void)
{
	certmgr_free(R.cm);
	inp_stop();
	webhook_free(R.wh);
	memset(&R, 0, sizeof(R));
}

static void client_fail(struct client *c, const char *fmt, const char *a,
			const char *b)
{
	if (!c->failed++)
		snprintf(c->first_error, sizeof(c->first_error), fmt, a, b);
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- Jobs through the devserver ---- */

static void *creator_main(void *arg)
{
	struct client *c = arg;
	struct api_ref r = inp_ref("jobs", "default", NULL);

	for (unsigned i = 0; !atomic_load(&R.stop); i++) {
		struct api_status st = API_STATUS_INIT;
		char *text = xasprintf(
			"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
			"\"metadata\":{\"name\":\"load-%d-%u\",\"namespace\":"
			"\"default\"},\"spec\":{\"template\":{\"spec\":{"
			"\"restartPolicy\":\"Never\",\"containers\":[{"
			"\"name\":\"c\",\"image\":\"busybox\"}]}}}}",
			c->id, i);
		json_t *job = json_loads(text, 0, NULL);

		if (api_internal_create(inp_api(), &r, job, NULL, &st) == 0)
			atomic_fetch_add(&c->ok, 1);
		else
			client_fail(c, "create: %s%s", st.message, "");
		status_release(&st);
		json_decref(job);
		free(text);
		pause_ms(5);
	}
	return NULL;
}

/* ---- AdmissionReviews straight to the server ---- */

/* The caBundle of the first webhook of the mutating configuration,
 * decoded (new PEM text), or NULL. */
static char *current_ca(void)
{
	struct api_ref r = inp_ref("mutatingwebhookconfigurations", NULL,
				   MWC);
	struct api_status st = API_STATUS_INIT;
	json_t *o = api_internal_get(inp_api(), &r, &st);
	const char *b = json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(o, "webhooks"), 0),
		"clientConfig"), "caBundle"));
	size_t n = 0;
	char *pem = b ? (char *)b64_decode(b, strlen(b), B64_STD, &n, NULL)
		      : NULL;

	status_release(&st);
	json_decref(o);
	return pem;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	static const char want[] = "connection: close";
	bool *close = ud;

	if (sz * n >= sizeof(want) - 1 &&
	    !strncasecmp(p, want, sizeof(want) - 1))
		*close = true;
	return sz * n;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	char **buf = ud;
	size_t old = *buf ? strlen(*buf) : 0;

	*buf = xrealloc(*buf, old + sz * n + 1);
	memcpy(*buf + old, p, sz * n);
	(*buf)[old + sz * n] = '\0';
	return sz * n;
}

/* Remembers the serving certificate of the last transfer. */
static void note_cert(struct client *c, CURL *h)
{
	struct curl_certinfo *ci = NULL;
	const char *pem = NULL;

	if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) != CURLE_OK || !ci ||
	    ci->num_of_certs < 1)
		return; /* a reused connection reports none */
	for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next)
		if (!strncmp(l->data, "Cert:", 5))
			pem = l->data + 5;
	if (!pem)
		return;
	for (size_t i = 0; i < c->nseen; i++)
		if (!strcmp(c->seen[i], pem))
			return;
	if (c->nseen < MAX_SEEN)
		c->seen[c->nseen++] = xstrdup(pem);
}

static void *reviewer_main(void *arg)
{
	static const char review[] =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
		"\"AdmissionReview\",\"request\":{\"uid\":\"u-1\",\"kind\":"
		"{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"},"
		"\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
		"\"resource\":\"jobs\"},\"namespace\":\"default\","
		"\"operation\":\"CREATE\",\"object\":{\"apiVersion\":"
		"\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
		"\"namespace\":\"default\"},\"spec\":{\"template\":{\"spec\":"
		"{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
		"\"image\":\"busybox\"}]}}}}}}";
	struct client *c = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = curl_slist_append(
		NULL, "Content-Type: application/json");
	char *url = xasprintf("https://%s:%u/mutate-batch-v1-job", HOST,
			      webhook_port(R.wh));
	char *map = xasprintf("%s:%u:127.0.0.1", HOST, webhook_port(R.wh));
	struct curl_slist *res = curl_slist_append(NULL, map);
	bool closing = false;  /* the last answer said Connection: close */
	char *last_ca = NULL;  /* the bundle of the last request */

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RESOLVE, res);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, review);
	curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &closing);
	while (!atomic_load(&R.stop)) {
		char *ca = current_ca(), *body = NULL;
		char errbuf[CURL_ERROR_SIZE] = "";
		struct curl_blob blob;
		long code = 0, connects = 0;
		bool announced = closing || !last_ca || strcmp(last_ca, ca);
		CURLcode rc;

		if (!ca) {
			client_fail(c, "no caBundle in %s%s", MWC, "");
			pause_ms(5);
			continue;
		}
		blob.data = ca;
		blob.len = strlen(ca);
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
		closing = false;
		rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
		if (connects && !announced)
			client_fail(c, "the server closed a kept-alive "
				    "connection without a word%s%s", "", "");
		else if (rc != CURLE_OK)
			client_fail(c, "review: %s (%s)", curl_easy_strerror(rc),
				    errbuf);
		else if (code != 200 || !body ||
			 !strstr(body, "\"allowed\":true"))
			client_fail(c, "review answered: %s%s",
				    body ? body : "(nothing)", "");
		else
			atomic_fetch_add(&c->ok, 1);
		if (rc == CURLE_OK)
			note_cert(c, h);
		free(body);
		free(last_ca);
		last_ca = ca;
		pause_ms(5);
	}
	free(last_ca);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(res);
	curl_easy_cleanup(h);
	free(url);
	free(map);
	return NULL;
}

/* Has every client made `more` requests since `since` was taken? */
static bool all_moved_on(struct client *cl, const unsigned *since,
			 unsigned more)
{
	for (int i = 0; i <= NCREATORS; i++)
		if (atomic_load(&cl[i].ok) < since[i] + more)
			return false;
	return true;
}

/* Runs the clients while the certmgr makes at least `rotations` more
 * certificates of the kind counted by *counter and the server takes
 * them, then until every client made 20 more requests after the last,
 * and checks that nothing failed. */
static void rotate_under_load(const uint64_t *counter, unsigned rotations)
{
	struct client cl[NCREATORS + 1];
	pthread_t t[NCREATORS + 1];
	unsigned since[NCREATORS + 1];
	uint64_t from = *counter;
	unsigned handed = R.handed, jobs = 0;

	memset(cl, 0, sizeof(cl));
	for (int i = 0; i <= NCREATORS; i++) {
		cl[i].id = i;
		atomic_init(&cl[i].ok, 0);
		ck_assert_int_eq(pthread_create(&t[i], NULL, i < NCREATORS
						? creator_main : reviewer_main,
						&cl[i]), 0);
	}
	WAIT_FOR(*counter >= from + rotations &&
		 R.handed >= handed + rotations, 60000);
	/* more requests from every client after the last rotation */
	for (int i = 0; i <= NCREATORS; i++)
		since[i] = atomic_load(&cl[i].ok);
	WAIT_FOR(all_moved_on(cl, since, 20), 60000);
	atomic_store(&R.stop, true);
	for (int i = 0; i <= NCREATORS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_ge(R.handed, handed + rotations);
	for (int i = 0; i <= NCREATORS; i++) {
		unsigned ok = atomic_load(&cl[i].ok);

		ck_assert_msg(cl[i].failed == 0, "client %d: %u of %u failed; "
			      "first: %s", i, cl[i].failed, cl[i].failed + ok,
			      cl[i].first_error);
		ck_assert_uint_gt(ok, 20);
	}
	/* the server did answer them: two webhooks per Job, one review
	 * per direct request */
	for (int i = 0; i < NCREATORS; i++)
		jobs += atomic_load(&cl[i].ok);
	ck_assert_uint_ge(atomic_load(&R.served),
			  2 * jobs + atomic_load(&cl[NCREATORS].ok));
	/* the direct client was shown the certificates of the rotations */
	ck_assert_uint_ge(cl[NCREATORS].nseen, rotations + 1);
	fprintf(stderr, "certmgr_rotation: %llu rotations, %u Jobs created, "
		"%u direct reviews, %zu serving certificates seen, 0 "
		"failures\n", (unsigned long long)(*counter - from),
		jobs, atomic_load(&cl[NCREATORS].ok), cl[NCREATORS].nseen);
	for (int i = 0; i <= NCREATORS; i++)
		for (size_t k = 0; k < cl[i].nseen; k++)
			free(cl[i].seen[k]);
}

/* Serving certificates valid 12 s, renewed 8 s before they expire (every
 * 4 s or so); the CA (10 years) never changes. */
static void start_leaf(void)
{
	start(&(struct certmgr_opts){ .serving_validity_s = 12,
				      .lookahead_s = 8 });
}

START_TEST(serving_rotation_under_load)
{
	char *ca = current_ca();
	char *ca_after;

	rotate_under_load(&certmgr_stats(R.cm)->renewed, 3);
	ck_assert_uint_eq(certmgr_stats(R.cm)->generated, 1);
	ca_after = current_ca();
	ck_assert_str_eq(ca, ca_after);
	free(ca);
	free(ca_after);
}
END_TEST

/* The CA and the serving certificate valid 12 s, renewed 8 s before:
 * a new CA every 4 s or so. */
static void start_ca(void)
{
	start(&(struct certmgr_opts){ .ca_validity_s = 12,
				      .serving_validity_s = 12,
				      .lookahead_s = 8 });
}

START_TEST(ca_rotation_under_load)
{
	char *ca_before = current_ca(), *ca_after;

	rotate_under_load(&certmgr_stats(R.cm)->generated, 2);
	ca_after = current_ca();
	/* the bundle moved on, and holds the CA before it too */
	ck_assert_str_ne(ca_before, ca_after);
	ck_assert_ptr_nonnull(strstr(ca_after, "-----END CERTIFICATE-----\n"
				     "-----BEGIN CERTIFICATE-----"));
	free(ca_before);
	free(ca_after);
}
END_TEST

Suite *certmgr_rotation_suite(void)
{
	Suite *s = suite_create("certmgr_rotation");
	TCase *tc = tcase_create("serving");

	tcase_add_checked_fixture(tc, start_leaf, stop);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, serving_rotation_under_load);
	suite_add_tcase(s, tc);
	tc = tcase_create("ca");
	tcase_add_checked_fixture(tc, start_ca, stop);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ca_rotation_under_load);
	suite_add_tcase(s, tc);
	return s;
}
