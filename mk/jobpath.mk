# jobpath-bench: the batch/v1 Job path end to end through the TLS
# webhooks against a devcluster (test/bench/jobpath.c; test/bench/
# jobpath.sh starts the cluster). libcurl + jansson, and the allocation
# policy and base64 (the kubeconfig's CA, in benchlib) out of libcore.
JOBPATH_BENCH := $(BUILD)/jobpath-bench
ifneq ($(wildcard test/bench/jobpath.c),)
all: $(JOBPATH_BENCH)
endif

# benchlib: the client code the bench programs share (kubeconfig, libcurl
# requests and watches, /proc CPU, percentiles, ROW lines;
# test/bench/benchlib.h).
BENCHLIB_OBJ := $(BUILD)/test/bench/benchlib.o
-include $(BUILD)/test/bench/benchlib.d

$(JOBPATH_BENCH): $(BUILD)/test/bench/jobpath.o $(BENCHLIB_OBJ) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BENCHLIB_OBJ) $(LIBCORE) -lcurl -lpthread \
	  $(CORE_LIBS)
-include $(BUILD)/test/bench/jobpath.d
