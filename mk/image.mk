# mk/image.mk: the container image (Dockerfile) and the deployment check.
# Included by the Makefile's last lines (mk/*.mk); sees its variables.
#
#   make image        build the image with the first of podman, buildah or
#                     docker that is installed and can run (IMAGE_ENGINE=
#                     picks one); fails, naming why, when none can
#   make image-name   print the image's name:tag
#   make e2e-deploy   test/e2e/deploy.sh: the manifests render and apply
#                     (server dry-run) to a devserver, the runtime stage's
#                     packages provide every library the manager needs,
#                     the manager runs as the image would
#
# IMAGE is set in one place, manifests/kustomization.yaml's `images:`
# entry (newName:newTag), which kustomize also writes into the
# Deployment; `make image IMAGE=...` builds under another name without
# changing the manifests.

KUSTOMIZATION := manifests/kustomization.yaml
IMAGE ?= $(shell awk '$$1 == "newName:" { n = $$2 } \
	$$1 == "newTag:" { t = $$2 } \
	END { gsub(/"/, "", n); gsub(/"/, "", t); print n ":" t }' \
	$(KUSTOMIZATION))
IMAGE_ENGINES := podman buildah docker
IMAGE_ENGINE ?=

.PHONY: image image-name e2e-deploy
image-name:
	@echo $(IMAGE)

# An engine "can run" when its info command answers: a docker client
# without a daemon, or a podman without its storage, is installed but
# cannot build. Each one's reason is kept for the error message.
image:
	@why=""; engine=""; \
	for e in $(or $(IMAGE_ENGINE),$(IMAGE_ENGINES)); do \
	  if ! command -v $$e >/dev/null 2>&1; then \
	    why="$$why\n  $$e: not installed"; continue; fi; \
	  if out=$$($$e info 2>&1 </dev/null); then engine=$$e; break; fi; \
	  why="$$why\n  $$e: installed ($$(command -v $$e)) but cannot run: $$(printf '%s\n' "$$out" | grep -v '^ *$$' | tail -1)"; \
	done; \
	if [ -z "$$engine" ]; then \
	  printf 'make image: no container engine can build $(IMAGE) here:%b\n' "$$why" >&2; \
	  printf 'make image: start one (a docker daemon, rootless podman) or build elsewhere: the Dockerfile needs debian:bookworm and debian:bookworm-slim from a registry\n' >&2; \
	  exit 1; \
	fi; \
	echo "make image: $$engine builds $(IMAGE)"; \
	case $$engine in \
	buildah) buildah bud -f Dockerfile -t $(IMAGE) . ;; \
	*) $$engine build -f Dockerfile -t $(IMAGE) . ;; \
	esac

e2e-deploy: $(MANAGER_BIN) $(DEVSERVER_BIN)
	test/e2e/deploy.sh
