#!/usr/bin/env python3
"""crdcompare: holds cueue's CRDs (manifests/crds/) to Kueue's published ones.

Usage: crdcompare.py OURS_DIR UPSTREAM_DIR [--list]

Both directories hold one CRD per YAML file; CRDs are matched by
metadata.name. For every CRD the names, scope, versions (served, storage,
deprecation), subresources and printer columns are compared, then the
openAPIV3Schema of every version path by path: type, format, enum,
default, required, nullable, the numeric and length limits, pattern, the
x-kubernetes-* markers and the x-kubernetes-validations rules (rule,
message, messageExpression, reason, fieldPath). Descriptions are not
compared: cueue's prose is its own.

A difference is either fixed or listed in ACCEPTED below with its reason.
The script prints one line per check ("ok ..." / "FAIL ...") and ends with
"N passed, N failed". An accepted difference that no longer occurs fails
too, so the list cannot go stale.
"""
import glob
import json
import os
import sys

import yaml

# (crd name, version, path, what) -> reason. path is the dotted schema path
# ("spec.podSets[].template"), what the compared key.
ACCEPTED = {
}

SCHEMA_KEYS = (
    "type", "format", "enum", "default", "required", "nullable",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties",
    "maxProperties", "pattern", "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type", "x-kubernetes-validations",
)


def load(d):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
        with open(f) as fh:
            for doc in yaml.safe_load_all(fh):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    out[doc["metadata"]["name"]] = doc
    return out


def norm_rules(v):
    if v is None:
        return None
    return sorted(json.dumps(r, sort_keys=True) for r in v)


def walk(s, path, out):
    """Flattens a schema into path -> {key: value}."""
    if not isinstance(s, dict):
        return
    node = {}
    for k in SCHEMA_KEYS:
        if k in s:
            v = s[k]
            if k == "x-kubernetes-validations":
                v = norm_rules(v)
            elif k in ("required", "enum"):
                v = sorted(json.dumps(x, sort_keys=True) for x in v)
            node[k] = v
    out[path or "."] = node
    for name, sub in (s.get("properties") or {}).items():
        walk(sub, (path + "." if path else "") + name, out)
    if isinstance(s.get("items"), dict):
        walk(s["items"], path + "[]", out)
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        walk(ap, path + "{}", out)


def diffs(ours, theirs):
    """Yields (version, path, what, ours, theirs) for one CRD."""
    for k in ("group", "scope"):
        if ours["spec"].get(k) != theirs["spec"].get(k):
            yield ("-", "spec", k, ours["spec"].get(k), theirs["spec"].get(k))
    on, tn = ours["spec"]["names"], theirs["spec"]["names"]
    for k in sorted(set(on) | set(tn)):
        if on.get(k) != tn.get(k):
            yield ("-", "names", k, on.get(k), tn.get(k))
    ov = {v["name"]: v for v in ours["spec"]["versions"]}
    tv = {v["name"]: v for v in theirs["spec"]["versions"]}
    for name in sorted(set(ov) | set(tv)):
        if name not in ov or name not in tv:
            yield (name, "-", "version", name in ov, name in tv)
            continue
        a, b = ov[name], tv[name]
        for k in ("served", "storage", "deprecated", "deprecationWarning",
                  "subresources"):
            if a.get(k) != b.get(k):
                yield (name, "-", k, a.get(k), b.get(k))
        ac = [{k: c.get(k) for k in ("name", "type", "jsonPath", "priority",
                                     "format")}
              for c in a.get("additionalPrinterColumns", [])]
        bc = [{k: c.get(k) for k in ("name", "type", "jsonPath", "priority",
                                     "format")}
              for c in b.get("additionalPrinterColumns", [])]
        if ac != bc:
            yield (name, "-", "additionalPrinterColumns", ac, bc)
        sa, sb = {}, {}
        walk(a["schema"]["openAPIV3Schema"], "", sa)
        walk(b["schema"]["openAPIV3Schema"], "", sb)
        for p in sorted(set(sa) | set(sb)):
            if p not in sa or p not in sb:
                yield (name, p, "presence", p in sa, p in sb)
                continue
            for k in SCHEMA_KEYS:
                if sa[p].get(k) != sb[p].get(k):
                    yield (name, p, k, sa[p].get(k), sb[p].get(k))


def collapse(found):
    """A field missing on one side reports its subtree once."""
    missing = {}
    out = []
    for crd, ver, path, what, a, b in found:
        if what == "presence":
            parent = next((m for m in missing.get((crd, ver), ())
                           if path.startswith(m + ".") or
                           path.startswith(m + "[") or
                           path.startswith(m + "{")), None)
            if parent:
                continue
            missing.setdefault((crd, ver), []).append(path)
        out.append((crd, ver, path, what, a, b))
    return out


def short(v):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= 160 else s[:157] + "..."


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2])
        return 2
    ours, theirs = load(sys.argv[1]), load(sys.argv[2])
    passed = failed = 0
    found = []
    for name in sorted(set(ours) | set(theirs)):
        if name not in ours or name not in theirs:
            found.append((name, "-", "-", "crd", name in ours,
                          name in theirs))
            continue
        found.extend((name,) + d for d in diffs(ours[name], theirs[name]))
    found = collapse(found)
    seen = set()
    for crd, ver, path, what, a, b in found:
        key = (crd, ver, path, what)
        if "--list" in sys.argv:
            print("%s %s %s %s: cueue %s, Kueue %s" %
                  (crd, ver, path, what, short(a), short(b)))
            continue
        if key in ACCEPTED:
            seen.add(key)
            print("ok   accepted: %s %s %s %s (%s)" %
                  (crd, ver, path, what, ACCEPTED[key]))
            passed += 1
        else:
            print("FAIL %s %s %s %s: cueue %s, Kueue %s" %
                  (crd, ver, path, what, short(a), short(b)))
            failed += 1
    if "--list" in sys.argv:
        print("%d differences" % len(found))
        return 0
    for key in sorted(set(ACCEPTED) - seen):
        print("FAIL accepted difference no longer seen: %s %s %s %s" % key)
        failed += 1
    for name in sorted(set(ours) & set(theirs)):
        if not any(f[0] == name for f in found):
            print("ok   %s: same names, versions, columns and schemas" % name)
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
