#!/usr/bin/env python3
"""record.py: the chaos suite's recorder: list + watch of several
resources, as an informer does, every event and every re-list written to
one file per resource, for check.py to replay.

  record.py KUBECONFIG OUTDIR NAME=PATH...

NAME=PATH: e.g. workloads=/apis/kueue.x-k8s.io/v1beta2/workloads; the
events of NAME go to OUTDIR/NAME.rec, one JSON object a line:

  {"t": T, "type": "ADDED"|"MODIFIED"|"DELETED", "object": {...}}
  {"t": T, "type": "LIST", "rv": "L", "prev": "P"|null, "items": [...]}
  {"t": T, "type": "NOTE", "what": "cut"|"end"|"gone"|"error"|"died",
   "msg": "..."}

T is the time the line was received (time.time(), the clock the driver
writes its actions with). A LIST replaces every object of the resource:
the stream was complete up to resourceVersion P (its last event before
the list), unknown between P and L, complete again from L. The watch is
resumed from the last resourceVersion after a cut stream or a transport
error (no gap: a watch from RV r delivers every event after r), and a
410 Expired (the devserver restarted, or --fault-gone) makes a new list,
the only way a gap appears. metadata.managedFields are dropped.

The Lease stream (NAME "leases") also keeps OUTDIR/leader up to date:
"<holderIdentity> <rv>" of the last Lease event, for the driver's "kill
the leader".

SIGTERM: each resource is listed once more (written as a LIST: the final
state) and the recorder exits 0. Counts of cuts, 410s and errors are in
the NOTE lines.
"""
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kapi  # noqa: E402

import json  # noqa: E402


WATCH_S = 300  # a watch's timeoutSeconds


def strip(obj):
    if isinstance(obj, dict):
        (obj.get('metadata') or {}).pop('managedFields', None)
    return obj


class Stream:
    def __init__(self, cl, outdir, name, path):
        self.cl, self.name, self.path = cl, name, path
        self.f = open(os.path.join(outdir, name + '.rec'), 'a')
        self.lock = threading.Lock()
        self.closed = False
        self.rv = None  # last resourceVersion delivered (str)
        self.leader = os.path.join(outdir, 'leader') \
            if name == 'leases' else None

    def put(self, rec, force=False):
        rec['t'] = time.time()
        line = json.dumps(rec, separators=(',', ':'))
        with self.lock:
            if self.closed and not force:
                return False
            self.f.write(line + '\n')
            self.f.flush()
        return True

    def note(self, what, msg):
        self.put({'type': 'NOTE', 'what': what, 'msg': msg})

    def list(self, final=False):
        """Lists until it works; writes the LIST line. False when closed
        meanwhile."""
        while True:
            # the final list: the driver waits for it, the server may be
            # gone (a cleanup after a failure): a few seconds at most
            st, body = self.cl.call('GET', self.path,
                                    deadline_s=5 if final else 30)
            if st == 200 and body is not None:
                break
            if self.closed:
                return False
            self.note('error', 'list: status %s' % st)
            time.sleep(0.5)
        items = [strip(i) for i in body.get('items') or []]
        rv = (body.get('metadata') or {}).get('resourceVersion')
        rec = {'type': 'LIST', 'rv': rv, 'prev': self.rv, 'items': items}
        if final:
            # the main thread; the stream's thread writes no more
            return self.put(rec, force=True)
        if not self.put(rec):
            return False
        self.rv = rv
        if self.leader:
            self.write_leader(items)
        return True

    def write_leader(self, items):
        for o in items:
            h = (o.get('spec') or {}).get('holderIdentity') or ''
            rv = (o.get('metadata') or {}).get('resourceVersion', '0')
            kapi.write_atomic(self.leader, '%s %s\n' % (h, rv))

    def run(self):
        need_list = True
        while not self.closed:
            if need_list:
                if not self.list():
                    return
                need_list = False
            t0 = time.time()
            try:
                for ev in self.cl.watch(self.path, self.rv, WATCH_S):
                    typ = ev.get('type')
                    obj = ev.get('object') or {}
                    if typ == 'ERROR':
                        code = obj.get('code')
                        if code == 410:
                            self.note('gone', obj.get('message', ''))
                            need_list = True
                        else:
                            self.note('error', 'watch: %s' % obj)
                            time.sleep(0.5)
                        break
                    rv = (obj.get('metadata') or {}).get('resourceVersion')
                    if typ == 'BOOKMARK':
                        if rv:
                            self.rv = rv
                        continue
                    if typ not in ('ADDED', 'MODIFIED', 'DELETED'):
                        continue
                    if not self.put({'type': typ, 'object': strip(obj)}):
                        return
                    if rv:
                        self.rv = rv
                    if self.leader:
                        self.write_leader([obj])
                else:
                    # the server ends a watch at timeoutSeconds: not a
                    # fault; sooner, the stream was cut
                    self.note('end' if time.time() - t0 >= WATCH_S - 1
                              else 'cut', 'stream ended at rv %s' % self.rv)
            except Exception as e:  # OSError, ssl, http.client's own
                self.note('error', 'watch: %r' % e)
                time.sleep(0.3)
                self.reload()

    def reload(self):
        """The kubeconfig again: a restarted devserver rewrites it."""
        try:
            self.cl.load()
        except Exception:  # being rewritten: the next error tries again
            pass


def guarded(s):
    """A stream's thread: a bug in it is written down (check.py fails
    the run on a "died" note) rather than silently ending the stream."""
    try:
        s.run()
    except Exception as e:
        s.note('died', repr(e))


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cl = kapi.Cluster(argv[0])
    outdir = argv[1]
    streams = []
    for a in argv[2:]:
        name, path = a.split('=', 1)
        streams.append(Stream(kapi.Cluster(argv[0]), outdir, name, path))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    for s in streams:
        threading.Thread(target=guarded, args=(s,), daemon=True).start()
    while not stop.wait(0.5):
        pass
    for s in streams:
        with s.lock:
            s.closed = True
    for s in streams:
        s.cl = cl
        s.list(final=True)
        s.f.close()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
