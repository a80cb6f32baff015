#!/usr/bin/env bash
# deploy: what `make image` and `kubectl apply -k manifests/` would give a
# cluster, checked without a container engine (none can run here):
#
#  1. manifests/ renders with the real kubectl's kustomize, and the
#     rendered objects say what a production install needs: two replicas
#     spread over nodes, a PodDisruptionBudget, probes on the
#     Configuration's health port, a hardened securityContext matching the
#     image's user, requests and limits, no writable volume, the Lease
#     RBAC in the manager's namespace, the Dockerfile's entrypoint;
#  2. the image's name and tag are written in one file only
#     (manifests/kustomization.yaml) and reach the Deployment and
#     `make image-name`; `make image` without an engine that can run
#     fails naming each engine and why (only engines that cannot run are
#     tried: a real build never starts here);
#  3. the Dockerfile: the build stage installs the Makefile's build
#     packages, and the tree minus .dockerignore holds every source
#     `make all` needs (make -n); every shared library `ldd bin/cueue-manager` lists belongs
#     to a package of the runtime stage's list or its dependency closure
#     (apt-cache depends --recurse, dpkg -L);
#  4. the runtime stage simulated: a root filesystem holding only the files
#     of those packages and /cueue-manager, mounted read-only, the binary
#     run in it (chroot) as user 65532: --help, and a control run without
#     one library that must fail (needs root and mount namespaces,
#     otherwise each check says "skip");
#  5. on a devserver (devcluster, no manager): the rendered objects of
#     the kinds it serves are applied with `kubectl apply --dry-run=server`
#     and then for real with `--server-side`; the kinds it does not serve
#     are listed by name (a kind outside the known list fails); a Lease
#     named by the Configuration's leaderElection is accepted (dry run);
#  6. the manager as its pod would run it, in the simulated root
#     (read-only, user 65532, in-cluster service account files and the
#     rendered ConfigMap mounted read-only, the Deployment's command and
#     args): /readyz answers 200 (certificates made and injected without
#     writing a file), the webhook answers the devserver, and SIGTERM
#     stops it with status 0.
#
# MANAGER_BIN / DEVSERVER_BIN test other binaries. Prints one line per
# check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init deploy

manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
cluster=$work/cluster
on_exit_stop_clusters "$cluster"
top=$e2e_top

for tool in kubectl curl ldd dpkg dpkg-query apt-cache; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "$tool on PATH" "the suite needs $tool"
		e2e_finish
	fi
done
if [ ! -x "$manager_src" ]; then
	fail "cueue-manager built" "$manager_src missing (run make all)"
	e2e_finish
fi
cp "$manager_src" "$work/cueue-manager"

# report FILE: turns the python checks' lines ("ok<TAB>NAME" or
# "FAIL<TAB>NAME<TAB>DETAIL", DETAIL with \n for newlines) into checks.
report() {
	local st name detail
	while IFS=$'\t' read -r st name detail; do
		case $st in
		ok) pass "$name" ;;
		FAIL) fail "$name" "$(printf '%b' "$detail")" ;;
		skip) echo "skip $name: $detail" ;;
		esac
	done <"$1"
}

# ---------------------------------------------------------------------
# 1-2. Rendering and the rendered objects
run_cmd kubectl kustomize "$top/manifests"
if [ "$rc" -eq 0 ]; then
	printf '%s\n' "$out" >"$work/rendered.yaml"
	pass "kubectl kustomize manifests/ renders ($(grep -c '^kind:' "$work/rendered.yaml") objects)"
else
	fail "kubectl kustomize manifests/ renders" "$out"
	e2e_finish
fi

# Everything below reads the rendered objects, the Dockerfile, the
# Makefile and the kustomization; it also leaves in $work what the later
# steps use: image, runtime-pkgs, config.yaml (the ConfigMap's
# Configuration), command (the Deployment's command and args, one a line),
# lease (namespace and name of the leader-election Lease).
python3 - "$top" "$work" >"$work/static.out" 2>&1 <<'EOF'
import re, sys, yaml

top, work = sys.argv[1], sys.argv[2]
out = []


def check(name, ok, detail=""):
    if ok:
        out.append("ok\t" + name)
    else:
        out.append("FAIL\t" + name + "\t" + str(detail).replace("\n", "\\n"))


def qty(s, mem):
    """A Kubernetes quantity as a number (cpu in cores, memory in bytes)."""
    s = str(s)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
             "k": 1e3, "M": 1e6, "G": 1e9}
    for u, f in units.items():
        if s.endswith(u):
            return float(s[:-len(u)]) * f
    return float(s)


docs = [d for d in yaml.safe_load_all(open(work + "/rendered.yaml")) if d]


def find(kind, name=None):
    return [d for d in docs if d["kind"] == kind and
            (name is None or d["metadata"]["name"] == name)]


# the Dockerfile's stages: FROM, USER, ENTRYPOINT and the packages of
# each stage's apt-get install (continuation lines joined)
stages = []
text = re.sub(r"\\\n", " ", open(top + "/Dockerfile").read())
for line in text.splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    word, _, rest = line.partition(" ")
    word = word.upper()
    if word == "FROM":
        stages.append({"from": rest.split()[0], "pkgs": [], "user": None,
                       "entrypoint": None})
    elif word == "RUN" and "apt-get install" in rest and stages:
        for cmd in rest.split("&&"):
            toks = cmd.split()
            if "install" in toks and "apt-get" in toks:
                stages[-1]["pkgs"] += [t for t in
                                      toks[toks.index("install") + 1:]
                                      if not t.startswith("-")]
    elif word == "USER" and stages:
        stages[-1]["user"] = rest.strip()
    elif word == "ENTRYPOINT" and stages:
        stages[-1]["entrypoint"] = yaml.safe_load(rest)
check("Dockerfile: a build stage on debian:bookworm and a runtime stage "
      "on debian:bookworm-slim",
      len(stages) == 2 and stages[0]["from"] == "debian:bookworm" and
      stages[1]["from"] == "debian:bookworm-slim",
      [s["from"] for s in stages])
build, run = stages[0], stages[-1]
open(work + "/runtime-pkgs", "w").write("\n".join(run["pkgs"]) + "\n")

# the Makefile's PKGS: the build stage installs all but the test tools
mk = open(top + "/Makefile").read()
m = re.search(r"^PKGS :=((?:.*\\\n)*.*)$", mk, re.M)
pkgs = m.group(1).replace("\\\n", " ").split() if m else []
tools = {"kubectl", "python3-kubernetes", "prometheus"}
missing = [p for p in pkgs if p not in tools and p not in build["pkgs"]]
check("Dockerfile: the build stage installs the Makefile's build packages",
      pkgs and not missing, "missing: %s" % missing)

user = run["user"] or ""
uid = user.split(":")[0]
check("Dockerfile: the runtime stage runs as the numeric non-root user "
      "65532", uid == "65532", "USER %r" % user)
ep = run["entrypoint"]
check("Dockerfile: ENTRYPOINT [\"/cueue-manager\"]",
      ep == ["/cueue-manager"], ep)

# the image: one name, written in the kustomization only
kz = yaml.safe_load(open(top + "/manifests/kustomization.yaml"))
imgs = kz.get("images", [])
check("kustomization: one images: entry with newName and newTag",
      len(imgs) == 1 and imgs[0].get("newName") and imgs[0].get("newTag"),
      imgs)
image = "%s:%s" % (imgs[0]["newName"], imgs[0]["newTag"]) if imgs else ""
open(work + "/image", "w").write(image + "\n")

dep = find("Deployment")
check("one Deployment", len(dep) == 1, len(dep))
dep = dep[0]
ns = dep["metadata"]["namespace"]
pod = dep["spec"]["template"]
podlabels = pod["metadata"]["labels"]
spec = pod["spec"]
c = spec["containers"][0]
check("Deployment: the container's image is the kustomization's",
      c["image"] == image, "%s != %s" % (c["image"], image))
check("Deployment: replicas 2", dep["spec"].get("replicas") == 2,
      dep["spec"].get("replicas"))


def selects(sel, labels):
    ml = (sel or {}).get("matchLabels", {})
    return ml and all(labels.get(k) == v for k, v in ml.items())


check("Deployment: its selector selects its pods",
      selects(dep["spec"]["selector"], podlabels))
pa = spec.get("affinity", {}).get("podAntiAffinity", {})
terms = pa.get("preferredDuringSchedulingIgnoredDuringExecution", [])
check("Deployment: preferred pod anti-affinity across nodes for its own pods",
      any(t["podAffinityTerm"].get("topologyKey") == "kubernetes.io/hostname"
          and selects(t["podAffinityTerm"].get("labelSelector"), podlabels)
          for t in terms) and
      not pa.get("requiredDuringSchedulingIgnoredDuringExecution"), pa)

pdb = find("PodDisruptionBudget")
check("PodDisruptionBudget policy/v1 minAvailable 1 over the Deployment's "
      "pods, in its namespace",
      len(pdb) == 1 and pdb[0]["apiVersion"] == "policy/v1" and
      pdb[0]["spec"].get("minAvailable") == 1 and
      "maxUnavailable" not in pdb[0]["spec"] and
      pdb[0]["metadata"].get("namespace") == ns and
      selects(pdb[0]["spec"].get("selector"), podlabels), pdb)

# the Configuration the pod mounts: the ConfigMap volume's key at the
# mount path the --config flag names
cmd = c.get("command", []) + c.get("args", [])
cfgflag = [a.split("=", 1)[1] for a in cmd if a.startswith("--config=")]
mnt = [m for m in c.get("volumeMounts", [])
       if cfgflag and m["mountPath"] == cfgflag[0]]
vol = [v for v in spec.get("volumes", [])
       if mnt and v["name"] == mnt[0]["name"] and "configMap" in v]
cm = find("ConfigMap", vol[0]["configMap"]["name"]) if vol else []
key = mnt[0].get("subPath") if mnt else None
check("Deployment: --config names the mounted ConfigMap's key",
      cm and key in cm[0].get("data", {}), (cfgflag, mnt, vol))
cfg = yaml.safe_load(cm[0]["data"][key]) if cm and key in cm[0].get(
    "data", {}) else {}
if cfg:
    open(work + "/config.yaml", "w").write(cm[0]["data"][key])
    open(work + "/command", "w").write("\n".join(cmd) + "\n")
check("the Configuration's namespace is the Deployment's",
      cfg.get("namespace") == ns, (cfg.get("namespace"), ns))
check("Deployment: the command is the Dockerfile's entrypoint",
      c.get("command") == ep or ("command" not in c and ep),
      (c.get("command"), ep))

health = (cfg.get("health") or {}).get("healthProbeBindAddress", ":8081")
hport = int(health.rsplit(":", 1)[1])
lp = c.get("livenessProbe", {}).get("httpGet", {})
rp = c.get("readinessProbe", {}).get("httpGet", {})
check("Deployment: liveness /healthz and readiness /readyz on the "
      "Configuration's health port %d" % hport,
      lp.get("path") == "/healthz" and rp.get("path") == "/readyz" and
      lp.get("port") == hport and rp.get("port") == hport, (lp, rp))

psc = spec.get("securityContext", {})
csc = c.get("securityContext", {})
check("Deployment: pod runAsNonRoot, runAsUser 65532 (the image's USER), "
      "seccomp RuntimeDefault",
      psc.get("runAsNonRoot") is True and
      str(psc.get("runAsUser")) == uid and
      psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", psc)
check("Deployment: container readOnlyRootFilesystem, no privilege "
      "escalation, every capability dropped",
      csc.get("readOnlyRootFilesystem") is True and
      csc.get("allowPrivilegeEscalation") is False and
      csc.get("capabilities", {}).get("drop") == ["ALL"] and
      not csc.get("capabilities", {}).get("add") and
      not csc.get("privileged"), csc)
writable = [v["name"] for v in spec.get("volumes", [])
            if not any(k in v for k in ("configMap", "secret", "projected"))]
rw = [m["mountPath"] for m in c.get("volumeMounts", [])
      if not m.get("readOnly")]
check("Deployment: no writable volume (the manager writes no file)",
      not writable and not rw, (writable, rw))
res = c.get("resources", {})
rq, lim = res.get("requests", {}), res.get("limits", {})
check("Deployment: cpu and memory requests and limits, requests <= limits",
      all(k in rq and k in lim for k in ("cpu", "memory")) and
      qty(rq["cpu"], False) <= qty(lim["cpu"], False) and
      qty(rq["memory"], True) <= qty(lim["memory"], True), res)

# leader election: the Lease the Configuration names, in the manager's
# namespace, and the Role that lets the service account use it
le = cfg.get("leaderElection") or {}
lease_ns = le.get("resourceNamespace") or ns
lease = le.get("resourceName", "")
check("Configuration: leaderElect on with a Lease name (Kueue's)",
      le.get("leaderElect", True) is True and lease, le)
open(work + "/lease", "w").write("%s %s\n" % (lease_ns, lease))
sa = spec.get("serviceAccountName", "default")
check("ServiceAccount %s/%s exists" % (ns, sa),
      any(d["metadata"].get("namespace") == ns
          for d in find("ServiceAccount", sa)))
want = {"get", "list", "watch", "create", "update", "patch"}
roles = [r["metadata"]["name"] for r in find("Role")
         if r["metadata"].get("namespace") == lease_ns and
         any("coordination.k8s.io" in rule.get("apiGroups", []) and
             "leases" in rule.get("resources", []) and
             want <= set(rule.get("verbs", [])) and
             not rule.get("resourceNames")
             for rule in r.get("rules", []))]
bound = [b for b in find("RoleBinding")
         if b["metadata"].get("namespace") == lease_ns and
         b["roleRef"]["kind"] == "Role" and b["roleRef"]["name"] in roles
         and any(s["kind"] == "ServiceAccount" and s["name"] == sa and
                 s.get("namespace", lease_ns) == ns
                 for s in b.get("subjects", []))]
check("RBAC: a Role in %s grants leases %s, bound to %s" %
      (lease_ns, "/".join(sorted(want)), sa), roles and bound,
      (roles, [b["metadata"]["name"] for b in bound]))
print("\n".join(out))
EOF
report "$work/static.out"
if grep -q Traceback "$work/static.out"; then
	fail "the rendered objects' checks ran" "$(cat "$work/static.out")"
	e2e_finish
fi
image=$(cat "$work/image")

run_cmd make -s -C "$top" image-name
if [ "$rc" -eq 0 ] && [ "$out" = "$image" ]; then
	pass "make image-name is the kustomization's image ($image)"
else
	fail "make image-name is the kustomization's image" "got '$out' (exit $rc), want '$image'"
fi
# make image without an engine that can run: a clear refusal naming each
# engine and why (a real build is never started here: an engine that
# answers would build)
run_cmd make -s -C "$top" image IMAGE_ENGINE=cueue-no-such-engine
if [ "$rc" -ne 0 ] && grep -q "^make image: no container engine can build $image here:" <<<"$out" &&
	grep -q '^  cueue-no-such-engine: not installed$' <<<"$out"; then
	pass "make image with no engine fails, naming it (not installed)"
else
	fail "make image with no engine fails, naming it" "exit $rc: $out"
fi
if command -v docker >/dev/null 2>&1 && ! docker info >/dev/null 2>&1 </dev/null; then
	run_cmd make -s -C "$top" image IMAGE_ENGINE=docker
	if [ "$rc" -ne 0 ] && grep -q '^  docker: installed (.*) but cannot run: .' <<<"$out"; then
		pass "make image with a docker client and no daemon fails, saying why"
	else
		fail "make image with a docker client and no daemon fails, saying why" "exit $rc: $out"
	fi
fi
# the name (without the tag) in every file of the tree but git's data and
# build output: the kustomization alone
hits=$(grep -rlF --exclude-dir=.git --exclude-dir=build --exclude-dir=bin \
	--exclude-dir=.dev --exclude-dir=.demo -- "${image%:*}" "$top" |
	sed "s|^$top/||")
if [ "$hits" = manifests/kustomization.yaml ]; then
	pass "the image name is written in manifests/kustomization.yaml only"
else
	fail "the image name is written in manifests/kustomization.yaml only" "files naming ${image%:*}:
$hits"
fi

# ---------------------------------------------------------------------
# 3. The build context and the runtime stage's packages against what the
# binary needs

# the build stage's `COPY . .` sends the tree minus .dockerignore's
# entries (plain names here): `make -n all` there finds every source
excl=()
while read -r pat; do
	case $pat in '' | '#'*) continue ;; esac
	excl+=("--exclude=./$pat")
done <"$top/.dockerignore"
mkdir -p "$work/context"
tar -C "$top" "${excl[@]}" -cf - . | tar -C "$work/context" -xf -
run_cmd make -n -C "$work/context" all
if [ "$rc" -eq 0 ] && [ ! -e "$work/context/bin" ] && [ ! -e "$work/context/build" ]; then
	pass "the build context (the tree minus .dockerignore: ${excl[*]#--exclude=./}) has what make all needs"
else
	fail "the build context (the tree minus .dockerignore) has what make all needs" "exit $rc: $(tail -5 <<<"$out")"
fi
rm -rf "$work/context"

mapfile -t runtime_pkgs <"$work/runtime-pkgs"
ldd "$work/cueue-manager" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }
	$1 ~ /^\// { print $1, $1 }' >"$work/needed"
nlib=$(wc -l <"$work/needed")

# unprovided PKG...: the libraries of $work/needed that neither the
# packages nor their dependency closure (apt-cache depends --recurse, as
# apt-get install --no-install-recommends pulls them) hold, one a line
# with the package that does; sets closure (the closure's size) and
# installed (its packages installed here).
unprovided() {
	local soname path p found owner
	apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "$@" \
		2>/dev/null | grep -v '^[ <]' | sort -u >"$work/closure"
	closure=$(wc -l <"$work/closure")
	installed=()
	while read -r p; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'ok installed' && installed+=("$p")
	done <"$work/closure"
	# every path those packages hold, /usr-merged ("/usr" stripped: ldd
	# may say /lib/... for /usr/lib/...)
	dpkg -L "${installed[@]}" 2>/dev/null | sed 's|^/usr/|/|' | sort -u \
		>"$work/closure-files"
	while read -r soname path; do
		found=
		for p in "$path" "$(readlink -f "$path")"; do
			grep -qxF -- "${p#/usr}" "$work/closure-files" &&
				found=1 && break
		done
		if [ -z "$found" ]; then
			owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | cut -d: -f1)
			echo "$soname ($path, package ${owner:-unknown})"
		fi
	done <"$work/needed"
}

# control: without libyaml-0-2 in the list, its library is missed
mapfile -t fewer < <(grep -vx 'libyaml-0-2' "$work/runtime-pkgs")
missing=$(unprovided "${fewer[@]}")
if [[ $missing == "libyaml-0.so.2 ("*", package libyaml-0-2)" ]]; then
	pass "control: a runtime list without libyaml-0-2 misses exactly libyaml-0.so.2"
else
	fail "control: a runtime list without libyaml-0-2 misses exactly libyaml-0.so.2" "missed: $missing"
fi
unprovided "${runtime_pkgs[@]}" >"$work/missing" # sets closure, installed
missing=$(cat "$work/missing")
if [ "$nlib" -gt 0 ] && [ -z "$missing" ]; then
	pass "every library ldd lists ($nlib) is in the runtime stage's packages (${#runtime_pkgs[@]}) or their dependencies ($closure packages)"
else
	fail "every library ldd lists is in the runtime stage's packages or their dependencies" "runtime packages: ${runtime_pkgs[*]}
not provided:
$missing"
fi
run_cmd "$work/cueue-manager" --help
if [ "$rc" -eq 0 ] && grep -q '^usage: cueue-manager' <<<"$out"; then
	pass "cueue-manager --help starts"
else
	fail "cueue-manager --help starts" "exit $rc: $out"
fi

# ---------------------------------------------------------------------
# 4. The runtime stage simulated: only the closure's files
root=$work/rootfs
can_root=
chroot_bin=$(command -v chroot)
if [ "$(id -u)" = 0 ] && [ -n "$chroot_bin" ] && unshare -m true 2>/dev/null; then
	can_root=1
fi

# in_root ARGS...: runs /cueue-manager ARGS in $root, read-only, as
# 65532:65532, with a clean environment plus $pod_env (VAR=VALUE words)
# and $pod_mounts (SRC:DEST pairs, mounted read-only), in its own mount
# namespace (its mounts vanish with it). Replaces itself with the
# manager, so its pid is the manager's.
pod_env=()
pod_mounts=()
in_root() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare -m --propagation private sh -ec '
		root=$1; nm=$2; shift 2
		mount --bind "$root" "$root"
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		i=0
		while [ "$i" -lt "$nm" ]; do
			src=${1%%:*}; dst=${1#*:}; shift
			mount --bind "$src" "$root$dst"
			mount -o remount,bind,ro "$root$dst"
			i=$((i + 1))
		done
		mount -o remount,bind,ro "$root"
		exec env -i "$@"' _ "$root" "${#pod_mounts[@]}" "${pod_mounts[@]}" \
		"${pod_env[@]}" "$chroot_bin" --userspec=65532:65532 "$root" \
		/cueue-manager "$@"
}

if [ -z "$can_root" ]; then
	echo "skip the runtime root filesystem checks: they need root and mount namespaces"
else
	mkdir -p "$root"/usr/{bin,sbin,lib,lib64}
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
	dpkg -L "${installed[@]}" 2>/dev/null |
		grep -vE '^/usr/share/(doc|man|info|locale|lintian|bug)/' |
		while read -r f; do
			[ -d "$f" ] && [ ! -L "$f" ] || echo "${f#/}"
		done >"$work/rootfs.list"
	# ca-certificates' bundle is made by its postinst, not shipped
	echo etc/ssl/certs/ca-certificates.crt >>"$work/rootfs.list"
	tar -C / -cf - --no-recursion -T "$work/rootfs.list" 2>/dev/null |
		tar -C "$root" -xf - --keep-directory-symlink
	# libc-bin, in the slim base, ships this file
	echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
	ldconfig -r "$root"
	install -m 0755 "$work/cueue-manager" "$root/cueue-manager"
	mkdir -p "$root"/{proc,dev,tmp} \
		"$root/var/run/secrets/kubernetes.io/serviceaccount"
	: >"$root/controller_manager_config.yaml"

	run_cmd in_root --help
	if [ "$rc" -eq 0 ] && grep -q '^usage: cueue-manager' <<<"$out"; then
		pass "the runtime root ($(du -sm "$root" | cut -f1) MiB, ${#installed[@]} packages): /cueue-manager --help as 65532 on a read-only root"
	else
		fail "the runtime root: /cueue-manager --help as 65532 on a read-only root" "exit $rc: $out"
	fi
	# control: the chroot really isolates from the host's libraries
	yaml_lib=$(readlink -f "$root$(awk '$1 ~ /^libyaml/ { print $2 }' "$work/needed")")
	mv "$yaml_lib" "$work/held-lib"
	run_cmd in_root --help
	mv "$work/held-lib" "$yaml_lib"
	if [ "$rc" -ne 0 ] && grep -q 'libyaml.*cannot open shared object' <<<"$out"; then
		pass "control: without libyaml-0-2's library the runtime root's binary does not start"
	else
		fail "control: without libyaml-0-2's library the runtime root's binary does not start" "exit $rc: $out"
	fi
fi

# ---------------------------------------------------------------------
# 5. The rendered objects on a devserver
# No manager, no preloaded webhook configurations: the suite installs the
# rendered ones itself, and the webhook Service leads to $wport, where
# the manager of step 6 listens.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wport=$(free_port)
export DEVCLUSTER_NO_MANAGER=1 DEVCLUSTER_WEBHOOK=0
export DEVCLUSTER_DEVSERVER_ARGS="--service-endpoint cueue-system/cueue-webhook-service=127.0.0.1:$wport"
devcluster_start "devcluster start (devserver only)"

# the kinds the devserver serves, as "apiVersion Kind"
kubectl api-resources --no-headers 2>/dev/null |
	awk '{ print $(NF - 2), $NF }' | sort -u >"$work/served-kinds"
python3 - "$work" >"$work/split.out" 2>&1 <<'EOF'
import sys, yaml
work = sys.argv[1]
served = set(tuple(l.split()) for l in open(work + "/served-kinds"))
docs = [d for d in yaml.safe_load_all(open(work + "/rendered.yaml")) if d]
ok = [d for d in docs if (d["apiVersion"], d["kind"]) in served]
yaml.safe_dump_all([d for d in ok if d["kind"] == "Namespace"],
                   open(work + "/namespaces.yaml", "w"))
yaml.safe_dump_all(ok, open(work + "/served.yaml", "w"))
for d in docs:
    if (d["apiVersion"], d["kind"]) not in served:
        m = d["metadata"]
        print(d["apiVersion"], d["kind"],
              (m["namespace"] + "/" if m.get("namespace") else "") +
              m["name"])
EOF
nserved=$(grep -c '^kind:' "$work/served.yaml")
# the kinds the devserver is known not to serve (devserver/builtin.c):
# anything else unserved is a new gap
known_re='^(apps/v1 Deployment|policy/v1 PodDisruptionBudget|v1 ServiceAccount|rbac\.authorization\.k8s\.io/v1 (Cluster)?Role(Binding)?) '
unknown=$(grep -Ev "$known_re" "$work/split.out")
if [ -z "$unknown" ]; then
	pass "every rendered kind is served by the devserver or a known gap"
	if [ -s "$work/split.out" ]; then
		echo "note: the devserver does not serve these kinds, so they are checked above but not applied:"
		sed 's/^/note:   /' "$work/split.out"
	fi
else
	fail "every rendered kind is served by the devserver or a known gap" "$unknown"
fi

# A server dry run of an install needs the namespace (kube-apiserver
# refuses a dry-run create in a namespace that does not exist): created
# first, from the rendered Namespace.
run_cmd kubectl apply --server-side --field-manager cueue-deploy -f "$work/namespaces.yaml"
[ "$rc" -eq 0 ] || fail "the rendered Namespace applies" "$out"
run_cmd kubectl apply --dry-run=server -f "$work/served.yaml"
if [ "$rc" -eq 0 ] && [ "$(grep -c '(server dry run)$' <<<"$out")" -eq "$nserved" ]; then
	pass "kubectl apply --dry-run=server: the $nserved served objects"
else
	fail "kubectl apply --dry-run=server: the $nserved served objects" "exit $rc:
$(grep -v 'last-applied-configuration annotation' <<<"$out")"
fi
run_cmd kubectl apply --server-side --field-manager cueue-deploy -f "$work/served.yaml"
if [ "$rc" -eq 0 ] && [ "$(grep -c 'serverside-applied$' <<<"$out")" -eq "$nserved" ]; then
	pass "kubectl apply --server-side: the $nserved served objects"
else
	fail "kubectl apply --server-side: the $nserved served objects" "exit $rc:
$out"
fi
read -r lease_ns lease_name <"$work/lease"
cat >"$work/lease.json" <<EOF
{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
 "metadata": {"name": "$lease_name", "namespace": "$lease_ns"},
 "spec": {"holderIdentity": "cueue-controller-manager-0",
          "leaseDurationSeconds": 15}}
EOF
run_cmd kubectl create --dry-run=server -o name -f "$work/lease.json"
if [ "$rc" -eq 0 ]; then
	pass "the leader-election Lease $lease_ns/$lease_name is accepted (server dry run)"
else
	fail "the leader-election Lease $lease_ns/$lease_name is accepted (server dry run)" "$out"
fi

# ---------------------------------------------------------------------
# 6. The manager as its pod runs it
if [ -z "$can_root" ]; then
	echo "skip the manager in the runtime root: it needs root and mount namespaces"
	devcluster_stop
	e2e_finish
fi
api=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
sa=$work/serviceaccount
mkdir -p "$sa"
kubectl config view --raw -o jsonpath='{.users[0].user.token}' >"$sa/token"
kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
	base64 -d >"$sa/ca.crt"
echo "$lease_ns" >"$sa/namespace"
chmod 0644 "$sa"/* "$work/config.yaml"
hport=$(free_port)
host=${api#https://}
pod_env=(KUBERNETES_SERVICE_HOST="${host%:*}" KUBERNETES_SERVICE_PORT="${host##*:}")
pod_mounts=("$work/config.yaml:/controller_manager_config.yaml"
	"$sa:/var/run/secrets/kubernetes.io/serviceaccount")
# the Deployment's command and args; the ports move to free loopback
# ones (later flags win)
mapfile -t podcmd <"$work/command"
[ "${podcmd[0]}" = /cueue-manager ] || fail "the Deployment's command runs /cueue-manager" "${podcmd[*]}"
( in_root "${podcmd[@]:1}" --webhook-bind-address "127.0.0.1:$wport" \
	--metrics-bind-address 127.0.0.1:0 \
	--health-probe-bind-address "127.0.0.1:$hport" ) \
	>"$work/manager.log" 2>&1 </dev/null &
mpid=$!
e2e_pids+=("$mpid")

readyz() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
		"http://127.0.0.1:$hport/readyz")" = 200 ]
}
if wait_until 600 readyz; then
	pass "the manager in the runtime root is ready (/readyz 200: caches synced, certificates made and injected, webhook serving)"
else
	fail "the manager in the runtime root is ready" "$(tail -20 "$work/manager.log")"
fi
uid=$(ps -o uid= -p "$mpid" 2>/dev/null | tr -d ' ')
mroot=$(readlink "/proc/$mpid/root" 2>/dev/null)
if [ "$uid" = 65532 ] && [ "$mroot" = "$root" ]; then
	pass "it runs as uid 65532 with the runtime root as /"
else
	fail "it runs as uid 65532 with the runtime root as /" "uid '$uid', root '$mroot'"
fi
if grep -Eqi 'read-only file system|permission denied' "$work/manager.log"; then
	fail "it logs no failed write" "$(grep -Ei 'read-only file system|permission denied' "$work/manager.log" | head -5)"
else
	pass "it logs no failed write"
fi
secret=$(kubectl get secret -n "$lease_ns" cueue-webhook-server-cert \
	-o jsonpath='{.data.tls\.crt}' 2>&1)
bundle=$(kubectl get validatingwebhookconfiguration \
	cueue-validating-webhook-configuration \
	-o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>&1)
if [ -n "$secret" ] && [ -n "$bundle" ]; then
	pass "the certificate is in the Secret and the caBundle injected"
else
	fail "the certificate is in the Secret and the caBundle injected" "secret tls.crt: '${secret:0:40}', caBundle: '${bundle:0:40}'"
fi
cat >"$work/flavor.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: deploy-check
EOF
match "the devserver calls its webhooks (ResourceFlavor, server dry run)" 0 \
	'^resourceflavor.kueue.x-k8s.io/deploy-check created \(server dry run\)$' \
	kubectl create --dry-run=server -f "$work/flavor.yaml"
kill -TERM "$mpid" 2>/dev/null
wait "$mpid"
rc=$?
if [ "$rc" -eq 0 ]; then
	pass "SIGTERM stops it (exit 0)"
else
	fail "SIGTERM stops it (exit 0)" "exit $rc; $(tail -5 "$work/manager.log")"
fi
devcluster_stop
e2e_finish
