# cueue-manager's container image (make image; mk/image.mk names it after
# manifests/kustomization.yaml's `images:` entry).
#
# Two stages on Debian bookworm:
#  - build: the compiler and the -dev packages of the Makefile's PKGS
#    (its test-only tools, kubectl, python3-kubernetes and prometheus,
#    left out), then `make all`, as on a developer's machine;
#  - runtime: bookworm-slim with only the shared libraries
#    bin/cueue-manager links (libcurl with OpenSSL, libmicrohttpd with
#    GnuTLS, OpenSSL, jansson, libyaml) and the CA certificates, the
#    binary as /cueue-manager, run as the numeric non-root user 65532.
#
# The manager writes no file: its webhook certificates live in memory and
# in a Secret (controller/certmgr.h), its configuration and service
# account token are read-only mounts, its logs go to stderr. So the image
# runs with a read-only root filesystem and no writable volume.
# test/e2e/deploy.sh checks the runtime package list against what the
# binary needs, and runs it that way.

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gcc libc6-dev make pkg-config \
      libmicrohttpd-dev libgnutls28-dev libssl-dev libjansson-dev \
      libcurl4-openssl-dev libyaml-dev check \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" all \
 && install -m 0755 -s bin/cueue-manager /cueue-manager

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libmicrohttpd12 libgnutls30 libssl3 libjansson4 \
      libyaml-0-2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /cueue-manager /cueue-manager
USER 65532:65532
ENTRYPOINT ["/cueue-manager"]
