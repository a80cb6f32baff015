# mk/obs.mk: build rules of engineer "obs" (observability): the webhook
# bench program. Included by the Makefile's last line; sees its variables.

# webhook-bench: the admission webhook in-process beside a bare TLS
# libmicrohttpd responder, under the same libcurl client load
# (test/bench/webhook_bench.c; run by test/bench/run.sh).
WEBHOOK_BENCH := $(BUILD)/webhook-bench
ifneq ($(wildcard test/bench/webhook_bench.c),)
all: $(WEBHOOK_BENCH)
endif
$(WEBHOOK_BENCH): $(BUILD)/test/bench/webhook_bench.o $(LIBWEBHOOK) \
		$(LIBCONFIG) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBWEBHOOK) $(LIBCONFIG) $(LIBCORE) -lcurl \
	  $(WEBHOOK_LIBS) $(CONFIG_LIBS) $(CORE_LIBS)
-include $(BUILD)/test/bench/webhook_bench.d
