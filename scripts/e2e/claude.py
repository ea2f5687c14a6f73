"""Claude Code, installed from npm at a pinned version and run headless.

The binary is installed once into ~/.cache/fsview-e2e/claude-code-VERSION
(never into the repository); `ensure()` fills the cache when it is empty
and raises harness.Skip when npm cannot. `Claude` runs one prompt (`claude
-p ... --output-format stream-json --verbose --include-hook-events
--permission-mode acceptEdits`) in a workspace, against a model server on
127.0.0.1, with a private HOME and CLAUDE_CONFIG_DIR and
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, so nothing leaves the machine.
"""

import json
import os
import shutil
import subprocess

from harness import Skip, fsview_bin_dir, install_fsview

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"


def cache_dir(version=VERSION):
    base = os.environ.get("FSVIEW_E2E_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "fsview-e2e")
    return os.path.join(base, "claude-code-%s" % version)


def _version_of(binary):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.split()[0] if out.returncode == 0 and out.stdout.strip() else None


def ensure(version=VERSION, log=None):
    """The path of the pinned `claude` binary, installing it into the cache
    when missing. Raises Skip when it cannot be installed here."""
    d = cache_dir(version)
    binary = os.path.join(d, "node_modules", ".bin", "claude")
    if os.path.exists(binary) and _version_of(binary) == version:
        return binary
    npm = shutil.which("npm")
    if not npm:
        raise Skip("npm is not installed, so Claude Code %s cannot be installed into %s" % (version, d))
    # A quick look first: an unreachable registry makes npm install retry
    # for minutes.
    try:
        p = subprocess.run([npm, "view", "%s@%s" % (PACKAGE, version), "version", "--fetch-timeout=15000",
                            "--fetch-retries=0"], capture_output=True, text=True, timeout=60)
        reachable = p.returncode == 0 and p.stdout.strip() == version
    except subprocess.TimeoutExpired:
        reachable = False
    if not reachable:
        raise Skip("the npm registry does not answer for %s@%s, so Claude Code cannot be installed into %s"
                   % (PACKAGE, version, d))
    os.makedirs(d, exist_ok=True)
    if log:
        print("e2e: installing %s@%s into %s" % (PACKAGE, version, d), file=log, flush=True)
    try:
        p = subprocess.run([npm, "install", "--prefix", d, "--no-audit", "--no-fund", "--save-exact",
                            "%s@%s" % (PACKAGE, version)], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise Skip("npm install of %s@%s timed out (is the registry reachable?)" % (PACKAGE, version))
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise Skip("npm install of %s@%s failed (is the registry reachable?): %s" % (PACKAGE, version, last))
    got = _version_of(binary)
    if got != version:
        raise Skip("npm installed %s, which says its version is %r, not %s" % (binary, got, version))
    return binary


class Result:
    """One `claude -p` run: its exit code, stderr, and the stream-json
    events it printed."""

    def __init__(self, proc):
        self.code = proc.returncode
        self.stderr = proc.stderr
        self.events = []
        for line in proc.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass
        self.session_id = next((e.get("session_id") for e in reversed(self.events) if e.get("session_id")), None)

    def hook_responses(self, event=None):
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "hook_response"
                and (event is None or e.get("hook_event") == event)]


class Claude:
    """Claude Code in one workspace, talking to `server_url`."""

    def __init__(self, binary, ws, server_url):
        self.binary = binary
        self.ws = ws
        self.url = server_url
        self.config = os.path.join(ws.home, ".claude")
        os.makedirs(self.config, exist_ok=True)

    def env(self, path=None):
        return {
            "PATH": path or "/usr/local/bin:/usr/bin:/bin",
            "HOME": self.ws.home,
            "CLAUDE_CONFIG_DIR": self.config,
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-e2e-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }

    def prompt(self, text, resume=None, path=None, cwd=None, timeout=180, model=None, mode="acceptEdits",
               extra=()):
        """One prompt. `mode` "bypassPermissions" runs every tool without
        asking (what the shell scenarios need headless); as root Claude Code
        allows it only in a sandbox, which IS_SANDBOX says this is."""
        args = [self.binary, "-p", text, "--output-format", "stream-json", "--verbose", "--include-hook-events",
                "--permission-mode", mode]
        if resume:
            args += ["--resume", resume]
        if model:
            args += ["--model", model]
        args += list(extra)
        env = self.env(path)
        if mode == "bypassPermissions":
            env["IS_SANDBOX"] = "1"
        proc = subprocess.run(args, cwd=cwd or self.ws.work, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(proc)

    def settings_file(self, scope="local"):
        name = {"project": "settings.json", "local": "settings.local.json"}[scope]
        return os.path.join(self.ws.work, ".claude", name)

    def write_settings(self, settings, scope="local"):
        p = self.settings_file(scope)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump(settings, f, indent=2)

    def read_settings(self, scope="local"):
        with open(self.settings_file(scope)) as f:
            return json.load(f)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a user would: `fsview-hook install claude`."""
        return install_fsview("claude", self.ws.work, self.env(), extra, binary)

    def fsview(self, tool, *args):
        """Run an fsview tool in the workspace, with the default session
        file the hooks use."""
        p = subprocess.run([os.path.join(fsview_bin_dir(), tool), *args], cwd=self.ws.work, env=self.env(),
                           capture_output=True, text=True)
        return p
