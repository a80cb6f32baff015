/*
 * kube_int: what kube_watch.c needs from kube.c and no one else does:
 * streaming GETs whose 2xx body goes to a byte sink instead of being
 * buffered and parsed, and the informer count kube_free checks.
 */
#ifndef CONTROLLER_KUBE_INT_H
#define CONTROLLER_KUBE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/kube.h"

/*
 * Body bytes of a 2xx streamed answer, as they arrive; data is borrowed
 * for the call. Called first with len 0 once the 2xx answer's headers
 * are in (the stream is established, before any byte of its body). Returns true to go on, false to stop the stream (which
 * then ends with KUBE_STOPPED). Runs inside a libcurl callback: it may
 * submit requests but must not cancel its own call.
 */
typedef bool kube_sink_fn(void *ud, const char *data, size_t len);

/*
 * As kube_submit for r (verb KUBE_WATCH), with the 2xx body streamed to
 * sink; a non-2xx answer is buffered (object ceiling) and parsed as
 * usual. timeout_ms bounds the whole stream (0: none).
 */
struct kube_call *kube_stream(struct kube *k, const struct kube_req *r,
			      kube_sink_fn *sink, int64_t timeout_ms);

/* The object ceiling and the list ceiling of the client. */
size_t kube_max_object(const struct kube *k);
size_t kube_max_list(const struct kube *k);

/* Informers register so kube_free can tell it is freed too early. */
void kube_informer_attach(struct kube *k);
void kube_informer_detach(struct kube *k);

/* The loop's now; for jitter seeds and watch durations. */
int64_t kube_now_ms(const struct kube *k);

/*
 * Is the server there again? kube_answers counts the HTTP answers of any
 * status the client received (transport failures do not count), so a
 * waiting informer that saw it move knows the server answers. kube_probe
 * sends one GET /readyz (a control request: past the rate limiter; one
 * at a time, at most one a second) whose answer moves the count; an
 * informer waiting out a long backoff after transport failures calls it
 * every second, so the informers come back within about a second of
 * the server instead of after their backoff (up to 30 s).
 */
uint64_t kube_answers(const struct kube *k);
void kube_probe(struct kube *k);

#endif
