"""kapi.py: the chaos suite's small Kubernetes client (standard library
plus PyYAML for the kubeconfig), shared by record.py, stream.py and
snap.py.

It owns one thing: talking to an API server that fails on purpose (the
devserver's --fault-* flags, restarts). Every call of `call` retries what
a client-go client would retry, and more: transport errors (the server
is down or restarting), 429 (honouring Retry-After), 5xx, and a 500 or
timeout of an admission webhook, until a deadline; 4xx answers other than
429 are returned to the caller, who decides (409 AlreadyExists after a
create whose answer was lost is success for the stream).

The kubeconfig is read again after a transport error: a devserver that
restarts on the same data dir keeps its port, token and CA, but reading
them again costs nothing and survives a port change.

Never used by the cluster under test; only by the harness.
"""
import base64
import http.client
import json
import os
import ssl
import tempfile
import time
import urllib.parse

import yaml


class Cluster:
    """An API server from a kubeconfig file (its current context)."""

    def __init__(self, kubeconfig):
        self.path = kubeconfig
        self.load()

    def load(self):
        with open(self.path) as f:
            kc = yaml.safe_load(f)
        ctx = next(c['context'] for c in kc['contexts']
                   if c['name'] == kc['current-context'])
        cl = next(c['cluster'] for c in kc['clusters']
                  if c['name'] == ctx['cluster'])
        us = next(u['user'] for u in kc['users'] if u['name'] == ctx['user'])
        u = urllib.parse.urlsplit(cl['server'])
        self.scheme, self.host, self.port = u.scheme, u.hostname, u.port
        self.token = us.get('token')
        self.ctx = None
        if self.scheme == 'https':
            ca = cl.get('certificate-authority-data')
            self.ctx = ssl.create_default_context()
            if ca:
                self.ctx.load_verify_locations(
                    cadata=base64.b64decode(ca).decode())
            self.ctx.check_hostname = False

    def conn(self, timeout):
        if self.scheme == 'https':
            return http.client.HTTPSConnection(self.host, self.port,
                                               timeout=timeout,
                                               context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=timeout)

    def headers(self, body, ctype):
        h = {'Accept': 'application/json'}
        if self.token:
            h['Authorization'] = 'Bearer ' + self.token
        if body is not None:
            h['Content-Type'] = ctype
        return h

    def once(self, method, path, body=None, timeout=30,
             ctype='application/json'):
        """One request: (status, decoded body or None, headers). Raises
        OSError / http.client errors on transport failures."""
        c = self.conn(timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            c.request(method, path, body=data,
                      headers=self.headers(data, ctype))
            r = c.getresponse()
            raw = r.read()
            try:
                obj = json.loads(raw) if raw else None
            except ValueError:
                obj = None
            return r.status, obj, dict(r.getheaders())
        finally:
            c.close()

    def call(self, method, path, body=None, deadline_s=120, timeout=30,
             ctype='application/json', stats=None):
        """A request retried until it gets an answer that is not a
        transient failure, or deadline_s passed. Returns (status, body);
        status 0 when the server never answered. stats, a dict, counts
        the retries by cause."""
        end = time.time() + deadline_s
        delay = 0.2
        while True:
            cause = None
            try:
                st, obj, hdrs = self.once(method, path, body, timeout, ctype)
                if st == 429:
                    cause = '429'
                    try:
                        delay = max(delay, float(hdrs.get('Retry-After', 1)))
                    except ValueError:
                        pass
                elif st >= 500:
                    cause = str(st)
                elif st == 400 and is_webhook_failure(obj):
                    cause = 'webhook'
                else:
                    return st, obj
            except (OSError, http.client.HTTPException):
                cause = 'transport'
                try:
                    self.load()
                except (OSError, ValueError, KeyError, StopIteration):
                    pass
            if stats is not None:
                stats[cause] = stats.get(cause, 0) + 1
            if time.time() + delay > end:
                return (st if cause != 'transport' else 0), None
            time.sleep(delay)
            delay = min(delay * 1.5, 2.0)

    def watch(self, path, rv, timeout=300):
        """A watch from resourceVersion rv: yields decoded events until
        the stream ends. Raises on transport errors; a non-200 answer is
        yielded as {'type': 'ERROR', 'object': Status}."""
        sep = '&' if '?' in path else '?'
        q = '%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s' \
            '&timeoutSeconds=%d' % (path, sep, rv, timeout)
        c = self.conn(timeout + 30)
        try:
            c.request('GET', q, headers=self.headers(None, None))
            r = c.getresponse()
            if r.status != 200:
                raw = r.read()
                try:
                    obj = json.loads(raw)
                except ValueError:
                    obj = {'code': r.status}
                yield {'type': 'ERROR', 'object': obj}
                return
            while True:
                line = r.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    return  # a cut stream: its last line is partial
        finally:
            c.close()


def is_webhook_failure(obj):
    """A denial that is an admission webhook's failure (a timeout, a
    refused connection: failurePolicy Fail), not a verdict."""
    msg = (obj or {}).get('message', '') if isinstance(obj, dict) else ''
    return 'failed calling webhook' in msg


def write_atomic(path, text):
    """Writes text to path through a temporary file and a rename."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix='.tmp-')
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.replace(tmp, path)
