"""watch.py: python3-kubernetes (Debian, 22.6) against cueue-devserver.

Run by test/e2e/python-watch.sh:  python3 watch.py KUBECONFIG
The k8s-api.md §17.6 experiment, as checks:
  1. list workloads (CustomObjectsApi), then
     watch.Watch().stream(list_namespaced_custom_object, ...,
       resource_version=<list RV>, timeout_seconds=4,
       allow_watch_bookmarks=True)
     while another thread patches a's /status, deletes b and creates c:
     MODIFIED a, DELETED b, ADDED c (no synthetic events: an RV was
     given), and BOOKMARK events; the server ends the stream at the
     timeout;
  2. a typed BatchV1Api.list_namespaced_job watch without an RV gets the
     synthetic ADDED of the existing Job, as a V1Job;
  3. errors arrive as ApiException with the Status in .body.
Prints one line per check and "N passed, M failed" last; exit 1 on failure.
"""

import json
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION, NS, PLURAL = "kueue.x-k8s.io", "v1beta2", "default", "workloads"
# The devserver has no flag for the bookmark period: api_watch.c sends a
# BOOKMARK every 10 s (api_opts.bookmark_ms) and one 2 s before the
# watch's deadline (as the real watch cache does), so a 4 s watch gets
# exactly one, at about 2 s, after the writer thread's changes (0.5 s).
TIMEOUT = 4

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name)
        for line in str(detail).splitlines()[:30]:
            print("     | " + line)
    sys.stdout.flush()


def workload(name):
    return {
        "apiVersion": GROUP + "/" + VERSION,
        "kind": "Workload",
        "metadata": {"name": name},
        "spec": {
            "queueName": "user-queue",
            "podSets": [{
                "name": "main",
                "count": 1,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }},
            }],
        },
    }


ADMITTED = {"status": {
    "admission": {"clusterQueue": "cluster-queue"},
    "conditions": [{
        "type": "Admitted", "status": "True", "reason": "Admitted",
        "message": "ok", "lastTransitionTime": "2025-01-01T00:00:00Z",
    }],
}}

JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "sample-job",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {
        "parallelism": 3, "completions": 3, "suspend": True,
        "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "dummy-job",
                "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                "args": ["entrypoint-tester", "hello", "world"],
                "resources": {"requests": {"cpu": "1", "memory": "200Mi"}},
            }],
        }},
    },
}


def custom_watch(co):
    for n in ("a", "b"):
        co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL,
                                           workload(n))
    lst = co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    rv = lst["metadata"]["resourceVersion"]
    names = [i["metadata"]["name"] for i in lst["items"]]
    check("list: kind WorkloadList, items a b, a resourceVersion",
          lst.get("kind") == "WorkloadList" and names == ["a", "b"]
          and rv.isdigit(), json.dumps(lst)[:400])

    writer_errors = []

    def writer():
        try:
            time.sleep(0.5)
            co.patch_namespaced_custom_object_status(
                GROUP, VERSION, NS, PLURAL, "a", ADMITTED)
            co.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "b")
            co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL,
                                               workload("c"))
        except Exception as e:  # reported below
            writer_errors.append(repr(e))

    t = threading.Thread(target=writer)
    events = []
    t0 = time.monotonic()
    t.start()
    try:
        w = watch.Watch()
        for ev in w.stream(co.list_namespaced_custom_object, GROUP, VERSION,
                           NS, PLURAL, resource_version=rv,
                           timeout_seconds=TIMEOUT,
                           allow_watch_bookmarks=True):
            obj = ev["object"]
            md = obj.get("metadata", {})
            events.append((ev["type"], md.get("name"),
                           md.get("resourceVersion"), obj))
    except Exception as e:
        check("watch stream", False, repr(e))
    elapsed = time.monotonic() - t0
    t.join()
    check("writer thread: patch /status, delete, create",
          not writer_errors, "\n".join(writer_errors))

    summary = "\n".join("%s %s %s" % e[:3] for e in events)
    print("     events: " + summary.replace("\n", " | "))
    changes = [(e[0], e[1]) for e in events if e[0] != "BOOKMARK"]
    check("watch from the list RV: MODIFIED a, DELETED b, ADDED c, nothing "
          "else (no synthetic ADDED)",
          changes == [("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "c")],
          summary)
    mod = [e for e in events if e[0] == "MODIFIED"]
    cond = mod[0][3].get("status", {}).get("conditions", []) if mod else []
    check("MODIFIED carries the status written through /status",
          bool(mod) and cond and cond[0].get("type") == "Admitted"
          and mod[0][3]["status"].get("admission", {}).get("clusterQueue")
          == "cluster-queue", json.dumps(mod[0][3] if mod else None)[:400])
    rvs = [int(e[2]) for e in events if e[0] != "BOOKMARK"]
    check("event resourceVersions increase past the list RV",
          rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
          and all(r > int(rv) for r in rvs), summary)
    bms = [e for e in events if e[0] == "BOOKMARK"]
    check("BOOKMARK events received (allowWatchBookmarks=True)",
          len(bms) >= 1, summary)
    check("BOOKMARK object: kind Workload, apiVersion, only a "
          "resourceVersion in metadata",
          bool(bms) and all(
              b[3].get("kind") == "Workload"
              and b[3].get("apiVersion") == GROUP + "/" + VERSION
              and list(b[3].get("metadata", {})) == ["resourceVersion"]
              for b in bms), json.dumps([b[3] for b in bms])[:400])
    last = max(rvs) if rvs else None
    check("the last BOOKMARK carries the newest resourceVersion",
          bool(bms) and last is not None and int(bms[-1][2]) == last,
          summary)
    check("the server ends the stream at timeoutSeconds=%d" % TIMEOUT,
          TIMEOUT - 0.5 <= elapsed <= TIMEOUT + 3,
          "stream ended after %.1f s" % elapsed)


def typed_watch(batch):
    batch.create_namespaced_job("default", JOB)
    # the job runner (the job controller's stand-in) marks it Suspended;
    # wait for that so the watch below sees no MODIFIED
    for _ in range(50):
        st = batch.read_namespaced_job_status("sample-job", "default").status
        if any(c.type == "Suspended" for c in (st.conditions or [])):
            break
        time.sleep(0.1)
    events = []
    t0 = time.monotonic()
    try:
        w = watch.Watch()
        for ev in w.stream(batch.list_namespaced_job, "default",
                           timeout_seconds=2):
            events.append(ev)
    except Exception as e:
        check("typed watch stream", False, repr(e))
    elapsed = time.monotonic() - t0
    got = [(e["type"], type(e["object"]).__name__,
            e["object"].metadata.name) for e in events]
    check("BatchV1Api watch without an RV: the synthetic ADDED sample-job "
          "(V1Job)", got[:1] == [("ADDED", "V1Job", "sample-job")], got)
    check("typed watch: nothing else, ended by the server",
          len(got) == 1 and elapsed <= 5, "%s after %.1f s" % (got, elapsed))
    job = events[0]["object"] if events else None
    check("V1Job decoded: parallelism 3, defaults, generated selector",
          job is not None and job.spec.parallelism == 3
          and job.spec.backoff_limit == 6
          and job.spec.completion_mode == "NonIndexed"
          and "batch.kubernetes.io/controller-uid"
          in (job.spec.selector.match_labels or {}),
          job.spec if job else None)


def errors(co):
    try:
        co.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "nosuch")
        check("get missing: ApiException 404", False, "no exception")
    except ApiException as e:
        body = json.loads(e.body)
        check("get missing: ApiException 404 Not Found with the Status body",
              e.status == 404 and e.reason == "Not Found"
              and body.get("kind") == "Status"
              and body.get("reason") == "NotFound"
              and body.get("message")
              == 'workloads.kueue.x-k8s.io "nosuch" not found',
              "%s %s %s" % (e.status, e.reason, e.body))
    try:
        co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL,
                                           workload("a"))
        check("create existing: ApiException 409", False, "no exception")
    except ApiException as e:
        body = json.loads(e.body)
        check("create existing: ApiException 409 AlreadyExists",
              e.status == 409 and body.get("reason") == "AlreadyExists"
              and body.get("message")
              == 'workloads.kueue.x-k8s.io "a" already exists', e.body)


def main():
    config.load_kube_config(config_file=sys.argv[1])
    api = client.ApiClient()
    co = client.CustomObjectsApi(api)
    batch = client.BatchV1Api(api)
    try:
        custom_watch(co)
        typed_watch(batch)
        errors(co)
    except Exception as e:
        check("unexpected exception", False, repr(e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
