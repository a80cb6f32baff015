# mk/obs.mk: build rules of engineer "obs" (observability): the webhook
# bench program. Included by the Makefile's last line; sees its variables.

# webhook-bench: the admission webhook in-process beside a bare TLS
# libmicrohttpd responder, under the same libcurl client load
# (test/bench/webhook_bench.c; run by test/bench/run.sh).
WEBHOOK_BENCH := $(BUILD)/webhook-bench
ifneq ($(wildcard test/bench/webhook_bench.c),)
all: $(WEBHOOK_BENCH)
endif
# benchlib.o (test/bench/benchlib.c: percentiles, ROW lines, rusage) is
# mk/jobpath.mk's BENCHLIB_OBJ, named in full here so that the order the
# mk/ files are read in does not matter.
$(WEBHOOK_BENCH): $(BUILD)/test/bench/webhook_bench.o \
		$(BUILD)/test/bench/benchlib.o $(LIBWEBHOOK) $(LIBCONFIG) \
		$(LIBJX) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o \
	  $(LIBWEBHOOK) $(LIBCONFIG) $(LIBJX) $(LIBCORE) -lcurl \
	  $(WEBHOOK_LIBS) $(CONFIG_LIBS) $(CORE_LIBS)
-include $(BUILD)/test/bench/webhook_bench.d
