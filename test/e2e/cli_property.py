#!/usr/bin/env python3
"""cli_property: kubectl cueue simulate's verdict equals the manager's
decision (issue 20's property test), over random states of the cli.sh
cluster (test/e2e/manifests/cli/setup.yaml: cli-a and cli-b, 2 cpu each,
one cohort; cli-a preempts lower priorities in its queue and reclaims
what cli-b borrowed).

  cli_property.py JOB_TEMPLATE WORKDIR SEED ROUNDS

Each round, from a quiet state (every workload decided, no eviction in
flight): maybe release a running Job (the state moves), then build a
random Job (team-a or team-b, priority cli-low or cli-high, 1-3 cpu, now
and then 5: never fits), ask `kubectl cueue simulate -f JOB -o json`,
create the Job for real and check the manager's decision:
  Admit     the Workload is admitted in the same ClusterQueue on the same
            flavors, and nobody is evicted for it;
  Preempt   exactly the named workloads are preempted (their Preempted
            condition names the new Workload's UID), then it is admitted;
  Wait      it is not admitted, and its QuotaReserved=False message is
            simulate's message;
  NeverFits as Wait, with the maximum capacity message.
Prints "PASS <round>: ..." or "FAIL <round>: ..." per round (cli.sh turns
them into checks). kubectl is the real one; nothing else is used.
"""
import json
import random
import subprocess
import sys
import time

TMPL, WORK, SEED, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(SEED)


def kubectl(*args, check=True):
    p = subprocess.run(["kubectl", *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("kubectl %s: %s" % (" ".join(args), p.stderr.strip()))
    return p


def workloads():
    return json.loads(kubectl("get", "workloads", "-A", "-o", "json").stdout)["items"]


def cond(w, t):
    for c in w.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c
    return None


def is_true(w, t):
    c = cond(w, t)
    return c is not None and c["status"] == "True"


def quiet(ws):
    """Every live workload decided, no eviction in flight."""
    for w in ws:
        if is_true(w, "Finished"):
            continue
        qr = cond(w, "QuotaReserved")
        if qr is None:
            return False
        if qr["status"] == "True" and is_true(w, "Evicted"):
            return False
        if qr["status"] == "True" and not is_true(w, "Admitted"):
            return False
    return True


def wait_quiet(timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        ws = workloads()
        if quiet(ws):
            # one more look a moment later: the pending message grace
            time.sleep(1.2)
            ws2 = workloads()
            if quiet(ws2):
                return ws2
        time.sleep(0.3)
    raise RuntimeError("the cluster did not come to rest in %d s" % timeout)


def key(w):
    return "%s/%s" % (w["metadata"]["namespace"], w["metadata"]["name"])


def owner_job(w):
    for o in w["metadata"].get("ownerReferences", []):
        if o.get("kind") == "Job":
            return o["name"]
    return None


def find_by_job(ws, ns, job):
    for w in ws:
        if w["metadata"]["namespace"] == ns and owner_job(w) == job:
            return w
    return None


def flavors_of(w):
    out = {}
    for psa in w.get("status", {}).get("admission", {}).get("podSetAssignments", []):
        out[psa["name"]] = dict(psa.get("flavors", {}))
    return out


def main():
    results = []
    running = []  # (ns, job) created and possibly running
    n = 0
    for r in range(1, ROUNDS + 1):
        label = "round %d" % r
        try:
            ws = wait_quiet()
            admitted = [w for w in ws if is_true(w, "Admitted") and not is_true(w, "Finished")]
            if admitted and rng.random() < 0.35:
                w = rng.choice(admitted)
                ns, job = w["metadata"]["namespace"], owner_job(w)
                kubectl("annotate", "--overwrite", "-n", ns, "job", job,
                        "cueue.dev/runtime=1ms")
                end = time.time() + 30
                while time.time() < end:
                    x = find_by_job(workloads(), ns, job)
                    if x is None or is_true(x, "Finished"):
                        break
                    time.sleep(0.3)
                ws = wait_quiet()
            n += 1
            ns = rng.choice(["team-a", "team-b"])
            prio = rng.choice(["cli-low", "cli-high"])
            cpu = rng.choice([1, 1, 2, 2, 3, 5]) if rng.random() < 0.9 else 5
            job = "p%02d" % n
            text = (open(TMPL).read().replace("NAME", job).replace("NS", ns)
                    .replace("QUEUE", "main").replace("PRIO", prio)
                    .replace("CPU", str(cpu)))
            path = "%s/%s.yaml" % (WORK, job)
            open(path, "w").write(text)
            # queue order ties on whole seconds: keep creations apart
            time.sleep(1.1)
            sim = subprocess.run(["kubectl", "cueue", "simulate", "-f", path, "-o", "json"],
                                 capture_output=True, text=True)
            v = json.loads(sim.stdout)
            verdict = v["verdict"]
            want_rc = {"Admit": 0, "Preempt": 1, "Wait": 1, "NeverFits": 2}[verdict]
            desc = "%s %s %s cpu=%d: %s" % (job, ns, prio, cpu, verdict)
            if sim.returncode != want_rc:
                raise AssertionError("exit %d for %s" % (sim.returncode, verdict))
            before = {key(w): w for w in ws}
            kubectl("create", "-f", path)
            end = time.time() + 40
            ok, why = False, "no decision in 40 s"
            while time.time() < end and not ok:
                time.sleep(0.4)
                cur = workloads()
                me = find_by_job(cur, ns, job)
                if me is None:
                    continue
                uid = me["metadata"]["uid"]
                preempted = sorted(
                    key(w) for w in cur
                    if (cond(w, "Preempted") or {}).get("status") == "True"
                    and uid in (cond(w, "Preempted") or {}).get("message", ""))
                qr = cond(me, "QuotaReserved")
                if verdict == "Admit":
                    if qr and qr["status"] == "True":
                        got = (me["status"]["admission"]["clusterQueue"], flavors_of(me))
                        want = (v["clusterQueue"], v["flavors"])
                        ok = got == want and not preempted
                        why = "admitted as %s, simulate said %s; preempted %s" % (got, want, preempted)
                        if not ok:
                            break
                    elif qr and qr["status"] == "False":
                        why = "pending: %s" % qr["message"]
                elif verdict == "Preempt":
                    want = sorted("%s/%s" % (x["namespace"], x["name"]) for x in v["preempts"])
                    if qr and qr["status"] == "True":
                        ok = preempted == want
                        why = "preempted %s, simulate said %s" % (preempted, want)
                        if not ok:
                            break
                    else:
                        why = "not admitted yet; preempted %s of %s" % (preempted, want)
                else:
                    if qr and qr["status"] == "True":
                        why = "admitted, simulate said %s" % verdict
                        break
                    if qr and qr["status"] == "False":
                        msg = qr.get("message", "")
                        if v.get("message", "").startswith("couldn't assign"):
                            ok = msg == v["message"] and not preempted
                            why = "message %r, simulate said %r" % (msg, v["message"])
                        else:
                            ok = not preempted
                            why = "preempted %s" % preempted
            results.append((ok, label, desc if ok else desc + ": " + why))
        except Exception as e:  # a broken round is a failed check
            results.append((False, label, "%s: %s" % (type(e).__name__, e)))
        ok, label, text = results[-1]
        print("%s %s: %s" % ("PASS" if ok else "FAIL", label, text), flush=True)
    return 0 if all(ok for ok, _, _ in results) else 1


sys.exit(main())
