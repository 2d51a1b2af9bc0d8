#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-trace.py: check a trace that `accelctl trace` wrote.

  check-trace.py TRACE.json [--expect EXPECT.json] [--workload [--fences]]
  check-trace.py --from-ktap KTAP.log [--workload [--fences]]

First, that TRACE is valid Chrome trace-event JSON as Perfetto and
chrome://tracing load it (written from the format's definition, not from
accelctl's code): the object form with a "traceEvents" list; each event's
fields for its phase; complete ("X") slices nesting properly on each
thread; every flow ("s"/"f") with one start and one end, each inside a
slice of its thread; every process and thread with slices named by
metadata.

Then what it must show:
  --expect FILE  a JSON object: "jobs", a list of {"client", "job", "end",
                 "status"?, "slices"?: [child slice names]}; "flows", a list
                 of [[client, job], [client, job]] from producer to waiter,
                 exactly the trace's; "engines", the engine process names.
  --workload     tests/trace/trace-workload.c's jobs: five on engine
                 trace-test, the chain A -> B -> C as two flows, D failed
                 with ENOLINK, E completed with EIO; with --fences, the
                 kernel's dma_fence_signaled of the chain's points.
  --from-ktap    take the trace from a test VM's KTAP log, where the VM
                 printed it as "# TRACE <line>" lines.

Prints TAP; exit status 0 when every check held, 1 otherwise.
"""
import json
import sys

checks = []
# Timestamps are microseconds with three decimals (ns), as doubles.
EPS = 5e-4


def check(ok, what, detail=""):
    checks.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(checks)} {what}")
    if not ok and detail:
        for line in str(detail).splitlines():
            print(f"# {line}")
    return ok


PHASES = {"X", "B", "E", "i", "I", "M", "s", "t", "f", "C", "b", "e", "n"}
META = {"process_name", "thread_name", "process_sort_index",
        "thread_sort_index", "process_labels"}


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate(doc):
    """The format's rules. Returns (slices by thread, flows, names)."""
    errors = []
    if not check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
                 "the trace is an object with a traceEvents list"):
        return None
    if "displayTimeUnit" in doc:
        check(doc["displayTimeUnit"] in ("ms", "ns"),
              "displayTimeUnit is ms or ns", doc["displayTimeUnit"])
    slices, flows, pnames, tnames, used = {}, {}, {}, {}, set()
    for n, ev in enumerate(doc["traceEvents"]):
        where = f"event {n}: {json.dumps(ev)[:200]}"
        if not isinstance(ev, dict) or ev.get("ph") not in PHASES:
            errors.append(f"{where}: no known ph")
            continue
        ph = ev["ph"]
        if not isinstance(ev.get("pid"), int) or not isinstance(ev.get("tid"), int):
            errors.append(f"{where}: pid and tid must be integers")
            continue
        if not isinstance(ev.get("name"), str):
            errors.append(f"{where}: no name")
            continue
        if "args" in ev and not isinstance(ev["args"], dict):
            errors.append(f"{where}: args is not an object")
        key = (ev["pid"], ev["tid"])
        if ph == "M":
            if ev["name"] not in META or not isinstance(ev.get("args"), dict):
                errors.append(f"{where}: not a known metadata event")
            elif ev["name"] == "process_name":
                pnames[ev["pid"]] = ev["args"].get("name")
            elif ev["name"] == "thread_name":
                tnames[key] = ev["args"].get("name")
            continue
        if not is_num(ev.get("ts")) or ev["ts"] < 0:
            errors.append(f"{where}: ts must be a number >= 0")
            continue
        if ph in ("X", "i", "I", "s", "t", "f") and not isinstance(ev.get("cat", ""), str):
            errors.append(f"{where}: cat must be a string")
        if ph == "X":
            if not is_num(ev.get("dur")) or ev["dur"] < 0:
                errors.append(f"{where}: an X event needs dur >= 0")
                continue
            slices.setdefault(key, []).append(ev)
            used.add(key)
        elif ph in ("i", "I"):
            if ev.get("s", "t") not in ("g", "p", "t"):
                errors.append(f"{where}: instant scope must be g, p or t")
            used.add(key)
        elif ph in ("s", "t", "f"):
            if not isinstance(ev.get("id"), (int, str)):
                errors.append(f"{where}: a flow event needs an id")
                continue
            if ph == "f" and ev.get("bp", "e") != "e":
                errors.append(f"{where}: bp must be e")
            flows.setdefault((ev.get("cat"), ev["id"]), []).append(ev)
    check(not errors, "every event has the fields of its phase", "\n".join(errors[:20]))

    # Nesting: on each thread, a slice lies inside the one it starts in.
    bad = []
    for key, evs in slices.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            end = e["ts"] + e["dur"]
            while stack and stack[-1][1] <= e["ts"] + EPS:
                stack.pop()
            if stack and end > stack[-1][1] + EPS:
                bad.append(f"thread {key}: '{e['name']}' [{e['ts']}, {end}] overlaps "
                           f"'{stack[-1][2]}' ending at {stack[-1][1]}")
            stack.append((e["ts"], end, e["name"]))
    check(not bad, "complete slices nest properly on every thread", "\n".join(bad[:20]))

    # Flows: one start, one end, both bound to a slice of their thread.
    def enclosing(ev):
        for s in slices.get((ev["pid"], ev["tid"]), []):
            if s["ts"] - EPS <= ev["ts"] <= s["ts"] + s["dur"] + EPS:
                return s
        return None

    bad, pairs = [], []
    for (cat, fid), evs in flows.items():
        phs = sorted(e["ph"] for e in evs)
        if phs.count("s") != 1 or phs.count("f") != 1:
            bad.append(f"flow {cat}/{fid}: phases {phs}, not one s and one f")
            continue
        s = next(e for e in evs if e["ph"] == "s")
        f = next(e for e in evs if e["ph"] == "f")
        if s["ts"] > f["ts"] + EPS:
            bad.append(f"flow {cat}/{fid} ends before it starts")
        ss, fs = enclosing(s), enclosing(f)
        if not ss or not fs:
            bad.append(f"flow {cat}/{fid}: its {'start' if not ss else 'end'} is in no slice of its thread")
            continue
        pairs.append((s, f, ss, fs))
    check(not bad, "every flow has one start and one end, each inside a slice",
          "\n".join(bad[:20]))
    missing = [f"process {p}" for p in sorted({k[0] for k in used}) if p not in pnames]
    missing += [f"thread {k}" for k in sorted(used) if k not in tnames]
    check(not missing, "every process and thread with events is named", "\n".join(missing[:20]))
    return slices, pairs, pnames, tnames


def jobs_of(slices):
    """The job slices ("job N ...", with args.job), by (client, job)."""
    jobs = {}
    for key, evs in slices.items():
        for e in evs:
            a = e.get("args", {})
            if e["name"].startswith("job ") and "job" in a and "client" in a:
                jobs[(a["client"], a["job"], e["ts"])] = (key, e)
    return jobs


def children(slices, key, parent):
    end = parent["ts"] + parent["dur"]
    return [e["name"] for e in slices[key]
            if e is not parent and parent["ts"] <= e["ts"] and e["ts"] + e["dur"] <= end + EPS]


def flow_jobs(pairs, jobs):
    """Each flow as ((client, job) of the producer, (client, job) of the waiter)."""
    out = []
    for s, f, ss, fs in pairs:
        out.append(((ss["args"].get("client"), ss["args"].get("job")),
                    (fs["args"].get("client"), fs["args"].get("job"))))
    return out


def parent_job(slices, key, ev):
    """The job slice on @key enclosing @ev (a flow end binds to a child)."""
    best = None
    for s in slices.get(key, []):
        if s["name"].startswith("job ") and s["ts"] - EPS <= ev["ts"] <= s["ts"] + s["dur"] + EPS:
            best = s
    return best


def expect(slices, pairs, pnames, exp):
    jobs = jobs_of(slices)
    for j in exp.get("jobs", []):
        found = [(k, e) for (c, i, _), (k, e) in jobs.items()
                 if c == j["client"] and i == j["job"]]
        what = f"job {j['client']}/{j['job']}"
        if not check(len(found) == 1, f"{what} has one slice", f"found {len(found)}"):
            continue
        key, e = found[0]
        a = e["args"]
        check(a.get("end") == j["end"], f"{what} ended: {j['end']}", a.get("end"))
        if "status" in j:
            check(a.get("status") == j["status"], f"{what} has status {j['status']}", a.get("status"))
        for c in j.get("slices", []):
            check(c in children(slices, key, e), f"{what} has a '{c}' slice",
                  children(slices, key, e))
    if "flows" in exp:
        got = sorted(flow_ends(slices, pairs))
        want = sorted((tuple(p), tuple(w)) for p, w in exp["flows"])
        check(got == want, "the flows are exactly the expected dependencies",
              f"got {got}\nwant {want}")
    if "engines" in exp:
        names = sorted(n for n in pnames.values() if n.startswith("engine "))
        check(names == sorted(exp["engines"]), "the engine processes", names)


def flow_ends(slices, pairs):
    out = []
    for s, f, _, _ in pairs:
        ps = parent_job(slices, (s["pid"], s["tid"]), s)
        fs = parent_job(slices, (f["pid"], f["tid"]), f)
        out.append(((ps["args"]["client"], ps["args"]["job"]) if ps else None,
                    (fs["args"]["client"], fs["args"]["job"]) if fs else None))
    return out


def workload(slices, pairs, pnames, fences):
    """tests/trace/trace-workload.c's pattern, by the jobs' points."""
    jobs = [e for (c, i, _), (k, e) in jobs_of(slices).items()
            if e["args"].get("engine") == "trace-test"]
    check(len(jobs) == 5, "five jobs on engine trace-test", len(jobs))
    check("engine trace-test" in pnames.values(), "a process for engine trace-test",
          sorted(pnames.values()))
    by_end = sorted((e["args"]["end"], e["args"].get("status_name", "")) for e in jobs)
    check(by_end == sorted([("completed", "0")] * 3 +
                           [("completed with an error", "EIO"), ("failed", "ENOLINK")]),
          "three completed, one with EIO, one failed with ENOLINK", by_end)

    def sig(e):
        return e["args"]["signals"]

    def waits(e):
        return e["args"]["waits"]

    a = [e for e in jobs if not waits(e) and sig(e) and sig(e)[0].endswith(":1")
         and e["args"]["status"] == 0]
    if not check(len(a) == 1, "job A: no wait, signals <ctx>:1, completed"):
        return
    ctx = sig(a[0])[0].split(":")[0]
    b = [e for e in jobs if waits(e) == [f"{ctx}:1"] and sig(e) == [f"{ctx}:2"]]
    c = [e for e in jobs if waits(e) == [f"{ctx}:2"] and sig(e) == [f"{ctx}:3"]]
    check(len(b) == 1 and len(c) == 1,
          "jobs B and C wait on the points of A's context that A and B signal",
          [(waits(e), sig(e)) for e in jobs])
    if not b or not c:
        return
    ids = lambda e: (e["args"]["client"], e["args"]["job"])
    got = sorted(flow_ends(slices, pairs))
    want = sorted([(ids(a[0]), ids(b[0])), (ids(b[0]), ids(c[0]))])
    check(got == want, "two flows: A -> B and B -> C", f"got {got}\nwant {want}")
    for e in (a[0], b[0], c[0]):
        key = next(k for k, evs in slices.items() if e in evs)
        ch = children(slices, key, e)
        check("running" in ch, f"job {e['args']['job']} has a running slice", ch)
    eng = [e for evs in slices.values() for e in evs
           if e["name"].startswith(f"client {a[0]['args']['client']} queue ")]
    check(len(eng) == 4, "four jobs ran on the engine's lanes (all but D)", len(eng))
    if fences:
        names = {e["name"] for evs in slices.values() for e in evs}
        inst = {(ev["name"]) for ev in DOC["traceEvents"]
                if ev.get("ph") == "i" and ev.get("cat") == "dma_fence"}
        for v in (1, 2):
            check(any(n.startswith("signaled ") and n.endswith(f":{v}") and
                      n.split(" ")[1].split(":")[0].isdigit() and
                      int(n.split(" ")[1].split(":")[0]) & 0xffffffff == int(ctx) & 0xffffffff
                      for n in inst),
                  f"the kernel's dma_fence_signaled of point {ctx}:{v} is in the trace",
                  sorted(inst)[:20])


def from_ktap(path):
    lines = []
    with open(path, errors="replace") as f:
        for line in f:
            s = line.strip()
            if s.startswith("# TRACE "):
                lines.append(s[len("# TRACE "):])
    return "\n".join(lines)


DOC = None


def main(argv):
    global DOC
    args = argv[1:]
    exp = wl = fences = ktap = None
    paths = []
    while args:
        a = args.pop(0)
        if a == "--expect":
            exp = args.pop(0)
        elif a == "--workload":
            wl = True
        elif a == "--fences":
            fences = True
        elif a == "--from-ktap":
            ktap = args.pop(0)
        else:
            paths.append(a)
    if ktap:
        text = from_ktap(ktap)
        if not check(bool(text), f"the VM printed a trace in {ktap}"):
            return 1
    elif len(paths) == 1:
        with open(paths[0]) as f:
            text = f.read()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        DOC = json.loads(text)
    except ValueError as e:
        check(False, "the trace is JSON", e)
        return 1
    check(True, "the trace is JSON")
    v = validate(DOC)
    if v is None:
        return 1
    slices, pairs, pnames, _ = v
    if exp:
        with open(exp) as f:
            expect(slices, pairs, pnames, json.load(f))
    if wl:
        workload(slices, pairs, pnames, fences)
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
