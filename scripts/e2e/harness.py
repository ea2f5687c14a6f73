"""What every end-to-end suite shares: a scratch workspace per run, the
fsview binaries, the pinned agent installed from npm into a cache
(`npm_ensure`), checks that collect failures instead of stopping at the
first, a results table, running scenarios side by side, and a command line
(`main`) for a suite's script.

A scenario is a function `scenario(run)` where `run` is a Run: it holds a
fresh workspace (a git work tree and a private HOME), says whether fsview is
wired in (`run.fsview`), and collects what the agent did (`run.step(...)`)
and what went wrong (`run.check(...)`). Each scenario runs twice, alone and
with fsview, so the table shows what fsview changes. Python 3 standard
library only.
"""

import concurrent.futures
import errno
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


def cargo_target_dir():
    """Where cargo builds this checkout, as cargo says it
    (CARGO_TARGET_DIR, build.target-dir, else target/)."""
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["target_directory"]


def fsview_bin_dir(build=True):
    """The directory of the built fsview binaries ($FSVIEW_BIN_DIR, else
    the debug build where cargo builds, built with cargo when missing)."""
    d = os.environ.get("FSVIEW_BIN_DIR") or os.path.join(cargo_target_dir(), "debug")
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
        for wired in modes:
            todo.append((name, fn, wired))

    def one(item):
        name, fn, wired = item
        run = Run(name, wired, keep)
        t = time.time()
        try:
            fn(run)
        except Exception:
            run.failures.append("%s (%s): crashed:\n%s" % (name, run.label, traceback.format_exc()))
        run.seconds = time.time() - t
        if run.failures and wired:
            # What fsview saw and answered, for a failure that does not
            # come back when run again (a transcript written late on a
            # loaded machine): the conversation's events, newest last.
            try:
                out = fsview(run.ws, "fsview-session", "events", "--limit", "60")
                if out.stdout.strip():
                    run.note("fsview's events:\n" + out.stdout.rstrip())
            except Exception as e:
                run.note("fsview's events: not read: %s" % e)
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


def cache_root():
    """Where pinned agents are installed: $FSVIEW_E2E_CACHE, else
    ~/.cache/fsview-e2e (never the repository)."""
    return os.environ.get("FSVIEW_E2E_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "fsview-e2e")


def _version_of(binary, parse, env=None):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120, env=env,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # pi prints its version on stderr.
    text = out.stdout if out.stdout.strip() else out.stderr
    return parse(text) if out.returncode == 0 and text.strip() else None


def npm_ensure(package, version, name, binary, parse_version=lambda out: out.split()[-1], log=None, env=None):
    """The path of `binary` (a name in node_modules/.bin, or a path inside
    node_modules) from npm `package`@`version`, installed into
    CACHE/NAME-VERSION when missing (once: a concurrent run waits for the
    same install). `binary --version` runs in `env` (default: ours) and
    `parse_version` reads its output. Raises Skip when npm cannot install it
    here."""
    d = os.path.join(cache_root(), "%s-%s" % (name, version))
    # A package without a bin entry (a platform package holding a native
    # binary) names its binary by its path inside node_modules.
    path = os.path.join(d, "node_modules", *(binary.split("/") if "/" in binary else [".bin", binary]))
    if os.path.exists(path) and _version_of(path, parse_version, env) == version:
        return path
    npm = shutil.which("npm")
    if not npm:
        raise Skip("npm is not installed, so %s %s cannot be installed into %s" % (package, version, d))
    # A quick look first: an unreachable registry makes npm install retry
    # for minutes.
    try:
        p = subprocess.run([npm, "view", "%s@%s" % (package, version), "version", "--fetch-timeout=15000",
                            "--fetch-retries=0"], capture_output=True, text=True, timeout=60)
        reachable = p.returncode == 0 and p.stdout.strip() == version
    except subprocess.TimeoutExpired:
        reachable = False
    if not reachable:
        raise Skip("the npm registry does not answer for %s@%s, so it cannot be installed into %s"
                   % (package, version, d))
    os.makedirs(d, exist_ok=True)
    if log:
        print("e2e: installing %s@%s into %s" % (package, version, d), file=log, flush=True)
    try:
        p = subprocess.run([npm, "install", "--prefix", d, "--no-audit", "--no-fund", "--save-exact",
                            "%s@%s" % (package, version)], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise Skip("npm install of %s@%s timed out (is the registry reachable?)" % (package, version))
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise Skip("npm install of %s@%s failed (is the registry reachable?): %s" % (package, version, last))
    got = _version_of(path, parse_version, env)
    if got != version:
        raise Skip("npm installed %s, which says its version is %r, not %s" % (path, got, version))
    return path


def lines(n, width=0, fmt="line %d"):
    """`n` numbered lines, each padded to `width`, each ending in a
    newline."""
    return "".join((fmt % i).ljust(width) + "\n" for i in range(1, n + 1))


def install_fsview(agent, cwd, env, extra=(), binary=None):
    """Wire fsview into `agent` as a user would: `fsview-hook install
    AGENT` (the built one, or `binary`: a copy a scenario then deletes).
    A copy just written may be busy for a moment: a scenario on another
    thread that forks while the copy is open for writing holds that
    descriptor until its child execs, and exec then fails with ETXTBSY;
    tried again for up to a second, as cargo does."""
    exe = binary or os.path.join(fsview_bin_dir(), "fsview-hook")
    deadline = time.monotonic() + 1
    while True:
        try:
            p = subprocess.run([exe, "install", agent, *extra], cwd=cwd, env=env,
                               capture_output=True, text=True)
            break
        except OSError as e:
            if e.errno != errno.ETXTBSY or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    if p.returncode != 0:
        raise RuntimeError("fsview-hook install %s failed: %s" % (agent, p.stderr))
    return p.stdout


def fsview(ws, tool, *args, env=None):
    """Run an fsview tool in the workspace's work tree, with the default
    session file the hooks use."""
    e = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": ws.home, "LANG": "C.UTF-8"}
    e.update(env or {})
    return subprocess.run([os.path.join(fsview_bin_dir(), tool), *args], cwd=ws.work, env=e,
                          capture_output=True, text=True)


def views(ws, sid):
    """fsview's views of session `sid`, by path relative to the work tree."""
    out = {}
    for line in fsview(ws, "fsview-session", "show", "--sid", sid, "--json").stdout.splitlines():
        v = json.loads(line)
        out.setdefault(v["path"], []).append(v)
    return out


def kinds(ws, sid, rel):
    """The kinds of the views of `rel` in session `sid`, with their first
    line and count: [(kind, offset, lines)]."""
    return [(v["kind"], v["offset"], v["lines"]) for v in views(ws, sid).get(rel, [])]


def hook_payloads(path):
    """The payloads a capturing hook appended to `path` (one JSON object
    each, separated by newlines)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def capture_command(path):
    """A hook command that appends its payload to `path`."""
    return "tee -a %s >/dev/null; printf '\\n' >> %s" % (path, path)


# What the names of the fixtures of captures of their own hold: the
# shell's (scripts/e2e/shell.py), opencode's apply_patch.
SHELL_FIXTURES = "_shell_"
OWN_FIXTURES = (SHELL_FIXTURES, "_apply_patch_")


def save_fixtures(fixtures, agent, version, ws, sid, prefix=None):
    """Write captured payloads (name -> payload) to
    tests/fixtures/hooks/AGENT-VERSION/NAME.json, with the workspace's
    paths and the session id as placeholders (@CWD@, @HOME@, @ROOT@,
    @SID@). The fixtures there before are removed first: all of them, or
    with `prefix`, those whose name holds it (a capture of its own, as the
    shell's: `_shell_`); without one, all but those of such captures.
    Returns the directory."""
    dest = os.path.join(ROOT, "tests", "fixtures", "hooks", "%s-%s" % (agent, version))
    os.makedirs(dest, exist_ok=True)
    for old in os.listdir(dest):
        ours = prefix in old if prefix else not any(p in old for p in OWN_FIXTURES)
        if old.endswith(".json") and ours:
            os.remove(os.path.join(dest, old))
    for key, d in sorted(fixtures.items()):
        s = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
        s = s.replace(ws.work, "@CWD@").replace(ws.home, "@HOME@").replace(ws.root, "@ROOT@")
        if sid:
            s = s.replace(sid, "@SID@")
        with open(os.path.join(dest, key + ".json"), "w") as f:
            f.write(s)
    return dest


def main(argv, name, agent, version, ensure, scenarios, capture=None, doc="", jobs=2):
    """The command line of an agent's suite (`scripts/e2e-NAME`): options
    -j N (default `jobs`), --keep, --table FILE, --save-fixtures, scenario
    names. `ensure()` returns the binary or raises Skip. Returns the exit
    code."""
    keep, table_file, save, only = False, None, False, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "-j":
            jobs = int(args.pop(0))
        elif a == "--keep":
            keep = True
        elif a == "--table":
            table_file = args.pop(0)
        elif a == "--save-fixtures":
            save = True
        elif a in ("-h", "--help"):
            print(doc.strip())
            return 0
        elif a.startswith("-"):
            print("%s: unknown option %s (see --help)" % (name, a), file=sys.stderr)
            return 2
        else:
            only.append(a)
    try:
        binary = ensure()
    except Skip as e:
        print("%s: skipped: %s" % (name, e))
        return 0
    fsview_bin_dir()
    captures = capture if isinstance(capture, (list, tuple)) else ([capture] if capture else [])
    todo = list(scenarios) + ([(c.__name__.replace("_", "-"), c, (False,)) for c in captures] if save else [])
    runs = run_scenarios(todo, jobs=jobs, keep=keep, only=only)
    t = table(runs, agent)
    print("%s %s, %s\n" % (agent, version, binary))
    print(t)
    if table_file:
        with open(table_file, "w") as f:
            f.write(t + "\n")
    failures = [f for r in runs for f in r.failures]
    for r in runs:
        for n in r.notes:
            print("NOTE: %s (%s): %s" % (r.scenario, r.label, n), file=sys.stderr)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("%s: %d runs, %d failed checks" % (name, len(runs), len(failures)), file=sys.stderr)
    return 1 if failures else 0
