"""Codex CLI, installed from npm at a pinned version and run headless.

The CLI is installed once into ~/.cache/fsview-e2e/codex-VERSION (never
into the repository); `ensure()` fills the cache when it is empty and
raises harness.Skip when npm cannot. `Codex` runs one prompt (`codex exec
--json --skip-git-repo-check --dangerously-bypass-hook-trust PROMPT`, or
`codex exec resume ID PROMPT`) in a workspace, with a private HOME and
CODEX_HOME whose config.toml points a `mock` provider (Responses API) at a
server on 127.0.0.1 and trusts the work tree, so nothing leaves the
machine. The model is `gpt-5.5`, with which Codex offers `exec_command` and
`apply_patch` as tools.
"""

import json
import os
import subprocess

from harness import install_fsview, npm_ensure

PACKAGE = "@openai/codex"
VERSION = "0.171.0"


def ensure(log=None):
    return npm_ensure(PACKAGE, VERSION, "codex", "codex", log=log)


class Result:
    """One `codex exec` run: its exit code, stderr, and the JSON events it
    printed."""

    def __init__(self, proc):
        self.code = proc.returncode
        self.stderr = proc.stderr
        self.events = []
        for line in proc.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass
        self.session_id = next((e.get("thread_id") for e in self.events if e.get("type") == "thread.started"),
                               None)


class Codex:
    """Codex in one workspace, talking to `server_url`."""

    def __init__(self, binary, ws, server_url, model="gpt-5.5"):
        """`model` None: Codex's default model, which runs in code mode (one
        JavaScript `exec` tool calling the others)."""
        self.binary = binary
        self.ws = ws
        self.url = server_url
        self.home = os.path.join(ws.home, ".codex")
        os.makedirs(self.home, exist_ok=True)
        with open(os.path.join(self.home, "config.toml"), "w") as f:
            f.write(('model = "%s"\n' % model if model else "") +
                    'model_provider = "mock"\n'
                    'sandbox_mode = "workspace-write"\n'
                    'approval_policy = "never"\n'
                    '[model_providers.mock]\n'
                    'name = "mock"\n'
                    'base_url = "%s/v1"\n'
                    'wire_api = "responses"\n'
                    'env_key = "OPENAI_API_KEY"\n'
                    '[projects."%s"]\n'
                    'trust_level = "trusted"\n' % (server_url, ws.work))

    def env(self, path=None):
        return {
            "PATH": path or "/usr/local/bin:/usr/bin:/bin",
            "HOME": self.ws.home,
            "CODEX_HOME": self.home,
            "OPENAI_API_KEY": "e2e-not-a-key",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }

    def prompt(self, text, resume=None, path=None, timeout=180):
        args = [self.binary, "exec"]
        if resume:
            args += ["resume", resume]
        args += ["--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", text]
        proc = subprocess.run(args, cwd=self.ws.work, env=self.env(path), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(proc)

    def hooks_file(self):
        return os.path.join(self.ws.work, ".codex", "hooks.json")

    def write_hooks(self, hooks):
        p = self.hooks_file()
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump(hooks, f, indent=2)

    def read_hooks(self):
        with open(self.hooks_file()) as f:
            return json.load(f)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a user would: `fsview-hook install codex`."""
        return install_fsview("codex", self.ws.work, self.env(), extra, binary)
