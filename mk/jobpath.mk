# jobpath-bench: the batch/v1 Job path end to end through the TLS
# webhooks against a devcluster (test/bench/jobpath.c; test/bench/
# jobpath.sh starts the cluster). libcurl + jansson + OpenSSL (base64 of
# the kubeconfig's CA), and the allocation policy out of libcore.
JOBPATH_BENCH := $(BUILD)/jobpath-bench
ifneq ($(wildcard test/bench/jobpath.c),)
all: $(JOBPATH_BENCH)
endif
$(JOBPATH_BENCH): $(BUILD)/test/bench/jobpath.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCORE) -lcurl -lpthread $(CORE_LIBS)
-include $(BUILD)/test/bench/jobpath.d
