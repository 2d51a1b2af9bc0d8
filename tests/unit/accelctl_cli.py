#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The command-line contract of accelctl and hello-scheduler.

usage: accelctl_cli.py ACCELCTL HELLO_SCHEDULER FAKE_ACCEL_INFO_SO

Checks exit codes (0 success, 1 failure, 2 usage error), that `info -j` is
valid JSON holding everything `info` prints as text, and that the example
runs. `devices -j` is JSON, holds what the text prints, and lists the cpu
device as the process's affinity and sysconf() see it. `top` runs on fake sysfs and /proc trees (ACCELCTL_SYSFS,
ACCELCTL_PROC) whose numbers are known, so its text and JSON are checked
exactly, and against each other. Prints TAP; exits 1 if any check failed.
"""
import copy
import ctypes
import json
import os
import pty
import re
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

ACCELCTL, HELLO, FAKE_SO = sys.argv[1], sys.argv[2], sys.argv[3]
results = []


def run(*args, env=None, user=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("ACCEL_", "ACCELCTL_"))}
    e.update(env or {})
    ids = {} if user is None else {"user": user, "group": user,
                                   "extra_groups": []}
    return subprocess.run(list(args), env=e, capture_output=True, text=True,
                          timeout=30, **ids)


def skip(name, why):
    results.append(True)
    print(f"ok {len(results)} - {name} # SKIP {why}")


def check(name, cond, detail=""):
    results.append(cond)
    print(f"{'ok' if cond else 'not ok'} {len(results)} - {name}")
    if not cond:
        print("# " + detail.replace("\n", "\n# "))


def expect_exit(name, proc, code, needle=None, stream="stderr"):
    text = getattr(proc, stream)
    ok = proc.returncode == code and (needle is None or needle in text)
    check(name, ok, f"exit {proc.returncode} (expected {code}), "
          f"{stream} should contain {needle!r}:\n{text}")


def parse_text(out):
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def compare_text_json(name, text_out, json_out):
    """Every text field must appear, with the same value, in the JSON."""
    t, j = parse_text(text_out), json.loads(json_out)
    sched, module = j["scheduler"], j["scheduler"]["module"]
    pairs = [
        ("libaccel", j["libaccel"]["version"]),
        ("scheduler", sched["kind"]),
        ("reason", sched["reason"]),
        ("io_uring", "yes" if sched["io_uring"] else "no"),
    ]
    if module is None:
        # JSON's null module is the text's "unavailable" of each of its
        # fields.
        pairs += [("module", "none"),
                  ("kernel release", "unavailable (no module)"),
                  ("client id", "unavailable (no module)")]
    else:
        f = module["features"]
        pairs += [
            ("module", module["version"]),
            ("abi", f"{module['abi']['major']}.{module['abi']['minor']}"),
            ("kernel release", module["kernel_release"]),
            ("client id", str(module["client_id"])),
            ("features", " ".join([f["mask"]] + f["names"])),
        ]
    missing = [(k, v, t.get(k)) for k, v in pairs if t.get(k) != v]
    extra = sorted(set(t) - {k for k, _ in pairs})
    check(name, not missing and not extra,
          f"text vs JSON mismatches (field, json, text): {missing}; "
          f"text fields the JSON lacks: {extra}")
    return j


expect_exit("--help exits 0", run(ACCELCTL, "--help"), 0, "Usage:", "stdout")
expect_exit("info --help exits 0", run(ACCELCTL, "info", "--help"), 0,
            "--json", "stdout")
expect_exit("--version exits 0", run(ACCELCTL, "--version"), 0, "libaccel",
            "stdout")
expect_exit("no command exits 2", run(ACCELCTL), 2, "missing command")
expect_exit("unknown command exits 2", run(ACCELCTL, "frobnicate"), 2,
            "unknown command 'frobnicate'")
expect_exit("unknown option exits 2", run(ACCELCTL, "--frob"), 2,
            "unknown option '--frob'")
expect_exit("info unknown option exits 2", run(ACCELCTL, "info", "-x"), 2,
            "unknown option '-x'")
expect_exit("info extra argument exits 2", run(ACCELCTL, "info", "extra"),
            2, "unexpected argument 'extra'")
# A refused option is named as the user wrote it: a long one (or its
# abbreviation) by its name, a short one by its letter, even inside a
# bundle that follows a long option (where getopt has not moved on yet),
# never by the letter a long option is handled as inside accelctl.
for args, needle in (
        (["info", "--json=1"], "info: option '--json' takes no value"),
        (["info", "--js=1"], "info: option '--js' takes no value"),
        (["info", "--json", "-xj"], "info: unknown option '-x'"),
        (["info", "--nope=3"], "info: unknown option '--nope=3'"),
        (["--help=1"], "accelctl: option '--help' takes no value"),
        (["devices", "--json=2"], "devices: option '--json' takes no value"),
        (["calibrate", "--show=1"],
         "calibrate: option '--show' takes no value"),
        (["calibrate", "-s"], "calibrate: unknown option '-s'"),
        (["top", "--once=1"], "top: option '--once' takes no value"),
        (["top", "--json", "-Jx"], "top: unknown option '-x'"),
        (["top", "--delay"], "top: option '--delay' needs a value"),
        (["top", "-Jd"], "top: option '-d' needs a value"),
        (["cdi", "--output"], "cdi: option '--output' needs a value"),
        (["cdi", "--print", "-px"], "cdi: unknown option '-x'"),
        (["cdi", "--dynamic=1"], "cdi: option '--dynamic' takes no value"),
        (["trace", "--buffer-kb"],
         "trace: option '--buffer-kb' needs a value"),
        (["trace", "--fences", "-xo"], "trace: unknown option '-x'"),
        (["trace", "--fences=1"], "trace: option '--fences' takes no value"),
        (["trace", "-o"], "trace: option '-o' needs a value")):
    expect_exit(f"{' '.join(args)}: exit 2, naming the option as written",
                run(ACCELCTL, *args), 2, f"accelctl: {needle}" if
                not needle.startswith("accelctl") else needle)
# An option that takes a value, given twice, is a usage error: which one
# was meant would be a guess (cdi -o a -o b always was; trace took the
# last). Nothing is written.
with tempfile.TemporaryDirectory(prefix="accelctl-twice-") as d:
    a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    for args, needle in (
            (["trace", "-i", "/dev/null", "-o", a, "-o", b],
             "trace: -o/--output given twice"),
            (["trace", "-i", "/dev/null", "--output", a, "-o", b],
             "trace: -o/--output given twice"),
            (["trace", "-i", "/dev/null", "-i", "/dev/null", "-o", a],
             "trace: -i/--input given twice"),
            (["trace", "-d", "1", "--duration=2", "-o", a],
             "trace: -d/--duration given twice"),
            (["trace", "--buffer-kb", "64", "--buffer-kb", "64", "-o", a],
             "trace: --buffer-kb given twice"),
            (["trace", "--tracing", d, "--tracing", d, "-o", a],
             "trace: --tracing given twice"),
            (["cdi", "-o", a, "-o", b], "cdi: give one of -o"),
            (["cdi", "--print", "--kind", "a.io/b", "--kind", "c.io/d"],
             "cdi: --kind given twice"),
            (["cdi", "--print", "--device", "/dev/null", "--device",
              "/dev/null"], "cdi: --device given twice"),
            (["cdi", "--print", "--sysfs", d, "--sysfs", d],
             "cdi: --sysfs given twice"),
            (["top", "-d", "0", "-d", "1"], "top: -d/--delay given twice"),
            (["top", "-n", "1", "--iterations=2"],
             "top: -n/--iterations given twice")):
        r = run(ACCELCTL, *args)
        expect_exit(f"{' '.join(args).replace(d, 'D')}: exit 2", r, 2,
                    f"accelctl: {needle}")
        check(f"{' '.join(args).replace(d, 'D')}: nothing written",
              not os.path.exists(a) and not os.path.exists(b) and
              r.stdout == "", f"{os.listdir(d)} {r.stdout!r}")
        for f in (a, b):
            if os.path.exists(f):
                os.unlink(f)
expect_exit("bad ACCEL_SCHEDULER exits 1",
            run(ACCELCTL, "info", env={"ACCEL_SCHEDULER": "bogus"}), 1,
            '"bogus"')

text, js = run(ACCELCTL, "info"), run(ACCELCTL, "info", "--json")
expect_exit("info exits 0", text, 0)
expect_exit("info --json exits 0", js, 0)
compare_text_json("info: JSON holds the text's data", text.stdout, js.stdout)

env = {"ACCEL_DEVICE": "/dev/null"}
text = run(ACCELCTL, "info", env=env)
j = compare_text_json("info on /dev/null: JSON holds the text's data",
                      text.stdout, run(ACCELCTL, "info", "-j", env=env).stdout)
check("info without the module: kernel release and client id unavailable",
      "kernel release:  unavailable (no module)\n" in text.stdout and
      "client id:       unavailable (no module)\n" in text.stdout,
      text.stdout)
check("info on /dev/null falls back to embedded",
      j["scheduler"]["kind"] == "embedded" and
      "ACCEL_IOCTL_INFO" in j["scheduler"]["reason"], str(j))

# The kernel scheduler, faked: /dev/null answers ACCEL_IOCTL_INFO.
env = {"ACCEL_DEVICE": "/dev/null", "LD_PRELOAD": os.path.abspath(FAKE_SO)}
text = run(ACCELCTL, "info", env=env)
expect_exit("info on a (fake) device exits 0", text, 0)
j = compare_text_json("info on a (fake) device: JSON holds the text's data",
                      text.stdout, run(ACCELCTL, "info", "-j", env=env).stdout)
module = j["scheduler"]["module"] or {}
check("info on a (fake) device shows the kernel scheduler",
      j["scheduler"]["kind"] == "kernel" and module.get("client_id") == 17
      and module["features"]["names"] == ["uring_cmd", "uring_cancel"]
      and "/dev/null (from ACCEL_DEVICE) answered: module 0.1.0"
      in j["scheduler"]["reason"], str(j))
expect_exit("hello-scheduler on a (fake) device", run(HELLO, env=env), 0,
            "scheduler:      kernel", "stdout")

odd = '/nonexistent/"quoted"\\back\tslash'
j = json.loads(run(ACCELCTL, "info", "-j",
                   env={"ACCEL_DEVICE": odd}).stdout)
check("JSON escapes odd paths", odd in j["scheduler"]["reason"], str(j))

hello = run(HELLO)
expect_exit("hello-scheduler exits 0", hello, 0, "scheduler:", "stdout")
hello = run(HELLO, env={"ACCEL_SCHEDULER": "bogus"})
expect_exit("hello-scheduler fails on a bad ACCEL_SCHEDULER", hello, 1,
            "ACCEL_SCHEDULER")


# ---- --help and the man page --------------------------------------------------
# The options that each command's --help lists, the man page's entry of
# the command documents, and the reverse; the main --help's line of each
# command names the options of the man page's synopsis of it. Options are
# "-x" and "--word" not inside a word ("trace-cmd", "Ctrl-C"); the man
# page's are those of ``literals`` without spaces ("``trace-cmd record
# -e accelsched``" is an example, not an option).
MAN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "Documentation", "man", "accelctl.1.rst")
COMMANDS = ("info", "devices", "top", "cdi", "trace", "calibrate")
OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def man_entries(text):
    """{command: (synopsis line, the whole entry)} of the COMMANDS list."""
    entries, name = {}, None
    for line in text.splitlines():
        m = re.match(r"``([a-z]+)``", line)
        if m:
            name = m.group(1)
            entries[name] = [line, line]
        elif name and (not line or line.startswith(" ")):
            entries[name][1] += "\n" + line
        else:
            name = None
    return entries


def man_options(text):
    return {o for lit in re.findall(r"``(.*?)``", text, re.S)
            if not re.search(r"\s", lit) for o in OPT_RE.findall(lit)}


if not os.path.exists(MAN):
    skip("--help and the man page agree", f"no {MAN}")
else:
    with open(MAN) as f:
        man = man_entries(f.read())
    main_help = run(ACCELCTL, "--help").stdout
    blocks = {}
    for line in main_help.split("Commands:\n")[1].split("\n\n")[0].splitlines():
        m = re.match(r"  (\w+) ", line)
        if m:
            cur = m.group(1)
        blocks[cur] = blocks.get(cur, "") + line + "\n"
    help_opts = man_options(man["help"][1])
    check("man page: help says -h, --help of each command",
          {"-h", "--help"} <= help_opts, man["help"][1])
    for cmd in COMMANDS:
        own = set(OPT_RE.findall(run(ACCELCTL, cmd, "--help").stdout))
        own -= {"-h", "--help"}
        syn, entry = man.get(cmd, ("", ""))
        documented = man_options(entry)
        check(f"{cmd} --help: every option is in the man page",
              own <= documented, f"not in the man page: {own - documented}")
        check(f"{cmd}: every option of the man page is in {cmd} --help",
              documented <= own, f"not in --help: {documented - own}")
        mine = set(OPT_RE.findall(blocks.get(cmd, "")))
        check(f"accelctl --help: {cmd}'s line is the man page's synopsis",
              mine == man_options(syn),
              f"--help: {sorted(mine)}; man page: "
              f"{sorted(man_options(syn))}")

# ---- devices ------------------------------------------------------------------
expect_exit("devices --help exits 0", run(ACCELCTL, "devices", "--help"), 0,
            "Usage: accelctl devices [-j|--json] [DRIVER]", "stdout")
expect_exit("devices unknown option exits 2", run(ACCELCTL, "devices", "-x"),
            2, "accelctl: devices: unknown option '-x'")
expect_exit("devices two drivers exits 2",
            run(ACCELCTL, "devices", "cpu", "vulkan"), 2,
            "accelctl: devices: unexpected argument 'vulkan'")
for bad in ("gpu", "", "cpu://"):
    expect_exit(f"devices {bad!r} exits 2", run(ACCELCTL, "devices", bad), 2,
                f"accelctl: devices: no driver named '{bad}'; the drivers "
                "are cpu, vulkan, cuda and hip")
text, js = run(ACCELCTL, "devices"), run(ACCELCTL, "devices", "--json")
expect_exit("devices exits 0", text, 0)
expect_exit("devices --json exits 0", js, 0)
try:
    dj = json.loads(js.stdout)
except ValueError as e:
    dj = None
    check("devices --json is JSON", False, f"{e}:\n{js.stdout}")
if dj is not None:
    drivers = {d["name"]: d for d in dj["drivers"]}
    check("devices lists every driver",
          [d["name"] for d in dj["drivers"]] == ["cpu", "vulkan", "cuda", "hip"],
          js.stdout)
    cpu = drivers["cpu"]["devices"]
    check("devices: cpu has one device, the CPUs of the affinity",
          len(cpu) == 1 and cpu[0]["uri"] == "cpu://0" and
          cpu[0]["kind"] == "cpu" and
          cpu[0]["cpu_count"] == len(os.sched_getaffinity(0)) and
          cpu[0]["queue_families"] == [{"count": len(os.sched_getaffinity(0)),
                                        "flags": ["compute", "transfer"]}] and
          cpu[0]["device_local_bytes"] ==
          os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") and
          cpu[0]["limits"]["min_binding_alignment"] == 1 and
          len(cpu[0]["limits"]) == 18 and cpu[0]["open_error"] is None,
          json.dumps(cpu))
    missing = []
    for d in dj["drivers"]:
        if not d["available"]:
            if f"{d['name']}: not available: {d['reason']}" not in text.stdout:
                missing.append(d["name"] + " reason")
            if not d["reason"] or d["devices"] or not d["error"]:
                missing.append(d["name"] + " reason/error/devices")
        for dev in d["devices"]:
            for v in (dev["uri"], dev["name"], dev["vendor"], dev["kind"]):
                if v not in text.stdout:
                    missing.append(v)
            for k, v in (dev["limits"] or {}).items():
                if not re.search(rf"^    {k}: +{v}$", text.stdout, re.M):
                    missing.append(f"{dev['uri']} {k}")
    check("devices: the text holds the JSON's data", not missing,
          f"missing {missing}:\n{text.stdout}")
    only = run(ACCELCTL, "devices", "-j", "cpu")
    expect_exit("devices cpu exits 0", only, 0)
    check("devices cpu lists only cpu",
          [d["name"] for d in json.loads(only.stdout)["drivers"]] == ["cpu"],
          only.stdout)
    off = [d for d in dj["drivers"] if not d["available"]]
    if off:
        expect_exit("devices of a driver not available exits 1",
                    run(ACCELCTL, "devices", off[0]["name"]), 1,
                    f"accelctl: devices: {off[0]['name']}: driver not "
                    "available: ")
    else:
        skip("devices of a driver not available exits 1",
             "every driver is available here")

# ---- calibrate ----------------------------------------------------------------

expect_exit("calibrate --help exits 0", run(ACCELCTL, "calibrate", "--help"), 0,
            "Usage: accelctl calibrate [-j|--json] [--show] [DRIVER[://N]]...",
            "stdout")
expect_exit("calibrate unknown option exits 2", run(ACCELCTL, "calibrate", "-x"),
            2, "accelctl: calibrate: unknown option '-x'")
# Every command takes its options after its arguments too.
for cmd in ("info", "devices", "cdi", "calibrate"):
    expect_exit(f"{cmd} ARG --help exits 0", run(ACCELCTL, cmd, "x", "--help"), 0,
                f"Usage: accelctl {cmd}", "stdout")
# A device too long for it is refused, never cut into another device.
long_uri = "cpu://?threads=" + "0" * 120 + "10"
expect_exit("calibrate of a URI too long exits 2",
            run(ACCELCTL, "calibrate", "--show", long_uri), 2,
            "a device URI here is at most 127")
with tempfile.TemporaryDirectory(prefix="accelctl-calibrate-") as cache:
    env = {"ACCEL_CACHE_DIR": cache}
    bad = run(ACCELCTL, "calibrate", "nosuch", env=env)
    expect_exit("calibrate of no such driver exits 1", bad, 1,
                "nosuch://: failed: ", "stdout")
    shown = run(ACCELCTL, "calibrate", "--show", "-j", "cpu", env=env)
    expect_exit("calibrate --show exits 0", shown, 0)
    cal = run(ACCELCTL, "calibrate", "-j", "cpu", env=env)
    expect_exit("calibrate cpu exits 0", cal, 0)
    again = run(ACCELCTL, "calibrate", "--show", "-j", "cpu", env=env)
    text = run(ACCELCTL, "calibrate", "--show", "cpu", env=env)
    try:
        before = json.loads(shown.stdout)["devices"][0]
        dev = json.loads(cal.stdout)["devices"][0]
        cached = json.loads(again.stdout)["devices"][0]
        keys = ("bandwidth_bytes_per_s", "kernel_bandwidth_bytes_per_s",
                "operation_rate_per_s",
                "dispatch_ns", "submission_ns")
        check("calibrate: defaults before, measured after, cached after that",
              (before["source"], dev["source"], cached["source"]) ==
              ("default", "calibrated", "cached") and dev["error"] is None,
              f"{shown.stdout}{cal.stdout}{again.stdout}")
        check("calibrate: every parameter is a positive count or zero",
              all(isinstance(dev[k], int) and dev[k] >= 0 for k in keys) and
              dev["bandwidth_bytes_per_s"] > 0 and dev["operation_rate_per_s"] > 0
              and dev["kernel_bandwidth_bytes_per_s"] > 0,
              cal.stdout)
        check("calibrate: the next process reads the same parameters",
              all(cached[k] == dev[k] for k in keys), again.stdout)
        check("calibrate: the text holds the JSON's data",
              dev["uri"] in text.stdout and "(cached)" in text.stdout and
              f"{dev['bandwidth_bytes_per_s'] / 1e9:.2f} GB/s" in text.stdout and
              f"{dev['kernel_bandwidth_bytes_per_s'] / 1e9:.2f} GB/s" in text.stdout and
              f"{dev['submission_ns'] / 1e3:.2f} us" in text.stdout, text.stdout)
    except (ValueError, KeyError, IndexError) as e:
        check("calibrate -j is JSON with the parameters", False,
              f"{e}:\n{cal.stdout}")

# ---- top, on fake trees -----------------------------------------------------

DEV = "/dev/accelsched"
NOBODY = 65534


class Tree:
    """A fake /sys/kernel/accelsched (engines, tenants) and /proc."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="accelctl-top-")
        os.chmod(self.dir, 0o755)
        self.sysfs = os.path.join(self.dir, "sysfs")
        self.proc = os.path.join(self.dir, "proc")
        for d in ("engines", "tenants"):
            os.makedirs(os.path.join(self.sysfs, d))
        os.makedirs(self.proc)

    def env(self):
        return {"ACCELCTL_SYSFS": self.sysfs, "ACCELCTL_PROC": self.proc}

    def _files(self, d, files):
        os.makedirs(d, exist_ok=True)
        for k, v in files.items():
            p = os.path.join(d, k)
            with open(p + ".tmp", "w") as f:
                f.write(f"{v}\n")
            os.replace(p + ".tmp", p)

    def engine(self, name, **files):
        self._files(os.path.join(self.sysfs, "engines", name), files)

    def tenant(self, cgroup_id, **files):
        self._files(os.path.join(self.sysfs, "tenants", str(cgroup_id)), files)

    def fd(self, pid, fd, info, comm=None, target=DEV):
        """Process pid (named comm, default "app") has fd open on target,
        with fdinfo info (None: no fdinfo file, as when the fd closed after
        the readlink)."""
        p = os.path.join(self.proc, str(pid))
        for d in ("fd", "fdinfo"):
            os.makedirs(os.path.join(p, d), exist_ok=True)
        if comm or not os.path.exists(os.path.join(p, "comm")):
            with open(os.path.join(p, "comm"), "w") as f:
                f.write((comm or "app") + "\n")
        link = os.path.join(p, "fd", str(fd))
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
        if info is not None:
            with open(os.path.join(p, "fdinfo", str(fd)) + ".tmp", "w") as f:
                f.write(info)
            os.replace(os.path.join(p, "fdinfo", str(fd)) + ".tmp",
                       os.path.join(p, "fdinfo", str(fd)))

    def gone(self, pid):
        shutil.rmtree(os.path.join(self.proc, str(pid)))

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def fdinfo(client_id, tenant=0, engines=(), queues=(), extra=""):
    """engines: (name, busy_ns, capacity, released, latency_ns), the last
    two None for a module without them; queues: dicts of the fields."""
    lines = ["pos:\t0", "flags:\t02100002", "mnt_id:\t25", "ino:\t5",
             "drm-driver:\taccelsched", f"drm-client-id:\t{client_id}"]
    for name, busy, cap, rel, lat in engines:
        k = name.replace(":", "%3a")
        lines += [f"drm-engine-{k}:\t{busy} ns",
                  f"drm-engine-capacity-{k}:\t{cap}"]
        if rel is not None:
            lines += [f"accel-released-{k}:\t{rel}",
                      f"accel-latency-{k}:\t{lat} ns"]
    if tenant is not None:
        lines.append(f"accel-tenant:\t{tenant}")
    for q in queues:
        q = dict(q)
        h = q.pop("handle")
        q["engine"] = q["engine"].replace(":", "%3a")
        lines.append(f"accel-queue-{h}:\t" +
                     " ".join(f"{k}={v}" for k, v in q.items()))
    return "\n".join(lines) + "\n" + extra


def queue(handle, engine, priority="normal", weight=1, runnable=0,
          in_flight=0, released=0, busy_ns=0, latency_ns=0):
    return dict(handle=handle, engine=engine, priority=priority,
                weight=weight, runnable=runnable, in_flight=in_flight,
                released=released, busy_ns=busy_ns, latency_ns=latency_ns)


class Between:
    """Change the tree between the first two samples of top, with no hook
    in top: inotify says when top has read every fdinfo of the tree (the
    last files a sample reads), so its first sample is done and it sleeps
    for the interval; change() runs then. (top reads only regular files,
    so a FIFO cannot hold it.) The interval must outlast change()."""

    IN_CLOSE_NOWRITE = 0x10

    def __init__(self, tree, change):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.want = 0
        for pid in os.listdir(tree.proc):
            d = os.path.join(tree.proc, pid, "fdinfo")
            if libc.inotify_add_watch(self.fd, d.encode(),
                                      self.IN_CLOSE_NOWRITE) < 0:
                raise OSError(ctypes.get_errno(), "inotify_add_watch " + d)
            self.want += len(os.listdir(d))
        self.change = change
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        seen = set()
        while len(seen) < self.want:
            buf = os.read(self.fd, 65536)
            while buf:
                wd, mask, _, n = struct.unpack_from("iIII", buf)
                name = buf[16:16 + n].rstrip(b"\0")
                if mask & self.IN_CLOSE_NOWRITE and name:
                    seen.add((wd, name))
                buf = buf[16 + n:]
        os.close(self.fd)
        self.change()


def fmt(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def n(v):
    return "-" if v is None else str(v)


def top_text_from_json(j):
    """The text frame top prints for JSON frame j, a list of token lists
    (whitespace does not matter, every value does)."""
    ne, nt, nc = len(j["engines"]), len(j["tenants"]), len(j["clients"])
    s = lambda k: "" if k == 1 else "s"
    rows = [f"accelsched: {ne} engine{s(ne)}, {nt} tenant{s(nt)}, "
            f"{nc} client{s(nc)}; interval {fmt(j['interval_s'], 3)} s"
            .split(),
            "ENGINE CREDITS INFLIGHT BUSY% REL/S LAT(ms)".split()]
    for e in j["engines"]:
        rows.append([e["name"], n(e["credits"]), n(e["in_flight"]),
                     fmt(e["busy_pct"], 1), fmt(e["released_per_s"], 1),
                     fmt(e["latency_mean_ms"], 3)])
    rows.append("TENANT WEIGHT QUEUES JOBS REL/S LAT(ms) ENGINE SHARE%"
                .split())
    for t in j["tenants"]:
        row = t["tenant"].split() + [n(t["weight"]), n(t["queues"]),
                                     n(t["jobs"]), fmt(t["released_per_s"], 1),
                                     fmt(t["latency_mean_ms"], 3)]
        shares = [[e["name"], fmt(e["share_pct"], 1)] for e in t["engines"]]
        rows.append(row + (shares[0] if shares else ["-", "-"]))
        rows += shares[1:]
    rows.append(("PID CLIENT TENANT QUEUE ENGINE PRIO WEIGHT RUNNABLE "
                 "INFLIGHT SHARE% REL/S LAT(ms) PRED% MISS% COMM").split())
    for c in j["clients"]:
        lead = [str(c["pid"]), str(c["client_id"])] + \
            (c["tenant"] or "-").split()
        if not c["queues"]:
            rows.append(lead + ["-"] * 11 + c["comm"].split())
        for q in c["queues"]:
            rows.append(lead + [str(q["handle"]), q["engine"], q["priority"],
                                n(q["weight"]), n(q["runnable"]),
                                n(q["in_flight"]), fmt(q["share_pct"], 1),
                                fmt(q["released_per_s"], 1),
                                fmt(q["latency_mean_ms"], 3),
                                fmt(q["predicted_pct"], 1),
                                fmt(q["missed_pct"], 1)] +
                        c["comm"].split())
    u = j["unreadable"]
    if u["processes"]:
        rows.append(f"{u['processes']} process"
                    f"{'' if u['processes'] == 1 else 'es'} not readable "
                    "(another user's): run as root to see their clients"
                    .split())
    if u["clients"]:
        rows.append(f"{u['clients']} client{s(u['clients'])} not readable "
                    "(fdinfo refused): run as root to see "
                    f"{'it' if u['clients'] == 1 else 'them'}".split())
    return rows


def same_token(w, g, loose):
    """Equal; or, loose, numbers within 2 % (another run's interval)."""
    if w == g:
        return True
    try:
        return loose and abs(float(w) - float(g)) <= 0.02 * abs(float(w)) + 0.1
    except ValueError:
        return False


def rescaled(j, ratio):
    """Frame j with its per-interval rates (busy %, released/s) as over an
    interval ratio times as long: the counts that grew are the same."""
    j = copy.deepcopy(j)
    def scale(d, *keys):
        for k in keys:
            if d.get(k) is not None:
                d[k] = d[k] / ratio
    for e in j["engines"]:
        scale(e, "busy_pct", "released_per_s")
    for t in j["tenants"]:
        scale(t, "released_per_s")
    for c in j["clients"]:
        for q in c["queues"]:
            scale(q, "released_per_s")
    return j


def compare_top(name, text_out, j, loose=False):
    """The text frame must be exactly what the JSON frame holds. The two
    come from two runs of the same change, each over its own interval: with
    loose, the JSON's rates are rescaled to the text's interval (which the
    text prints to the millisecond), and numbers may differ by 2 %. A busy
    machine stretches one interval more than the other (0.323 s against
    0.300 s was seen), so comparing the rates unscaled was flaky."""
    got = [line.split() for line in text_out.splitlines() if line.strip()]
    m = re.search(r"interval (\d+\.\d+) s", text_out)
    if loose and m and j.get("interval_ns") and float(m.group(1)) > 0:
        j = rescaled(j, float(m.group(1)) * 1e9 / j["interval_ns"])
    j = dict(j, interval_s=float(m.group(1)) if m else None)
    want = top_text_from_json(j)
    diff = [(i, w, g) for i, (w, g) in enumerate(zip(want, got))
            if len(w) != len(g) or
            not all(same_token(a, b, loose) for a, b in zip(w, g))]
    check(name, not diff and len(got) == len(want),
          f"text vs JSON: {len(got)} lines, {len(want)} expected; first "
          f"differences (line, from JSON, text): {diff[:3]}\n{text_out}")


def top(tree, *args, user=None):
    return run(ACCELCTL, "top", *args, env=tree.env(), user=user)


def top_json(name, proc):
    """The JSON lines of a run, or None (failing check name)."""
    try:
        frames = [json.loads(line) for line in proc.stdout.splitlines()]
    except ValueError as e:
        check(name, False, f"not JSON lines ({e}):\n{proc.stdout}")
        return None
    check(name, proc.returncode == 0 and len(frames) >= 1,
          f"exit {proc.returncode}, {len(frames)} frames; stderr:\n"
          f"{proc.stderr}")
    return frames


def by(items, key, value):
    found = [i for i in items if i[key] == value]
    return found[0] if len(found) == 1 else None


# Usage errors, and no module.
tree = Tree()
for args, needle in [
        (["-d", "abc"], "bad delay 'abc'"), (["-d", "-1"], "bad delay '-1'"),
        (["-d", "nan"], "bad delay 'nan'"), (["--delay=1s"], "bad delay '1s'"),
        (["-d", "1e9"], "from 0 to 86400"), (["-d"], "'-d' needs a value"),
        (["-n", "0"], "bad frame count '0'"), (["-n", "x"], "bad frame count"),
        (["-x"], "unknown option '-x' (valid: -d SECONDS"),
        (["--frob"], "unknown option '--frob'"),
        (["extra"], "unexpected argument 'extra'")]:
    expect_exit(f"top {' '.join(args)} exits 2", top(tree, *args), 2, needle)
expect_exit("top --help exits 0", top(tree, "--help"), 0, "--once", "stdout")
expect_exit("top without the module exits 1",
            run(ACCELCTL, "top", "--once",
                env={"ACCELCTL_SYSFS": os.path.join(tree.dir, "none"),
                     "ACCELCTL_PROC": tree.proc}), 1,
            "the accelsched module is not loaded")
expect_exit("top without the module names the embedded scheduler",
            run(ACCELCTL, "top", "-J", "--once",
                env={"ACCELCTL_SYSFS": os.path.join(tree.dir, "none")}), 1,
            "embedded scheduler")

# An empty module.
js = top_json("top on an idle module: JSON",
              top(tree, "--once", "-J", "-d", "0"))
if js:
    check("top on an idle module: nothing in it",
          js[0]["engines"] == [] and js[0]["tenants"] == [] and
          js[0]["clients"] == [] and
          js[0]["unreadable"] == {"processes": 0, "clients": 0}, str(js[0]))
    compare_top("top on an idle module: text is the JSON",
                top(tree, "--once", "-d", "0").stdout, js[0])
tree.close()

# A known load, read twice at once (-d 0: nothing grows): the totals.
tree = Tree()
tree.engine("cpu", credits=4, in_flight=3, busy_ns=1500000000, released=150,
            completed=147, failed=2, timedout=1, latency_ns=75000000)
tree.engine("vulkan:0", credits=2, in_flight=0, busy_ns=100000000,
            released=10, completed=10, failed=0, timedout=0,
            latency_ns=1000000)
tree.tenant(4242, weight=200, queues=1, jobs=2, busy_ns=900000000,
            released=90, latency_ns=42000000)
tree.tenant(4343, weight=50, queues=0, jobs=0, busy_ns=0, released=0,
            latency_ns=0)
# Client 7 of cgroup 4242 in pid 100, and the same file in pid 90 (fork).
c7 = fdinfo(7, 4242, [("cpu", 900000000, 4, 90, 42000000)],
            [queue(1, "cpu", "high", 5, runnable=1, in_flight=1, released=90,
                   busy_ns=900000000, latency_ns=42000000) |
             {"predicted_ns": 440000000, "predicted_busy_ns": 400000000,
              "deadlines_met": 3, "deadlines_missed": 1}],
            extra="drm-memory-vram:\t4 KiB\nfuture-key:\tx\n")
tree.fd(100, 3, c7, comm="render")
tree.fd(90, 9, c7, comm="render-parent")
# Client 8, a tenant of its own: two queues on two engines, one name with
# ':', a field top does not know.
c8 = fdinfo(8, 0, [("cpu", 600000000, 4, 60, 33000000),
                   ("vulkan:0", 100000000, 2, 10, 1000000)],
            [queue(1, "cpu", "low", 3, in_flight=2, released=60,
                   busy_ns=600000000, latency_ns=33000000) | {"future": 1},
             queue(4, "vulkan:0", "normal", 1, released=10,
                   busy_ns=100000000, latency_ns=1000000)])
tree.fd(200, 4, c8, comm='odd "name" \\ x')
tree.fd(200, 5, "pos:\t0\n", target="/dev/null")  # not the device
tree.fd(200, 6, None)  # closed since the readlink: no fdinfo
# Client 9: a file without queues; an engine named "capacity-x" (its busy
# line says "ns", a capacity line does not).
tree.fd(300, 3, fdinfo(9, 0, [("capacity-x", 5, 1, 0, 0)]), comm="idle")
# The device, but another driver's fdinfo: not a client.
tree.fd(400, 3, "drm-driver:\ti915\ndrm-client-id:\t1\n", comm="other")
# The device, but no drm-driver line: not known to be the module's, so
# not a client either (clients are files whose drm-driver is accelsched).
tree.fd(600, 3, "drm-client-id:\t2\n", comm="nodriver")
env_args = ("--once", "-d", "0")
js = top_json("top on a known load: JSON", top(tree, *env_args, "-J"))
if js:
    j = js[0]
    cpu = by(j["engines"], "name", "cpu")
    vk = by(j["engines"], "name", "vulkan:0")
    check("top: engine totals are sysfs's",
          cpu and vk and cpu["credits"] == 4 and cpu["in_flight"] == 3 and
          cpu["total"] == {"busy_ns": 1500000000, "released": 150,
                           "completed": 147, "failed": 2, "timedout": 1,
                           "latency_ns": 75000000} and
          vk["total"]["busy_ns"] == 100000000, str(j["engines"]))
    check("top -d 0: nothing grew, so no share and no latency",
          cpu and cpu["interval"] == {"busy_ns": 0, "released": 0,
                                      "latency_ns": 0} and
          cpu["busy_pct"] == 0.0 and cpu["latency_mean_ms"] is None and
          all(q["share_pct"] is None for c in j["clients"]
              for q in c["queues"]), str(j))
    check("top: only fdinfos whose drm-driver is accelsched are clients",
          sorted(c["client_id"] for c in j["clients"]) == [7, 8, 9],
          str([(c["client_id"], c["comm"]) for c in j["clients"]]))
    q7 = [q for c in j["clients"] if c["client_id"] == 7 for q in c["queues"]]
    q8 = [q for c in j["clients"] if c["client_id"] == 8 for q in c["queues"]]
    check("top: a queue's predictions against what its jobs took",
          q7 and q7[0]["predicted_pct"] == 110.0 and
          q7[0]["predicted_ns"] == 440000000 and
          q7[0]["predicted_busy_ns"] == 400000000 and
          q8 and all(q["predicted_pct"] is None and
                     q["predicted_ns"] is None for q in q8), str(q7 + q8))
    check("top: a queue's missed deadlines, none before the first",
          q7 and q7[0]["missed_pct"] == 25.0 and
          q7[0]["deadlines_met"] == 3 and q7[0]["deadlines_missed"] == 1 and
          q8 and all(q["missed_pct"] is None and
                     q["deadlines_met"] is None for q in q8), str(q7 + q8))
    check("top: tenants, cgroups first, then files",
          [t["tenant"] for t in j["tenants"]] ==
          ["4242", "4343", "file 8", "file 9"], str(j["tenants"]))
    t42 = by(j["tenants"], "tenant", "4242")
    f8 = by(j["tenants"], "tenant", "file 8")
    check("top: a cgroup tenant is sysfs's",
          t42 and t42["cgroup_id"] == 4242 and t42["client_id"] is None and
          t42["weight"] == 200 and t42["queues"] == 1 and t42["jobs"] == 2 and
          t42["total"] == {"busy_ns": 900000000, "released": 90,
                           "latency_ns": 42000000} and
          [(e["name"], e["total"]["busy_ns"]) for e in t42["engines"]] ==
          [("cpu", 900000000)], str(t42))
    check("top: a file's own tenant is its fdinfo's",
          f8 and f8["cgroup_id"] is None and f8["client_id"] == 8 and
          f8["weight"] == 100 and f8["queues"] == 2 and f8["jobs"] is None and
          f8["total"] == {"busy_ns": 700000000, "released": 70,
                          "latency_ns": 34000000} and
          [(e["name"], e["total"]["busy_ns"]) for e in f8["engines"]] ==
          [("cpu", 600000000), ("vulkan:0", 100000000)], str(f8))
    check("top: three clients, the other driver's and the closed fd left out",
          [c["client_id"] for c in j["clients"]] == [7, 8, 9] and
          j["unreadable"] == {"processes": 0, "clients": 0}, str(j["clients"]))
    c7j, c8j, c9j = (by(j["clients"], "client_id", i) for i in (7, 8, 9))
    check("top: a file open in two processes is one client, the lowest pid",
          c7j and c7j["pid"] == 90 and c7j["comm"] == "render-parent" and
          c7j["tenant"] == "4242" and c7j["cgroup_id"] == 4242, str(c7j))
    check("top: queue lines, fields top does not know ignored",
          c8j and c8j["tenant"] == "file 8" and
          c8j["comm"] == 'odd "name" \\ x' and
          [(q["handle"], q["engine"], q["priority"], q["weight"],
            q["runnable"], q["in_flight"], q["total"]["busy_ns"],
            q["total"]["released"], q["total"]["latency_ns"])
           for q in c8j["queues"]] ==
          [(1, "cpu", "low", 3, 0, 2, 600000000, 60, 33000000),
           (4, "vulkan:0", "normal", 1, 0, 0, 100000000, 10, 1000000)] and
          [(e["name"], e["capacity"], e["total"]["busy_ns"])
           for e in c8j["engines"]] ==
          [("cpu", 4, 600000000), ("vulkan:0", 2, 100000000)], str(c8j))
    check("top: an engine named capacity-x",
          c9j and c9j["queues"] == [] and
          [(e["name"], e["capacity"], e["total"]["busy_ns"])
           for e in c9j["engines"]] == [("capacity-x", 1, 5)], str(c9j))
    text = top(tree, *env_args)
    expect_exit("top --once (text) exits 0", text, 0)
    compare_top("top on a known load: text is the JSON", text.stdout, j)
    two = top_json("top -n 2 -J: JSON lines",
                   top(tree, "-n", "2", "-J", "-d", "0"))
    check("top -n 2 -J: two frames, one a line, the same clients",
          two is not None and len(two) == 2 and
          all(f["clients"] == j["clients"] for f in two), str(two)[:2000])
tree.close()

# What grows over an interval: the tree changes between the two samples.
def changing_tree():
    t = Tree()
    t.engine("cpu", credits=4, in_flight=1, busy_ns=1000000000, released=100,
             completed=99, failed=0, timedout=0, latency_ns=50000000)
    t.tenant(4242, weight=200, queues=1, jobs=1, busy_ns=600000000,
             released=60, latency_ns=30000000)
    t.fd(100, 3, fdinfo(7, 4242, [("cpu", 600000000, 4, 60, 30000000)],
                        [queue(1, "cpu", released=60, busy_ns=600000000,
                               latency_ns=30000000, in_flight=1)]),
         comm="render")
    t.fd(200, 3, fdinfo(8, 0, [("cpu", 400000000, 4, 40, 20000000)],
                        [queue(2, "cpu", "low", 3, released=40,
                               busy_ns=400000000, latency_ns=20000000)]),
         comm="train")
    t.fd(300, 3, fdinfo(9, 0, [("cpu", 0, 4, 0, 0)]), comm="gone")

    def change():
        # +600 ms of engine time: 300 client 7, 200 client 8, 100 client 10
        # (new: counts from zero); client 9 goes.
        t.engine("cpu", busy_ns=1600000000, released=160, completed=159,
                 latency_ns=80000000, in_flight=2)
        t.tenant(4242, busy_ns=900000000, released=90, latency_ns=42000000)
        t.fd(100, 3, fdinfo(7, 4242, [("cpu", 900000000, 4, 90, 42000000)],
                            [queue(1, "cpu", released=90, busy_ns=900000000,
                                   latency_ns=42000000, in_flight=1)]),
             comm="render")
        t.fd(200, 3, fdinfo(8, 0, [("cpu", 600000000, 4, 60, 33000000)],
                            [queue(2, "cpu", "low", 3, released=60,
                                   busy_ns=600000000, latency_ns=33000000)]),
             comm="train")
        t.gone(300)
        t.fd(500, 3, fdinfo(10, 0, [("cpu", 100000000, 4, 10, 5000000)],
                            [queue(1, "cpu", released=10, busy_ns=100000000,
                                   latency_ns=5000000, runnable=1)]),
             comm="newbie")
    return t, change


def near(got, released, interval_ns):
    return got is not None and abs(got - released * 1e9 / interval_ns) <= 0.051


tree, change = changing_tree()
Between(tree, change)
js = top_json("top over a changing load: JSON lines",
              top(tree, "-n", "2", "-J", "-d", "0.3"))
if js:
    j = js[0]
    iv = j["interval_ns"]
    cpu = by(j["engines"], "name", "cpu")
    check("top: the engine's busy % and rates over the interval",
          cpu and cpu["interval"] == {"busy_ns": 600000000, "released": 60,
                                      "latency_ns": 30000000} and
          abs(cpu["busy_pct"] - 600000000 * 100 / (iv * 4)) <= 0.051 and
          near(cpu["released_per_s"], 60, iv) and
          cpu["latency_mean_ms"] == 0.5 and cpu["in_flight"] == 2, str(cpu))
    shares = {c["client_id"]: [(q["handle"], q["share_pct"],
                                q["latency_mean_ms"], q["interval"])
                               for q in c["queues"]] for c in j["clients"]}
    check("top: queue shares of the engine's time, a new client from zero, "
          "a gone one left out",
          shares == {
              7: [(1, 50.0, 0.4, {"busy_ns": 300000000, "released": 30,
                                  "latency_ns": 12000000})],
              8: [(2, 33.3, 0.65, {"busy_ns": 200000000, "released": 20,
                                   "latency_ns": 13000000})],
              10: [(1, 16.7, 0.5, {"busy_ns": 100000000, "released": 10,
                                   "latency_ns": 5000000})]}, str(shares))
    tenants = {t["tenant"]: ([(e["name"], e["share_pct"])
                              for e in t["engines"]],
                             t["latency_mean_ms"], t["interval"]["released"])
               for t in j["tenants"]}
    check("top: tenant shares and latencies",
          tenants == {"4242": ([("cpu", 50.0)], 0.4, 30),
                      "file 8": ([("cpu", 33.3)], 0.65, 20),
                      "file 10": ([("cpu", 16.7)], 0.5, 10)} and
          near(by(j["tenants"], "tenant", "4242")["released_per_s"], 30, iv),
          str(tenants))
    check("top -n 2: the second frame saw nothing grow",
          len(js) == 2 and
          [q["share_pct"] for c in js[1]["clients"] for q in c["queues"]] ==
          [None, None, None] and
          [c["client_id"] for c in js[1]["clients"]] == [7, 8, 10],
          str(js[1:])[:3000])
tree.close()
tree, change = changing_tree()
Between(tree, change)
text = top(tree, "--once", "-d", "0.3")
expect_exit("top over a changing load (text) exits 0", text, 0)
if js:
    compare_top("top over a changing load: text is the JSON", text.stdout,
                js[0], loose=True)
tree.close()

# Until interrupted: frames until SIGINT, then exit 0; the screen is
# cleared before each frame only on a terminal.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=0)
e = {k: v for k, v in os.environ.items()
     if not k.startswith(("ACCEL_", "ACCELCTL_"))}
e.update(tree.env())
for tty in (False, True):
    what = "on a terminal" if tty else "to a pipe"
    if tty:
        master, slave = pty.openpty()
        out = slave
    else:
        out = subprocess.PIPE
    p = subprocess.Popen([ACCELCTL, "top", "-d", "0.05"], env=e, stdout=out,
                         stderr=subprocess.PIPE)
    if tty:
        os.close(slave)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    if tty:
        chunks = []
        while select.select([master], [], [], 10)[0]:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not b:
                break
            chunks.append(b)
        os.close(master)
        # The terminal reads EIO once the child's files are closed, while
        # it is still exiting: killed then, its status would read SIGKILL
        # (a kill during exit replaces the exit code). Only a child that
        # has not exited 10 s later is hung.
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        stdout = b"".join(chunks).decode()
    else:
        stdout = p.communicate(timeout=10)[0].decode()
    frames = stdout.count("accelsched: 1 engine")
    clears = stdout.count("\033[H\033[2J")
    check(f"top until interrupted, {what}: frames, then exit 0",
          p.returncode == 0 and frames >= 2, f"exit {p.returncode}, "
          f"{frames} frames:\n{stdout[-2000:]}")
    check(f"top until interrupted, {what}: clear screen "
          f"{'before each frame' if tty else 'never'}",
          clears == (frames if tty else 0),
          f"{clears} clears, {frames} frames")
tree.close()

# Processes and fdinfo top may not read, and a module without statistics.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=5)
tree.tenant(77, weight=100, queues=1, jobs=0)
tree.fd(100, 3, fdinfo(3, 77, [("cpu", 5, 1, None, None)]), comm="old")
tree.fd(200, 3, fdinfo(4, 0), comm="secret")
tree.fd(300, 3, fdinfo(5, 0), comm="private")
tree.fd(400, 3, fdinfo(6, 0, [("cpu", 0, 1, None, None)]), comm="own")
os.chmod(os.path.join(tree.proc, "200", "fd"), 0)
os.chmod(os.path.join(tree.proc, "300", "fdinfo", "3"), 0)
user = NOBODY if os.geteuid() == 0 else None
try:
    js = top_json("top with unreadable clients: JSON",
                  top(tree, "--once", "-J", "-d", "0", user=user))
except OSError as e:  # root, but no other user to be here
    skip("top with unreadable clients", f"cannot run as uid {user}: {e}")
    js = None
if js:
    j = js[0]
    check("top counts what it may not read",
          j["unreadable"] == {"processes": 1, "clients": 1} and
          [c["client_id"] for c in j["clients"]] == [3, 6], str(j))
    cpu = j["engines"][0] if j["engines"] else {}
    check("top on a module without statistics: null, not made up",
          cpu.get("total") == {"busy_ns": 5, "released": None,
                               "completed": None, "failed": None,
                               "timedout": None, "latency_ns": None} and
          cpu.get("released_per_s") is None and
          j["tenants"][0]["total"]["busy_ns"] is None and
          j["tenants"][1]["tenant"] == "file 6" and
          j["tenants"][1]["queues"] is None and
          j["clients"][0]["engines"][0]["total"] ==
          {"busy_ns": 5, "released": None, "latency_ns": None}, str(j))
    text = top(tree, "--once", "-d", "0", user=user)
    expect_exit("top with unreadable clients (text)", text, 0,
                "1 process not readable (another user's): run as root",
                "stdout")
    compare_top("top with unreadable clients: text is the JSON",
                text.stdout, j)
tree.close()

# top's -d and -n take whole strings only, as parse_u64() does for the
# tools' integers: a blank before was taken and one after refused.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=0)
for opt, bad in (("-d", (" 1", "1 ", "\t1", "+1", "0x1", "1e0", "inf", "nan",
                         ".", "1.2.3", "-0")),
                 ("-n", (" 1", "1 ", "+1", "-1", "0"))):
    for v in bad:
        expect_exit(f"top {opt} {v!r}: exit 2",
                    top(tree, "-d" if opt == "-n" else "-n", "0" if
                        opt == "-n" else "1", opt, v), 2, "top: bad ")
for args in (("-d", "0.05", "--once"), ("-d", ".05", "--once"),
             ("-d", "0.", "--once"), ("-d", "0", "-n", "2")):
    expect_exit(f"top {' '.join(args)}: exit 0", top(tree, *args), 0)
tree.close()

# ---- output that cannot be written ----------------------------------------


def env_of(extra=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("ACCEL_", "ACCELCTL_"))}
    e.update(extra or {})
    return e


def run_to(args, where, env=None, timeout=10):
    """Run args with stdout closed ("closed"), on /dev/full ("full"), or
    on a pipe whose reader is gone, SIGPIPE ignored ("broken"). Returns
    (exit status, or None if still running after timeout; stderr)."""
    out, pre = None, None
    if where == "full":
        out = open("/dev/full", "wb")
    elif where == "broken":
        r, w = os.pipe()
        os.close(r)
        out = os.fdopen(w, "wb")
        pre = lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    else:
        args = ["sh", "-c", 'exec "$@" >&-', "sh"] + list(args)
    p = subprocess.Popen(args, env=env_of(env), stdout=out,
                         stderr=subprocess.PIPE, preexec_fn=pre)
    if out:
        out.close()
    try:
        err = p.communicate(timeout=timeout)[1].decode(errors="replace")
    except subprocess.TimeoutExpired:
        p.kill()
        return None, p.communicate()[1].decode(errors="replace")
    return p.returncode, err


# top until interrupted stops when its output is gone, rather than loop
# for ever printing frames nobody reads.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=0)
for where in ("closed", "full", "broken"):
    for fmt_args in ((), ("-J",)):
        rc, err = run_to([ACCELCTL, "top", "-d", "0.05", *fmt_args], where,
                         tree.env(), timeout=5)
        check(f"{' '.join(['top', *fmt_args])} until interrupted, stdout {where}: "
              "exit 1, saying why once",
              rc == 1 and err.count("accelctl: cannot write the output") == 1,
              f"exit {rc} (None: still running after 5 s), stderr:\n{err}")
tree.close()

# Every command's output, when it cannot be written: exit 1, saying why.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=0)
with open(os.path.join(tree.dir, "t.txt"), "w") as f:
    f.write("  a-1 [000] ..... 1.0: job_submit: client=1 engine=cpu "
            "queue=1 job=2 prio=1\n")
with tempfile.TemporaryDirectory(prefix="accelctl-cache-") as cache:
    for args in (["info"], ["info", "-j"], ["devices"], ["devices", "-j"],
                 ["top", "--once", "-d", "0"],
                 ["top", "--once", "-d", "0", "-J"],
                 ["calibrate", "--show", "cpu"],
                 ["cdi", "--print", "--device", "/dev/null", "--sysfs",
                  tree.sysfs],
                 ["trace", "-i", os.path.join(tree.dir, "t.txt"), "-o", "-"],
                 ["--help"]):
        for where in ("full", "closed"):
            rc, err = run_to([ACCELCTL, *args], where,
                             dict(tree.env(), ACCEL_CACHE_DIR=cache))
            label = " ".join(args[:3] if args[0] in ("cdi", "trace")
                             else args)
            # The reason is the write's: not EIO for a full disk, though
            # a driver's C++ runtime flushes stdout at exit before we do.
            why = {"full": "No space left on device",
                   "closed": "Bad file descriptor"}[where]
            check(f"{label}, stdout {where}: exit 1, saying why",
                  rc == 1 and err.count("accelctl: cannot write the output: "
                                        + why) == 1,
                  f"exit {rc}, stderr:\n{err}")
tree.close()

# A process names itself: what top prints of a name must neither drive
# the terminal (escape sequences) nor break the JSON (bytes that are not
# UTF-8). Control characters and such bytes show as '?'.
tree = Tree()
tree.engine("cpu\x1b[2J", credits=1, in_flight=0, busy_ns=0)
tree.fd(100, 3, fdinfo(7, 0, [("cpu\x1b[2J", 5, 1, 0, 0)],
                       [queue(1, "cpu\x1b[2J", "hi\x07gh")]))
tree.fd(200, 3, fdinfo(8, 0), comm="h\u00e9llo \u20ac")
with open(os.path.join(tree.proc, "100", "comm"), "wb") as f:
    f.write(b"\x1b]0;pwned\x07\xff\xc2\x9b\x7fz\n")
raw = subprocess.run([ACCELCTL, "top", "--once", "-d", "0"],
                     env=env_of(tree.env()), capture_output=True, timeout=30)
check("top: no control character of a name reaches the terminal",
      raw.returncode == 0 and
      not any(b < 0x20 and b != 0x0a for b in raw.stdout) and
      b"\x7f" not in raw.stdout and b"\xc2\x9b" not in raw.stdout and
      b"?]0;pwned????z" in raw.stdout and
      b"cpu?[2J" in raw.stdout and b"hi?gh" in raw.stdout and
      "h\u00e9llo \u20ac".encode() in raw.stdout,
      f"exit {raw.returncode}:\n{raw.stdout!r}")
raw = subprocess.run([ACCELCTL, "top", "--once", "-d", "0", "-J"],
                     env=env_of(tree.env()), capture_output=True, timeout=30)
try:
    j = json.loads(raw.stdout.decode("utf-8"))
    c = {c["client_id"]: c for c in j["clients"]}
    check("top -J: a name that is not UTF-8 still makes a JSON line",
          c[7]["comm"] == "?]0;pwned????z" and
          c[8]["comm"] == "h\u00e9llo \u20ac" and
          c[7]["queues"][0]["engine"] == "cpu?[2J" and
          c[7]["queues"][0]["priority"] == "hi?gh" and
          j["engines"][0]["name"] == "cpu?[2J", str(j))
except (ValueError, KeyError, IndexError) as e:
    check("top -J: a name that is not UTF-8 still makes a JSON line", False,
          f"{e}:\n{raw.stdout!r}")
tree.close()

# Files that are not what a tree holds (a FIFO, a device, a huge file):
# top reads only small regular files, so none can hold it or feed it for
# ever; what they stood for is left out, or null.
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=7, released=1)
os.unlink(os.path.join(tree.sysfs, "engines", "cpu", "busy_ns"))
os.mkfifo(os.path.join(tree.sysfs, "engines", "cpu", "busy_ns"))
tree.fd(100, 3, fdinfo(7, 0), comm="fine")
tree.fd(200, 3, fdinfo(8, 0), comm="zero")
tree.fd(300, 3, fdinfo(9, 0), comm="fifo")
tree.fd(400, 3, fdinfo(10, 0) + "x" * (300 * 1024) + "\n", comm="huge")
tree.fd(500, 3, fdinfo(11, 0))
zero = os.path.join(tree.proc, "200", "fdinfo", "3")
os.unlink(zero)
os.symlink("/dev/zero", zero)
os.unlink(os.path.join(tree.proc, "300", "fdinfo", "3"))
os.mkfifo(os.path.join(tree.proc, "300", "fdinfo", "3"))
os.unlink(os.path.join(tree.proc, "500", "comm"))
os.mkfifo(os.path.join(tree.proc, "500", "comm"))
try:
    js = top_json("top on FIFOs, /dev/zero and a huge fdinfo: JSON",
                  run(ACCELCTL, "top", "--once", "-d", "0", "-J",
                      env=tree.env()))
except subprocess.TimeoutExpired:
    check("top on FIFOs, /dev/zero and a huge fdinfo: JSON", False,
          "still running after 30 s")
    js = None
if js:
    j = js[0]
    check("top: what is not a small regular file is left out",
          [(c["client_id"], c["comm"]) for c in j["clients"]] ==
          [(7, "fine"), (11, "?")] and
          j["engines"][0]["total"]["busy_ns"] is None and
          j["engines"][0]["total"]["released"] == 1, str(j))
e = env_of(tree.env())
p = subprocess.Popen([ACCELCTL, "top", "-d", "0.05"], env=e,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(0.5)
p.send_signal(signal.SIGTERM)
try:
    p.wait(timeout=5)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
check("top on /dev/zero as an fdinfo: SIGTERM still stops it, exit 0",
      p.returncode == 0, f"exit {p.returncode} (-9: killed after 5 s)")
p.stderr.close()
tree.close()

# cdi -o onto a FIFO: not a spec, so not replaced, and not waited on.
with tempfile.TemporaryDirectory(prefix="accelctl-cdi-") as d:
    os.makedirs(os.path.join(d, "sys", "engines", "cpu"))
    fifo = os.path.join(d, "spec.json")
    os.mkfifo(fifo)
    try:
        r = run(ACCELCTL, "cdi", "-o", fifo, "--device", "/dev/null",
                "--sysfs", os.path.join(d, "sys"))
        expect_exit("cdi -o onto a FIFO exits 1, leaving it", r, 1,
                    "exists and is not a spec of this kind")
        check("cdi -o onto a FIFO: still the FIFO",
              stat.S_ISFIFO(os.lstat(fifo).st_mode), "replaced")
    except subprocess.TimeoutExpired:
        check("cdi -o onto a FIFO exits 1, leaving it", False,
              "still running after 30 s")

# calibrate where the cache cannot keep anything: measured, but not the
# device's for later processes, so a failure naming the directory; with
# the cache turned off on purpose, measured and not kept, as documented.
with tempfile.TemporaryDirectory(prefix="accelctl-calibrate-") as d:
    afile = os.path.join(d, "a-file")
    open(afile, "w").close()
    loop = os.path.join(d, "loop")
    os.symlink(loop, loop)
    for what, cache in (("a regular file", afile), ("a symlink loop", loop)):
        r = run(ACCELCTL, "calibrate", "-j", "cpu",
                env={"ACCEL_CACHE_DIR": cache})
        try:
            dev = json.loads(r.stdout)["devices"][0]
        except (ValueError, KeyError, IndexError):
            dev = {}
        check(f"calibrate with ACCEL_CACHE_DIR {what}: exit 1, naming it",
              r.returncode == 1 and dev.get("error") and
              f"could not be stored in the cache directory {cache}"
              in dev["error"], f"exit {r.returncode}:\n{r.stdout}{r.stderr}")
    r = run(ACCELCTL, "calibrate", "cpu", env={"ACCEL_CACHE_DIR": afile})
    expect_exit("calibrate (text) with a cache that cannot store: exit 1",
                r, 1, "cpu://0: failed: measured, but the calibration "
                "could not be stored", "stdout")
    r = run(ACCELCTL, "calibrate", "cpu",
            env={"ACCEL_CACHE_DIR": afile, "ACCEL_CACHE_DISABLE": "1"})
    expect_exit("calibrate with ACCEL_CACHE_DISABLE: measured, exit 0", r,
                0, "cpu://0 (calibrated)", "stdout")

# trace --input: a line of one of the module's events is read whole, or
# refused naming the line; a priority no event said is unknown.
def trace_input(text):
    return subprocess.run([ACCELCTL, "trace", "-i", "-", "-o", "-"],
                          input=text, env=env_of(), capture_output=True,
                          text=True, timeout=30)


HEAD = "  app-1 [000] ..... 1.000000: "
for what, line in (
        ("an unknown field", "job_submit: client=1 engine=cpu queue=1 "
         "job=2 prio=1 bogus=3"),
        ("a word that is no field", "job_complete: client=1 engine=cpu "
         "queue=1 job=2 status=0 device_ns=5 predicted_ns=0 extra"),
        ("no fields at all", "job_submit:"),
        ("no fields, a space after", "job_fail: ")):
    r = trace_input(HEAD + line + "\n")
    expect_exit(f"trace -i: a line with {what} exits 1, naming the line", r,
                1, "-:1: a job_")
r = trace_input(HEAD + "job_submit: client=1 engine=cpu queue=1 job=2 "
                "prio=1\n" + HEAD + "job_wait: client=1 queue=1 job=2 "
                "fence=3:4\n" + HEAD + "job_complete: client=1 engine=cpu "
                "queue=1 job=2 status=0 device_ns=5\n")
expect_exit("trace -i: known fields (predicted_ns optional) exit 0", r, 0)
r = trace_input(HEAD + "job_fail: client=1 engine=cpu queue=1 job=2 "
                "error=-67\n")
try:
    tj = json.loads(r.stdout)
    args = [e["args"] for e in tj["traceEvents"]
            if e.get("ph") == "X" and e["name"].startswith("job 2")]
    names = [e["args"]["name"] for e in tj["traceEvents"]
             if e.get("name") == "thread_name"]
    check("trace -i: a job seen only failing has no made-up priority",
          r.returncode == 0 and args and args[0]["priority"] is None and
          "queue 1 (?)" in names, f"exit {r.returncode}: {args} {names}")
except (ValueError, KeyError) as e:
    check("trace -i: a job seen only failing has no made-up priority",
          False, f"{e}: {r.stdout}{r.stderr}")

# trace: a tracefs not mounted is not a module not loaded (modprobe would
# not fix it). A plain folder as --tracing is a tracefs not mounted; the
# host's mounted tracefs, without the module's events, is the module not
# loaded.
with tempfile.TemporaryDirectory(prefix="accelctl-trace-") as d:
    os.makedirs(os.path.join(d, "tracing", "events"))
    r = run(ACCELCTL, "trace", "-d", "1", "-o", os.path.join(d, "t.json"),
            "--tracing", os.path.join(d, "tracing"))
    if "built without libtracefs" in r.stderr:
        skip("trace on a folder that is not tracefs: says to mount it",
             "accelctl built without libtracefs")
    else:
        expect_exit("trace on a folder that is not tracefs: says to mount it",
                    r, 1, f"tracefs is not mounted on {d}/tracing: mount it "
                    f"with 'mount -t tracefs nodev {d}/tracing'")
        check("trace on a folder that is not tracefs: no modprobe advice",
              "modprobe" not in r.stderr, r.stderr)
    with open("/proc/self/mounts") as f:
        mounted = any(line.split()[1:3] == ["/sys/kernel/tracing", "tracefs"]
                      for line in f)
    ev = "/sys/kernel/tracing/events"
    if "built without libtracefs" in r.stderr:
        skip("trace without the module's events: modprobe",
             "accelctl built without libtracefs")
    elif not mounted or not os.access(ev, os.R_OK | os.X_OK):
        skip("trace without the module's events: modprobe",
             "no tracefs mounted on /sys/kernel/tracing that we may read")
    elif os.path.exists(os.path.join(ev, "accelsched")):
        skip("trace without the module's events: modprobe",
             "the accelsched module is loaded")
    else:
        expect_exit("trace without the module's events: modprobe",
                    run(ACCELCTL, "trace", "-d", "1", "-o",
                        os.path.join(d, "t.json"), "--tracing",
                        "/sys/kernel/tracing"), 1,
                    "events/accelsched does not exist: the accelsched module "
                    "is not loaded (modprobe accelsched)")

# cdi: a --sysfs folder that is not there is no module, not one without
# engines.
with tempfile.TemporaryDirectory(prefix="accelctl-cdi-") as d:
    afile = os.path.join(d, "a-file")
    open(afile, "w").close()
    for what, sysfs in (("a missing folder", os.path.join(d, "none")),
                        ("a file", afile)):
        r = run(ACCELCTL, "cdi", "--print", "--device", "/dev/null",
                "--sysfs", sysfs)
        expect_exit(f"cdi --sysfs of {what} exits 1, naming it", r, 1,
                    f"accelctl: cdi: {sysfs}: ")
        check(f"cdi --sysfs of {what}: no spec printed", r.stdout == "",
              r.stdout)
    expect_exit("cdi --sysfs '' is a usage error",
                run(ACCELCTL, "cdi", "--print", "--device", "/dev/null",
                    "--sysfs", ""), 2, "cdi: --sysfs needs a folder")
    r = run(ACCELCTL, "cdi", "--print", "--device", "/dev/null", "--sysfs", d)
    expect_exit("cdi --sysfs of a folder without engines/ exits 0", r, 0)

# cdi -o - is standard output, as trace -o - is: the spec --print
# prints, and no file named '-'; ./- is such a file.
with tempfile.TemporaryDirectory(prefix="accelctl-cdi-") as d:
    args = [os.path.abspath(ACCELCTL), "cdi", "--device", "/dev/null",
            "--sysfs", d]
    r = subprocess.run(args + ["-o", "-"], cwd=d, env=env_of(),
                       capture_output=True, text=True, timeout=30)
    p = subprocess.run(args + ["--print"], cwd=d, env=env_of(),
                       capture_output=True, text=True, timeout=30)
    check("cdi -o -: the spec on standard output, as --print",
          r.returncode == 0 and p.returncode == 0 and r.stdout == p.stdout
          and '"cdiVersion"' in r.stdout, f"exit {r.returncode}:\n"
          f"{r.stdout}{r.stderr}")
    check("cdi -o -: no file named '-'",
          not os.path.exists(os.path.join(d, "-")), str(os.listdir(d)))
    r = subprocess.run(args + ["-o", "./-"], cwd=d, env=env_of(),
                       capture_output=True, text=True, timeout=30)
    check("cdi -o ./-: a file named '-'",
          r.returncode == 0 and os.path.isfile(os.path.join(d, "-")),
          f"exit {r.returncode}: {r.stderr}")
    expect_exit("cdi -o - --print: one output only",
                run(*args, "-o", "-", "--print"), 2, "cdi: give one of -o, --dynamic and --print")

# --once is one frame: with another -n, neither silently wins.
tree = Tree()
expect_exit("top --once -n 5: a usage error", top(tree, "--once", "-n", "5"), 2,
            "top: --once is one frame, -n asks for 5; give one of them")
r = top(tree, "--once", "-n", "1", "-d", "0", "-J")
check("top --once -n 1: one frame", r.returncode == 0 and
      len(r.stdout.splitlines()) == 1, f"exit {r.returncode}: {r.stdout}{r.stderr}")
tree.close()

# A client is found by the device's number, whatever the names: the device
# given as a symlink, a path with "/./" and "//", or a relative one, and an
# fd opened through another name of the same node. It was found by the
# name alone, and any of these found no client, silently. /dev/null plays
# the device (the fake fd links point at real nodes here).
tree = Tree()
tree.engine("cpu", credits=1, in_flight=0, busy_ns=0, released=0,
            completed=0, failed=0, timedout=0, latency_ns=0)
alias = os.path.join(tree.dir, "dev-alias")
os.symlink("/dev/null", alias)
tree.fd(700, 3, fdinfo(17, 0), comm="by-alias", target=alias)
tree.fd(701, 3, fdinfo(18, 0), comm="by-dotdot", target="/dev/./null")
tree.fd(702, 3, "drm-driver:\taccelsched\ndrm-client-id:\t19\n",
        comm="other-node", target="/dev/zero")
for name, device, cwd in (("a symlink", alias, None),
                          ("/dev/./null", "/dev/./null", None),
                          ("//dev//null", "//dev//null", None),
                          ("a relative path", "../dev/null", "/tmp")):
    r = subprocess.run([os.path.abspath(ACCELCTL), "top", "--once", "-d", "0", "-J"], cwd=cwd,
                       env=env_of(tree.env() | {"ACCEL_DEVICE": device}),
                       capture_output=True, text=True, timeout=30)
    try:
        ids = sorted(c["client_id"] for c in json.loads(r.stdout)["clients"])
    except (ValueError, KeyError) as e:
        ids = f"{e}: {r.stdout} {r.stderr}"
    check(f"top: clients found by the device's number, device as {name}",
          ids == [17, 18], str(ids))
tree.close()

# cdi -o into a path where a file stands for a folder: mkdir -p would
# fail on it too, so it is named as no folder; a missing folder is still
# one to create.
with tempfile.TemporaryDirectory(prefix="accelctl-cdi-") as d:
    afile = os.path.join(d, "a-file")
    open(afile, "w").close()
    for what, out in (("a file as its folder", "x.json"),
                      ("a file above its folder", "sub/x.json")):
        r = run(ACCELCTL, "cdi", "-o", os.path.join(afile, out), "--device",
                "/dev/null", "--sysfs", d)
        expect_exit(f"cdi -o with {what}: exit 1, naming the file", r, 1,
                    f"accelctl: cdi: {afile} is not a folder")
        check(f"cdi -o with {what}: no mkdir -p advice",
              "mkdir" not in r.stderr, r.stderr)
    expect_exit("cdi -o in a missing folder: mkdir -p",
                run(ACCELCTL, "cdi", "-o", os.path.join(d, "no", "x.json"),
                    "--device", "/dev/null", "--sysfs", d), 1,
                f"create it (mkdir -p {d}/no)")

print(f"1..{len(results)}")
sys.exit(0 if all(results) else 1)
