# mk/demo.mk: `make demo` (demo/README.md) and the program it runs.
#
# cueue-demo (demo/*.c) plays the demo's Job stream and draws the
# dashboard; it links the controller's event loop, REST client and
# kubeconfig reader (libcontroller.a, with libconfig.a for the YAML of a
# kubeconfig and libjx.a for the JSON accessors). demo/demo.sh is the
# driver: devcluster, platform, program.
# `demo` installs what is missing first, then builds, as `check` does;
# SCENARIO=fair (make demo SCENARIO=fair) plays the fair-sharing demo;
# SCENARIO=mig walks through MIG quota with kubectl (demo/demo.sh).

DEMO_SRC := $(wildcard demo/*.c)
DEMO_OBJ := $(DEMO_SRC:%.c=$(BUILD)/%.o)
DEMO_BIN := $(BINDIR)/cueue-demo

ifneq ($(DEMO_SRC),)
all: $(DEMO_BIN)
endif

$(DEMO_BIN): $(DEMO_OBJ) $(LIBCONTROLLER) $(LIBCONFIG) $(LIBJX) $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(DEMO_OBJ) $(LIBCONTROLLER) $(LIBCONFIG) \
	  $(LIBJX) $(LIBCORE) $(CONTROLLER_LIBS) $(CONFIG_LIBS) $(CORE_LIBS)

-include $(DEMO_OBJ:.o=.d)

.PHONY: demo
demo: deps
	@$(MAKE) --no-print-directory all
	@DEMO_BIN=$(CURDIR)/$(DEMO_BIN) \
	  DEVSERVER_BIN=$(CURDIR)/$(DEVSERVER_BIN) \
	  MANAGER_BIN=$(CURDIR)/$(MANAGER_BIN) SCENARIO=$(SCENARIO) demo/demo.sh
