#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The command-line contract of accelctl and hello-scheduler.

usage: accelctl_cli.py ACCELCTL HELLO_SCHEDULER FAKE_ACCEL_INFO_SO

Checks exit codes (0 success, 1 failure, 2 usage error), that `info -j` is
valid JSON holding everything `info` prints as text, and that the example
runs. Prints TAP; exits 1 if any check failed.
"""
import json
import os
import subprocess
import sys

ACCELCTL, HELLO, FAKE_SO = sys.argv[1], sys.argv[2], sys.argv[3]
results = []


def run(*args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ACCEL_")}
    e.update(env or {})
    return subprocess.run(list(args), env=e, capture_output=True, text=True,
                          timeout=30)


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
        pairs.append(("module", "none"))
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

print(f"1..{len(results)}")
sys.exit(0 if all(results) else 1)
