# test/e2e/lib.bash: helpers shared by the e2e suites (sourced, not run;
# run.sh runs only *.sh). A suite does:
#
#   . "$(dirname "$0")/lib.bash"
#   e2e_init NAME                  # work dir, counters, trap on EXIT
#   start_server VAR ARGS...       # devserver on a free loopback port
#   expect NAME RC CMD... <<'EOF'  # exact output after normalisation
#   ...
#   e2e_finish                     # "N passed, M failed", exit status
#
# Every server and background helper a suite starts is a child of the
# suite's shell, recorded here and stopped (and reaped) on EXIT, so a
# suite leaves no process behind even when it dies half-way.
#
# The last section holds what the devcluster suites share (core, jobs, config,
# v1beta1, prometheus, promtool, demo): the cluster's start, stop and
# cleanup, polling checks, jsonpath reads, cueue-invariants, Workloads.

e2e_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
e2e_dir=$e2e_top/test/e2e
devserver_bin=${DEVSERVER_BIN:-$e2e_top/bin/cueue-devserver}
kubectl_dir=
if command -v kubectl >/dev/null 2>&1; then
	kubectl_dir=$(dirname "$(readlink -f "$(command -v kubectl)")")
fi

# python3 runs the interpreter itself, found once (run.sh finds it for all
# the suites and exports E2E_PYTHON). The python3 on PATH may be a version
# manager's shim, such as pyenv's bash script, which costs about half a
# second of CPU a call where the interpreter costs a tenth of that, and
# the suites run python3 hundreds of times (snapshot, history.py,
# devcluster's free port) on a machine whose CPU the suites share. The
# function is exported, so that the scripts a suite runs (devcluster)
# use it too.
if [ -z "${E2E_PYTHON:-}" ]; then
	E2E_PYTHON=$(command python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
fi
if [ -n "$E2E_PYTHON" ] && [ -x "$E2E_PYTHON" ]; then
	export E2E_PYTHON
	python3() { "$E2E_PYTHON" "$@"; }
	export -f python3
fi

passed=0
failed=0
e2e_pids=()
e2e_servers=()
work=

e2e_cleanup() {
	local p
	for p in "${e2e_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${e2e_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	e2e_pids=()
	[ -n "$work" ] && [ -z "${E2E_KEEP:-}" ] && rm -rf "$work"
}

# e2e_init NAME: work dir under /tmp, counters, cleanup trap.
e2e_init() {
	work=$(mktemp -d "/tmp/e2e-$1.XXXXXX")
	trap e2e_cleanup EXIT
	trap 'exit 130' INT TERM
}

# e2e_bg CMD...: runs CMD in the background (a helper racing a kubectl
# command); its pid is in $e2e_bg_pid and it is reaped on EXIT.
e2e_bg() {
	"$@" &
	e2e_bg_pid=$!
	e2e_pids+=("$e2e_bg_pid")
}

# start_server VAR ARGS...: starts bin/cueue-devserver --listen
# 127.0.0.1:0 ARGS (the kernel picks a free port), waits for its
# "listening on URL" line and sets VAR_url, VAR_pid, VAR_log (stderr).
start_server() {
	local var=$1 out i url
	shift
	out=$work/server-$var
	if [ ! -x "$devserver_bin" ]; then
		echo "FATAL: $devserver_bin missing (run make all)" >&2
		exit 1
	fi
	"$devserver_bin" --listen 127.0.0.1:0 "$@" >"$out.out" 2>"$out.err" &
	printf -v "${var}_pid" '%s' "$!"
	e2e_pids+=("$!")
	e2e_servers+=("$var")
	for i in $(seq 1 100); do
		url=$(sed -n 's/^listening on //p' "$out.out")
		if [ -n "$url" ]; then
			printf -v "${var}_url" '%s' "$url"
			printf -v "${var}_log" '%s' "$out.err"
			return 0
		fi
		sleep 0.1
	done
	echo "FATAL: devserver $* did not start:" >&2
	cat "$out.err" >&2
	exit 1
}

# stop_server VAR [PREFIX]: SIGTERM, then one check (named "PREFIX server
# VAR stops on SIGTERM") that it exits 0 within 5 s.
stop_server() {
	local var=$1 pid i rc t=${2:+$2 }
	pid=${var}_pid
	pid=${!pid}
	local keep=() v
	for v in "${e2e_servers[@]}"; do
		[ "$v" = "$var" ] || keep+=("$v")
	done
	e2e_servers=("${keep[@]}")
	case $(ps -o stat= -p "$pid" 2>/dev/null) in
	'' | Z*)
		wait "$pid"
		rc=$?
		fail "${t}server $var stops on SIGTERM" "it had already exited, status $rc; stderr:
$(tail -5 "$work/server-$var.err")"
		return ;;
	esac
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "${t}server $var stops on SIGTERM" "still running after 5 s"
		return
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "${t}server $var stops on SIGTERM (exit 0)"
	else
		fail "${t}server $var stops on SIGTERM" "exit status $rc; stderr:
$(tail -5 "$work/server-$var.err")"
	fi
}

# E2E_TIMING=1: each result line also says how long since the last one.
e2e_last_ms=$(($(date +%s%N) / 1000000))
e2e_took=
e2e_time() {
	local now
	e2e_took=
	[ -n "${E2E_TIMING:-}" ] || return 0
	now=$(($(date +%s%N) / 1000000))
	e2e_took=" [$((now - e2e_last_ms)) ms]"
	e2e_last_ms=$now
}

# known_failure REASON: the next check, if it fails, is reported as a
# known failure (a devserver gap waiting for a decision). It still counts
# as failed.
e2e_known=
known_failure() {
	e2e_known=$1
}

pass() {
	passed=$((passed + 1))
	e2e_time
	e2e_known=
	printf 'ok   %s%s\n' "$1" "$e2e_took"
}

# server_health: one line per running server: alive? listening?
server_health() {
	local v pid url port
	for v in "${e2e_servers[@]}"; do
		pid=${v}_pid url=${v}_url
		pid=${!pid} url=${!url:-}
		port=${url##*:}
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "server $v (pid $pid, $url): NOT RUNNING"
		elif ! ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; then
			echo "server $v (pid $pid, $url): running, NOT LISTENING"
		fi
	done
}

# fail NAME DETAIL
fail() {
	failed=$((failed + 1))
	e2e_time
	printf 'FAIL %s%s%s\n' "$1" \
		"${e2e_known:+ (KNOWN FAILURE: $e2e_known)}" "$e2e_took"
	e2e_known=
	[ -n "${2:-}" ] && sed 's/^/     | /' <<<"$2" | head -40
	server_health | sed 's/^/     ! /'
	return 0
}

# norm: the volatile parts of kubectl output become placeholders:
# the work dir, uids, RFC 3339 timestamps, resourceVersions, the random
# suffix of generateName, klog line headers, trailing blanks.
norm() {
	sed -E \
		-e "s#${work}#<work>#g" \
		-e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<uid>/g' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<ts>/g' \
		-e 's/(resourceVersion: )"[0-9]+"/\1"<rv>"/g' \
		-e 's/("resourceVersion": ?)"[0-9]+"/\1"<rv>"/g' \
		-e 's/(Resource Version: +)[0-9]+/\1<rv>/' \
		-e 's/(job-sample-)[bcdfghjklmnpqrstvwxz2456789]{5}/\1<gen>/g' \
		-e 's/^([IWE])[0-9]{4} [0-9:.]+ +[0-9]+ ([a-z_]+\.go:[0-9]+\])/\1<klog> \2/' \
		-e 's/[[:space:]]+$//'
}

# norm_table: norm, then every line from the table header on (the first
# line that starts with NAME or NAMESPACE) is cut into its cells at the
# header's column starts and printed as "cell | cell | ...", ages and
# durations ("5s", "2m3s", "<invalid>") as <age>. Lines before the header
# (warnings) are kept as they are. Column widths, which depend on ages
# and names, thereby drop out of the comparison.
norm_table() {
	norm | awk '
	function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
	!hdr && /^(NAME|NAMESPACE) / {
		hdr = 1; n = 0
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c != " " && (i == 1 || substr($0, i - 2, 2) == "  "))
				start[++n] = i
		}
	}
	!hdr { print; next }
	{
		line = ""
		for (k = 1; k <= n; k++) {
			cell = k < n ? substr($0, start[k], start[k + 1] - start[k]) \
				     : substr($0, start[k])
			cell = trim(cell)
			if (cell ~ /^([0-9]+[smhdy])+$/ || cell == "<invalid>")
				cell = "<age>"
			line = line (k > 1 ? " | " : "") cell
		}
		sub(/ +$/, "", line)
		print line
	}'
}

# run_cmd CMD...: runs CMD (stdin /dev/null: kubectl never gets to
# prompt) with stdout+stderr in $out, exit status in $rc.
run_cmd() {
	out=$("$@" 2>&1 </dev/null)
	rc=$?
}

# compare NAME WANT_RC NORMALISER CMD... (expected text on stdin)
compare() {
	local name=$1 want=$2 normaliser=$3 exp got
	shift 3
	exp=$(cat)
	run_cmd "$@"
	got=$($normaliser <<<"$out")
	if [ "$rc" -eq "$want" ] && [ "$got" == "$exp" ]; then
		pass "$name"
	else
		fail "$name" "command: $*
exit status $rc (want $want); diff expected actual:
$(diff <(printf '%s\n' "$exp") <(printf '%s\n' "$got") | head -30)"
	fi
}

# expect NAME WANT_RC CMD... <<'EOF': exact output (stdout+stderr), norm'd.
expect() {
	local name=$1 want=$2
	shift 2
	compare "$name" "$want" norm "$@"
}

# expect_table NAME WANT_RC CMD... <<'EOF': a table, norm_table'd.
expect_table() {
	local name=$1 want=$2
	shift 2
	compare "$name" "$want" norm_table "$@"
}

# expect_golden NAME WANT_RC FILE CMD...: exact output against
# test/e2e/golden/FILE (norm'd); E2E_UPDATE_GOLDEN=1 rewrites the file.
expect_golden() {
	local name=$1 want=$2 file=$e2e_dir/golden/$3
	shift 3
	if [ -n "${E2E_UPDATE_GOLDEN:-}" ]; then
		run_cmd "$@"
		norm <<<"$out" >"$file"
	fi
	compare "$name" "$want" norm "$@" <"$file"
}

# match NAME WANT_RC ERE CMD...: exit status and an extended regex that
# must match some line of the (norm'd) output.
match() {
	local name=$1 want=$2 pat=$3
	shift 3
	run_cmd "$@"
	if [ "$rc" -eq "$want" ] && norm <<<"$out" | grep -Eq -- "$pat"; then
		pass "$name"
	else
		fail "$name" "command: $*
exit status $rc (want $want); pattern: $pat; output:
$(head -20 <<<"$out")"
	fi
}

# wait_for_line FILE ERE [TENTHS]: waits until FILE has a line matching.
wait_for_line() {
	local i
	for i in $(seq 1 "${3:-100}"); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# e2e_finish: the last line, "N passed, M failed"; exit 1 on failure.
e2e_finish() {
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
	exit
}

# ---------------------------------------------------------------------
# Helpers of the suites that run a test/e2e/devcluster (core, jobs, config,
# v1beta1, prometheus, promtool, demo). They use the suite's variables
# $devcluster (the script), $cluster (its state dir) and, for
# invariants, $inv_bin (cueue-invariants).

# on_exit_stop_clusters DIR...: the EXIT trap also stops each DIR's devcluster.
e2e_clusters=()
on_exit_stop_clusters() {
	e2e_clusters=("$@")
	trap e2e_cluster_cleanup EXIT
}

# e2e_cluster_cleanup: stops the devclusters whose dirs exist, then e2e_cleanup.
e2e_cluster_cleanup() {
	local d
	for d in "${e2e_clusters[@]}"; do
		[ -d "$d" ] && "$e2e_dir/devcluster" stop "$d" >/dev/null 2>&1
	done
	e2e_cleanup
}

# devcluster_start NAME: starts $cluster, check NAME; the suite ends if it fails.
# job_cluster_start: the Job suites' cluster (evict, jobs, preemption):
# stops the suite unless $inv_bin and $manager_src are built, runs a copy
# of the manager (a rebuild during the suite cannot swap it), Jobs that
# run for an hour unless released, and the webhook path.
job_cluster_start() {
	local b
	for b in "$inv_bin" "$manager_src"; do
		if [ ! -x "$b" ]; then
			fail "binaries built" "$b missing (run make all)"
			e2e_finish
		fi
	done
	cp "$manager_src" "$work/cueue-manager"
	export MANAGER_BIN=$work/cueue-manager
	export DEVCLUSTER_JOB_RUNTIME=1h
	devcluster_start "devcluster start (webhook serving)"
}

devcluster_start() {
	run_cmd "$devcluster" start "$cluster"
	if [ "$rc" -eq 0 ] && [ "$out" = "export KUBECONFIG=$cluster/kubeconfig" ]; then
		pass "$1"
	else
		fail "devcluster start" "exit $rc: $out
$(tail -20 "$cluster/manager.log" 2>/dev/null)"
		e2e_finish
	fi
	export KUBECONFIG=$cluster/kubeconfig
}

# devcluster_stop: stops $cluster, one check that SIGTERM was enough (no output).
devcluster_stop() {
	run_cmd "$devcluster" stop "$cluster"
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
		pass "devcluster stop (SIGTERM was enough)"
	else
		fail "devcluster stop" "exit $rc: $out"
	fi
}

# now_ms: wall clock in milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# wait_until TENTHS CMD...: polls CMD (output discarded) for TENTHS/10 s of
# wall time (the machine may be busy: time, not tries): at once, then
# after 0.1, 0.2 and 0.4 s, then every $poll_every s. Most conditions
# hold at the first or second try; a long wait costs a kubectl (about
# 0.15 s of CPU) per $poll_every instead of per 0.2 s, which on the
# two cores make check shares is what the suites wait for.
poll_every=0.5
wait_until() {
	local end=$(($(now_ms) + $1 * 100)) pause=0.1
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep "$pause"
		case $pause in
		0.1) pause=0.2 ;;
		0.2) pause=0.4 ;;
		*) pause=$poll_every ;;
		esac
	done
}

# is_eq WANT CMD...: CMD prints exactly WANT (stdout+stderr).
is_eq() {
	local want=$1
	shift
	[ "$("$@" 2>&1)" == "$want" ]
}

# expect_eventually NAME TENTHS WANT CMD...: CMD comes to print WANT (a diff if multi-line).
expect_eventually() {
	local name=$1 n=$2 want=$3 got
	shift 3
	if wait_until "$n" is_eq "$want" "$@"; then
		pass "$name"
		return
	fi
	got=$("$@" 2>&1)
	if [[ $want == *$'\n'* || $got == *$'\n'* ]]; then
		got="diff want got:
$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -30)"
	else
		got="want: $want
got:  $got"
	fi
	fail "$name" "command: $*
$got
manager log tail:
$(tail -5 "$cluster/manager.log")"
}

# matches ERE CMD...: CMD's normalised output (stdout+stderr) matches ERE.
matches() {
	local pat=$1
	shift
	norm <<<"$("$@" 2>&1)" | grep -Eq -- "$pat"
}

# match_eventually NAME TENTHS ERE CMD...: CMD comes to print a match of
# ERE (a pending condition, say: the manager writes a workload's first one
# after a grace of about a second, controller/README.md).
match_eventually() {
	local name=$1 n=$2 pat=$3
	shift 3
	if wait_until "$n" matches "$pat" "$@"; then
		pass "$name"
		return
	fi
	fail "$name" "command: $*
pattern: $pat; output:
$("$@" 2>&1 | head -20)"
}

# jp OBJ JSONPATH [NS]: kubectl get OBJ -o jsonpath, stderr included (namespace default).
jp() {
	kubectl get "$1" -n "${3:-default}" -o jsonpath="$2" 2>&1
}

# cond_line OBJ TYPE [NS]: "status reason: message" of OBJ's condition TYPE.
cond_line() {
	jp "$1" "{range .status.conditions[?(@.type==\"$2\")]}{.status} {.reason}: {.message}{end}" "${3:-default}"
}

# active_of CQ: the ClusterQueue's Active condition as "status reason: message".
active_of() {
	cond_line "clusterqueue/$1" Active
}

# admission_of WL [NS]: "Admitted-status CQ flavors" of Workload WL (one kubectl call).
admission_of() {
	jp "workload/$1" '{.status.conditions[?(@.type=="Admitted")].status} {.status.admission.clusterQueue} {.status.admission.podSetAssignments[0].flavors}' "${2:-default}"
}

# snapshot FILE: everything cueue-invariants reads, as one List (stderr in FILE.err).
snapshot() {
	# Jobs are listed before and after the queue kinds: the checker
	# takes a Job for running only when both copies run (check (e)).
	# A Job in one list only was created or deleted in between, so
	# nothing says it ran while the queue kinds were listed: it is left
	# out.
	kubectl get jobs.batch -A -o json >"$1.j1" 2>"$1.err" &&
		kubectl get clusterqueues,cohorts,workloads,resourceflavors,localqueues,resourceclaimtemplates.resource.k8s.io \
			-A -o json >"$1.q" 2>>"$1.err" &&
		kubectl get jobs.batch -A -o json >"$1.j2" 2>>"$1.err" &&
		python3 -c 'import json,sys
j1,q,j2=(json.load(open(f))["items"] for f in sys.argv[2:])
uids=lambda l: {i["metadata"].get("uid") for i in l}
both=uids(j1)&uids(j2)
items=[i for i in j1 if i["metadata"].get("uid") in both]+q+[i for i in j2 if i["metadata"].get("uid") in both]
json.dump({"apiVersion":"v1","kind":"List","items":items},open(sys.argv[1],"w"))' \
			"$1" "$1.j1" "$1.q" "$1.j2"
}

# invariants LABEL [--status]: one check: $inv_bin passes on the current
# state (--status: the statuses agree too; quiet points only). The
# manager writes a queue's status at most once per second
# (controller/README.md), so a --status check is retried for up to 5 s.
invariants() {
	local label=$1 end
	shift
	end=$(($(now_ms) + 5000))
	while :; do
		if ! snapshot "$work/snap.json"; then
			fail "invariants: $label" "kubectl get failed: $(cat "$work/snap.json.err")"
			return
		fi
		run_cmd "$inv_bin" "$@" "$work/snap.json"
		[ "$rc" -eq 0 ] && break
		[[ " $* " == *" --status "* ]] && [ "$(now_ms)" -lt "$end" ] ||
			break
		sleep 0.3
	done
	if [ "$rc" -eq 0 ]; then
		pass "invariants: $label"
	else
		fail "invariants: $label" "$out"
	fi
}

# wl NAME QUEUE CPU [MEMORY] [COUNT]: a v1beta2 Workload YAML, one pod set (printf only).
wl() {
	printf '%s\n' --- 'apiVersion: kueue.x-k8s.io/v1beta2' 'kind: Workload' \
		metadata: "  name: $1" '  namespace: default' spec: \
		"  queueName: $2" '  podSets:' '  - name: main' \
		"    count: ${5:-1}" '    template:' '      spec:' \
		'        restartPolicy: Never' '        containers:' \
		'        - name: c' \
		'          image: registry.k8s.io/e2e-test-images/agnhost:2.53' \
		'          resources:' '            requests:' \
		"              cpu: \"$3\""
	[ -z "${4:-}" ] || printf '              memory: "%s"\n' "$4"
}

# FINISHED: the JSON patch that adds Finished=True (as a job integration does).
FINISHED='[{"op":"add","path":"/status/conditions/-","value":{"type":"Finished","status":"True","reason":"Succeeded","message":"Job finished successfully","lastTransitionTime":"2026-01-01T00:00:00Z"}}]'

# wl_name JOB [NS]: Kueue's Workload name job-<name>-<5 hex of sha1("Job\nbatch\n<name>\n<uid>")>, cached (wl_cache) by NS/name.
declare -A wl_cache=()
wl_name() {
	local key=${2:-default}/$1 uid h
	if [ -z "${wl_cache[$key]:-}" ]; then
		uid=$(jp "job/$1" '{.metadata.uid}' "${2:-default}")
		h=$(printf 'Job\nbatch\n%s\n%s' "$1" "$uid" | sha1sum | cut -c1-5)
		wl_cache[$key]=job-$1-$h
	fi
	echo "${wl_cache[$key]}"
}

# release JOB...: the devserver's job runner completes them now.
release() {
	kubectl annotate --overwrite job "$@" cueue.dev/runtime=1ms >/dev/null 2>&1
}

# metrics_url: the manager's metrics URL from $cluster/manager.log ("... server listening on URL").
metrics_url() {
	sed -n 's/.*metrics[a-z ]* server listening on \(https\{0,1\}:\/\/[^" ]*\).*/\1/p' \
		"$cluster/manager.log" | tail -1
}
