"""What every end-to-end suite shares: a scratch workspace per run, the
fsview binaries, checks that collect failures instead of stopping at the
first, a results table, and running scenarios side by side.

A scenario is a function `scenario(run)` where `run` is a Run: it holds a
fresh workspace (a git work tree and a private HOME), says whether fsview is
wired in (`run.fsview`), and collects what the agent did (`run.step(...)`)
and what went wrong (`run.check(...)`). Each scenario runs twice, alone and
with fsview, so the table shows what fsview changes. Python 3 standard
library only.
"""

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Skip(Exception):
    """The suite cannot run here (no npm, no network): say so, do not fail."""


def fsview_bin_dir(build=True):
    """The directory of the built fsview binaries ($FSVIEW_BIN_DIR, else
    target/debug, built with cargo when missing)."""
    d = os.environ.get("FSVIEW_BIN_DIR") or os.path.join(ROOT, "target", "debug")
    if build and not os.path.exists(os.path.join(d, "fsview-hook")):
        subprocess.run(["cargo", "build", "--quiet", "--bins"], cwd=ROOT, check=True)
    return os.path.abspath(d)


class Workspace:
    """A temporary directory holding `home/` (HOME, with the agent's config
    directory) and `work/` (a git work tree with one commit), removed at
    the end unless kept."""

    def __init__(self, name, keep=False):
        self.root = tempfile.mkdtemp(prefix="fsview-e2e-%s-" % name)
        self.keep = keep
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.home)
        os.makedirs(self.work)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "E2E")
        self.git("config", "user.email", "e2e@example.com")

    def git(self, *args):
        return subprocess.run(["git", *args], cwd=self.work, check=True, capture_output=True, text=True).stdout

    def commit(self, message="fixture"):
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def path(self, rel):
        return os.path.join(self.work, rel)

    def write(self, rel, text, mtime_of=None):
        """Write `text` (str or bytes) at `rel`; with `mtime_of`, put back
        that (mtime, atime) pair afterwards, as `touch -r` or `cp -p` do."""
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        if mtime_of is not None:
            os.utime(p, ns=mtime_of)
        return p

    def read(self, rel):
        with open(self.path(rel), "rb") as f:
            return f.read().decode("utf-8", "replace")

    def times(self, rel):
        st = os.stat(self.path(rel))
        return (st.st_atime_ns, st.st_mtime_ns)

    def close(self):
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


class Run:
    """One run of a scenario: alone or with fsview."""

    def __init__(self, scenario, fsview, keep=False):
        self.scenario = scenario
        self.fsview = fsview
        self.ws = Workspace(scenario, keep)
        self.steps = []  # (step, what happened)
        self.failures = []
        self.notes = []

    @property
    def label(self):
        return "with fsview" if self.fsview else "alone"

    def step(self, name, what):
        self.steps.append((name, what))

    def check(self, cond, message):
        if not cond:
            self.failures.append("%s (%s): %s" % (self.scenario, self.label, message))
        return cond

    def eq(self, got, want, message):
        return self.check(got == want, "%s: got %r, want %r" % (message, got, want))

    def note(self, text):
        self.notes.append(text)


def run_scenarios(scenarios, jobs=2, keep=False, only=None, log=sys.stderr):
    """Run every scenario alone and with fsview, `jobs` at a time. Returns
    the runs in order."""
    todo = []
    for name, fn, modes in scenarios:
        if only and not any(o in name for o in only):
            continue
        for fsview in modes:
            todo.append((name, fn, fsview))

    def one(item):
        name, fn, fsview = item
        run = Run(name, fsview, keep)
        t = time.time()
        try:
            fn(run)
        except Exception:
            run.failures.append("%s (%s): crashed:\n%s" % (name, run.label, traceback.format_exc()))
        run.seconds = time.time() - t
        status = "ok" if not run.failures else "FAILED"
        print("e2e: %-28s %-12s %s (%.1f s)%s" % (name, run.label, status, run.seconds,
                                                 "  kept in " + run.ws.root if keep else ""), file=log, flush=True)
        run.ws.close()
        return run

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, todo))


def table(runs, agent="the agent"):
    """A Markdown table: each step of each scenario, what `agent` did alone
    and with fsview."""
    rows = {}
    order = []
    for r in runs:
        for step, what in r.steps:
            key = (r.scenario, step)
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key][r.label] = what
    lines = ["| scenario | step | %s alone | with fsview |" % agent, "|---|---|---|---|"]
    for key in order:
        cell = rows[key]
        lines.append("| %s | %s | %s | %s |" % (key[0], key[1], cell.get("alone", "-"), cell.get("with fsview", "-")))
    return "\n".join(lines)


def dump(obj):
    return json.dumps(obj, indent=1, ensure_ascii=False)
