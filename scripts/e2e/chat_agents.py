"""Qwen Code, opencode and GitHub Copilot CLI, installed from npm at pinned
versions and run headless against a scripted OpenAI Chat Completions
server (openai_chat.py) on 127.0.0.1.

Each is installed once into ~/.cache/fsview-e2e/NAME-VERSION (never into
the repository); `ensure()` fills the cache when it is empty and raises
harness.Skip when npm cannot. Each runs with a private HOME and every
update check, telemetry and network feature off, so nothing leaves the
machine:

- Qwen Code: `qwen PROMPT --output-format stream-json --approval-mode
  auto-edit --auth-type openai` with OPENAI_BASE_URL, OPENAI_API_KEY (any),
  OPENAI_MODEL; next prompt `--resume SESSION_ID`.
- opencode: `opencode run --format json --auto PROMPT` with a provider
  `mock` (`@ai-sdk/openai-compatible`, bundled) in the project's
  opencode.json; next prompt `--session SESSION_ID`.
- Copilot CLI: `copilot -p PROMPT --output-format json --allow-all-tools`
  with COPILOT_PROVIDER_BASE_URL (bring your own key: no GitHub sign-in),
  COPILOT_OFFLINE=true, COPILOT_ALLOW_ALL=true (which also trusts the
  folder, so its .github/hooks run); next prompt `--resume SESSION_ID`.
  COPILOT_CACHE_HOME keeps the package it unpacks (235 MB) in the cache.
"""

import json
import os
import subprocess

from harness import cache_root, fsview_bin_dir, npm_ensure


def first_version(out):
    """The first word of `--version`'s output that starts with a digit
    ("GitHub Copilot CLI 1.0.102." gives 1.0.102)."""
    words = out.replace("CLI ", "").split()
    return next((w.rstrip(".") for w in words if w[:1].isdigit()), None)


def _jsonl(text):
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


class Result:
    """One headless run: its exit code, stderr, the JSON events it printed,
    and the session id they name."""

    def __init__(self, proc, session_key):
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.events = _jsonl(proc.stdout)
        self.session_id = next((e.get(session_key) for e in reversed(self.events) if e.get(session_key)), None)


class Agent:
    """One agent in one workspace, talking to the model server at `url`."""

    name = None  # fsview-hook's name for it
    label = None  # for tables
    session_key = None

    def __init__(self, binary, ws, url):
        self.binary = binary
        self.ws = ws
        self.url = url

    def base_env(self, path=None):
        return {"PATH": path or "/usr/local/bin:/usr/bin:/bin", "HOME": self.ws.home, "LANG": "C.UTF-8",
                "TZ": "UTC"}

    def env(self, path=None):
        return self.base_env(path)

    def args(self, text, resume):
        raise NotImplementedError

    def prompt(self, text, resume=None, path=None, timeout=240):
        proc = subprocess.run(self.args(text, resume), cwd=self.ws.work, env=self.env(path), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(proc, self.session_key)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a user would: `fsview-hook install AGENT`."""
        exe = binary or os.path.join(fsview_bin_dir(), "fsview-hook")
        p = subprocess.run([exe, "install", self.name, *extra], cwd=self.ws.work, env=self.env(),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("fsview-hook install %s failed: %s" % (self.name, p.stderr))
        return p.stdout

    def fsview(self, tool, *args):
        """Run an fsview tool in the workspace, with the default session
        file the hooks use."""
        return subprocess.run([os.path.join(fsview_bin_dir(), tool), *args], cwd=self.ws.work, env=self.env(),
                              capture_output=True, text=True)

    def succeeded(self, tool_result):
        """Whether a tool result the model got says the change was made."""
        raise NotImplementedError

    # Tool calls in the agent's own names.
    def read(self, path, first=None, count=None):
        raise NotImplementedError

    def edit(self, path, old, new):
        raise NotImplementedError

    def write(self, path, content):
        raise NotImplementedError


class Qwen(Agent):
    name = "qwen"
    label = "Qwen Code"
    package = "@qwen-code/qwen-code"
    version = "0.24.4"
    dirname = "qwen-code"
    bin = "qwen"
    session_key = "session_id"

    def env(self, path=None):
        e = self.base_env(path)
        e.update({"OPENAI_API_KEY": "sk-e2e-not-a-key", "OPENAI_BASE_URL": self.url + "/v1",
                  "OPENAI_MODEL": "e2e-model"})
        return e

    def args(self, text, resume):
        a = [self.binary, text, "--output-format", "stream-json", "--approval-mode", "auto-edit",
             "--auth-type", "openai"]
        return a + (["--resume", resume] if resume else [])

    def settings_file(self):
        return os.path.join(self.ws.work, ".qwen", "settings.json")

    def write_hooks(self, hooks):
        p = self.settings_file()
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump({"hooks": hooks}, f, indent=2)

    def succeeded(self, r):
        return ((r.startswith(("The file: ", "Notebook ")) and " has been updated." in r)
                or r.startswith("Successfully "))

    def read(self, path, first=None, count=None):
        a = {"file_path": path}
        if first is not None:
            a.update({"offset": first - 1, "limit": count})
        return ("read_file", a)

    def edit(self, path, old, new):
        return ("edit", {"file_path": path, "old_string": old, "new_string": new})

    def write(self, path, content):
        return ("write_file", {"file_path": path, "content": content})


class Opencode(Agent):
    name = "opencode"
    label = "opencode"
    package = "opencode-ai"
    version = "1.18.33"
    dirname = "opencode"
    bin = "opencode"
    session_key = "sessionID"

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        with open(os.path.join(ws.work, "opencode.json"), "w") as f:
            json.dump({"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
                       "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                             "options": {"baseURL": url + "/v1", "apiKey": "sk-e2e-not-a-key"},
                                             "models": {"e2e-model": {"name": "E2E", "tool_call": True}}}},
                       "model": "mock/e2e-model"}, f, indent=2)

    def env(self, path=None):
        e = self.base_env(path)
        e.update({"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                  "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                  "XDG_CONFIG_HOME": os.path.join(self.ws.home, ".config"),
                  "XDG_DATA_HOME": os.path.join(self.ws.home, ".local", "share"),
                  "XDG_CACHE_HOME": os.path.join(self.ws.home, ".cache"),
                  "XDG_STATE_HOME": os.path.join(self.ws.home, ".local", "state")})
        return e

    def args(self, text, resume):
        a = [self.binary, "run", "--format", "json", "--auto"]
        return a + (["--session", resume] if resume else []) + [text]

    def plugin_file(self):
        return os.path.join(self.ws.work, ".opencode", "plugins", "fsview.js")

    def succeeded(self, r):
        return r.startswith(("Edit applied successfully", "Wrote file successfully"))

    def read(self, path, first=None, count=None):
        a = {"filePath": path}
        if first is not None:
            a.update({"offset": first, "limit": count})
        return ("read", a)

    def edit(self, path, old, new):
        return ("edit", {"filePath": path, "oldString": old, "newString": new})

    def write(self, path, content):
        return ("write", {"filePath": path, "content": content})


class Copilot(Agent):
    name = "copilot"
    label = "Copilot CLI"
    package = "@github/copilot"
    version = "1.0.102"
    dirname = "copilot"
    bin = "copilot"
    session_key = "sessionId"

    def env(self, path=None):
        e = self.base_env(path)
        e.update({"COPILOT_PROVIDER_BASE_URL": self.url + "/v1", "COPILOT_PROVIDER_API_KEY": "sk-e2e-not-a-key",
                  "COPILOT_MODEL": "e2e-model", "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                  "COPILOT_ALLOW_ALL": "true", "COPILOT_CACHE_HOME": copilot_cache()})
        return e

    def args(self, text, resume):
        a = [self.binary, "-p", text, "--output-format", "json", "--allow-all-tools", "--no-auto-update"]
        return a + (["--resume", resume] if resume else [])

    def hooks_file(self):
        return os.path.join(self.ws.work, ".github", "hooks", "fsview.json")

    def succeeded(self, r):
        return (r.startswith("File ") and r.endswith(" updated with changes.")) or r.startswith("Created file ")

    def read(self, path, first=None, count=None):
        a = {"path": path}
        if first is not None:
            a["view_range"] = [first, first + count - 1]
        return ("view", a)

    def edit(self, path, old, new):
        return ("edit", {"path": path, "old_str": old, "new_str": new})

    def write(self, path, content):
        return ("create", {"path": path, "file_text": content})


def copilot_cache():
    return os.path.join(cache_root(), "copilot-%s" % Copilot.version, "unpacked")


AGENTS = {"qwen": Qwen, "opencode": Opencode, "copilot": Copilot}


def ensure(cls, log=None):
    env = None
    if cls is Copilot:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.expanduser("~"),
               "COPILOT_CACHE_HOME": copilot_cache(), "COPILOT_AUTO_UPDATE": "false"}
    return npm_ensure(cls.package, cls.version, cls.dirname, cls.bin, parse_version=first_version, log=log, env=env)
