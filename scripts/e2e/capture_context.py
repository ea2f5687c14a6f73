#!/usr/bin/env python3
"""Captures what the real Claude Code sends for the context fixture.

Usage: capture_context.py CLAUDE OUT_DIR [--spec SPEC] [--fixtures DIR]
                           [--ctx-build CTX_BUILD]

CLAUDE is the claude binary (a pinned version from npm, e.g.
~/.cache/fsview-e2e/claude-code-2.1.332/node_modules/.bin/claude). For each
run (`root`: started at the top of the fixture repository, `api`: started in
packages/api) it builds a fresh fixture tree (context_fixture.py) in
OUT_DIR/RUN/tree, starts context_capture_server.py, runs

    claude -p hi --output-format stream-json --verbose

headless with a private HOME and CLAUDE_CONFIG_DIR, and lets the scripted
model Read the spec's `read` file once so the nested instruction files
arrive. When the spec has managed files, Claude Code must find them in
/etc/claude-code: claude then runs in a private mount namespace
(`unshare -m`, so root is needed) where /etc is an overlay holding the
fixture's managed directory as /etc/claude-code; the real /etc is never
written. The request bodies land in OUT_DIR/RUN/requests/NNN-*.json; the
claude output in OUT_DIR/RUN/claude.jsonl and claude.stderr. Prints one line
per run. Exit 0 when every run produced a first request and a request after
the Read, else 1.

With --fixtures DIR it also writes, per run, the first request body as
DIR/claude-code-VERSION-RUN-first-request.json and the messages the Read
added (the model's tool call, then the tool result and the nested files) as
DIR/claude-code-VERSION-RUN-after-read.json, redacted of what is
machine-specific: the fixture's top directory becomes {{ROOT}}, the date
{{DATE}}, the commit id {{COMMIT}}, the OS version {{OS_VERSION}}, the
device and session ids {{USER_ID}}, the top directory's slug in the
auto-memory path {{ROOT_SLUG}}. /etc/claude-code stays as Claude Code
wrote it.

With --ctx-build CTX_BUILD it then runs `CTX_BUILD --json --for READ` in
each run's tree, in the same environment (FSVIEW_MANAGED_DIR set to the
fixture's managed directory, a fresh session file), as OUT_DIR/RUN/ctx-build.json,
and compares it with what Claude Code sent (compare_context.py); the exit
status is then 1 when a comparison found a difference. Python 3 standard
library only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = {"root": ".", "api": "packages/api"}


def wait_for(path, seconds=10):
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def run_one(claude, out, name, rel_cwd, spec_path, spec):
    top = os.path.join(out, name)
    if os.path.exists(top):
        shutil.rmtree(top)
    tree = os.path.join(top, "tree")
    requests = os.path.join(top, "requests")
    os.makedirs(requests)
    subprocess.run([sys.executable, os.path.join(HERE, "context_fixture.py"), tree, spec_path],
                   check=True)
    work = os.path.join(tree, "work")
    read = os.path.join(work, spec["read"])
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "context_capture_server.py"),
                               requests, "--read", read])
    try:
        if not wait_for(os.path.join(requests, "port")):
            return f"{name}: the capture server did not start"
        with open(os.path.join(requests, "port")) as f:
            port = f.read().strip()
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": os.path.join(tree, "home"),
            "CLAUDE_CONFIG_DIR": os.path.join(tree, "home", ".claude"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "x",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }
        argv = [claude, "-p", "hi", "--output-format", "stream-json", "--verbose"]
        if spec.get("managed"):
            upper, scratch = os.path.join(top, "etc-upper"), os.path.join(top, "etc-work")
            shutil.copytree(os.path.join(tree, "managed"), os.path.join(upper, "claude-code"))
            os.makedirs(scratch)
            mount = ("mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc"
                     ' && exec "$@"' % (upper, scratch))
            argv = ["unshare", "-m", "sh", "-c", mount, "sh", *argv]
        with open(os.path.join(top, "claude.jsonl"), "wb") as so, \
                open(os.path.join(top, "claude.stderr"), "wb") as se:
            rc = subprocess.run(argv, cwd=os.path.join(work, rel_cwd), env=env,
                                stdin=subprocess.DEVNULL, stdout=so, stderr=se,
                                timeout=300).returncode
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    bodies = sorted(f for f in os.listdir(requests) if f.endswith("-v1_messages.json"))
    ok = rc == 0 and len(bodies) >= 2
    return f"{name}: claude exited {rc}, {len(bodies)} message requests" + ("" if ok else " (expected 2)"), ok


def redact(text, top, commit):
    text = text.replace(top, "{{ROOT}}")
    # The project's slug in Claude Code's auto-memory directory.
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", top), "{{ROOT_SLUG}}")
    text = re.sub(r"Today's date is \d{4}-\d{2}-\d{2}\.", "Today's date is {{DATE}}.", text)
    text = re.sub(r"(OS Version: )[^\\\n\"]*", r"\1{{OS_VERSION}}", text)
    # Not \b: in JSON the id follows the "n" of an escaped line break.
    text = re.sub(r"(?<![0-9a-f])%s(?![0-9a-f])" % re.escape(commit), "{{COMMIT}}", text)
    return text


def write_fixtures(claude, out, name, fixtures):
    top = os.path.join(out, name)
    tree = os.path.join(top, "tree")
    requests = os.path.join(top, "requests")
    version = subprocess.run([claude, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[0]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=os.path.join(tree, "work"),
                            capture_output=True, text=True, check=True).stdout.strip()
    bodies = sorted(f for f in os.listdir(requests) if f.endswith("-v1_messages.json"))
    with open(os.path.join(requests, bodies[0]), encoding="utf-8") as f:
        first = json.load(f)
    with open(os.path.join(requests, bodies[1]), encoding="utf-8") as f:
        after = {"messages": json.load(f)["messages"][-2:]}
    first.get("metadata", {})["user_id"] = "{{USER_ID}}"
    os.makedirs(fixtures, exist_ok=True)
    for what, body in (("first-request", first), ("after-read", after)):
        text = json.dumps(body, indent=1, ensure_ascii=False) + "\n"
        path = os.path.join(fixtures, f"claude-code-{version}-{name}-{what}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(redact(text, tree, commit))
        print(f"{name}: wrote {path}")


def compare(ctx_build, out, name, rel_cwd, spec):
    top = os.path.join(out, name)
    tree = os.path.join(top, "tree")
    work = os.path.join(tree, "work")
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": os.path.join(tree, "home"),
        "CLAUDE_CONFIG_DIR": os.path.join(tree, "home", ".claude"),
        "FSVIEW_MANAGED_DIR": os.path.join(tree, "managed"),
        "FSVIEW_SESSION": os.path.join(top, "session.db"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    result = os.path.join(top, "ctx-build.json")
    with open(result, "wb") as so:
        rc = subprocess.run([ctx_build, "--json", "--for", os.path.join(work, spec["read"])],
                            cwd=os.path.join(work, rel_cwd), env=env, stdin=subprocess.DEVNULL,
                            stdout=so, stderr=subprocess.DEVNULL).returncode
    if rc != 0:
        print(f"{name}: ctx-build exited {rc}")
        return False
    requests = os.path.join(top, "requests")
    bodies = sorted(f for f in os.listdir(requests) if f.endswith("-v1_messages.json"))
    print(f"{name}: Claude Code and ctx-build compared")
    rc = subprocess.run([sys.executable, os.path.join(HERE, "compare_context.py"),
                         "--first", os.path.join(requests, bodies[0]),
                         "--after-read", os.path.join(requests, bodies[1]),
                         "--ctx-build", result,
                         "--map", f"/etc/claude-code={os.path.join(tree, 'managed')}"]).returncode
    return rc == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("claude")
    ap.add_argument("out")
    ap.add_argument("--spec", default=os.path.join(HERE, "..", "..", "tests", "fixtures",
                                                   "context", "tree.json"))
    ap.add_argument("--fixtures")
    ap.add_argument("--ctx-build", dest="ctx_build")
    a = ap.parse_args()
    claude, out = os.path.abspath(a.claude), os.path.abspath(a.out)
    ctx_build = os.path.abspath(a.ctx_build) if a.ctx_build else None
    try:
        with open(a.spec, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        print(f"capture_context: cannot read the spec {a.spec}: {e}", file=sys.stderr)
        sys.exit(2)
    all_ok = True
    for name, rel in RUNS.items():
        result = run_one(claude, out, name, rel, a.spec, spec)
        if isinstance(result, str):
            print(result)
            all_ok = False
            continue
        line, ok = result
        print(line)
        all_ok = all_ok and ok
        if ok and a.fixtures:
            write_fixtures(claude, out, name, a.fixtures)
        if ok and ctx_build:
            all_ok = compare(ctx_build, out, name, rel, spec) and all_ok
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
