"""Qwen Code, opencode, Kilo Code CLI, GitHub Copilot CLI, Factory Droid
and pi, installed from npm at pinned
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
- Kilo Code CLI (opencode's fork): the same, as `kilo run`, with the
  provider in kilo.json. The npm package @kilocode/cli 7.8.1 names
  platform packages of its own version that the registry does not have,
  so the platform package @kilocode/cli-linux-x64 (7.7.9, the binary
  itself, with its tree-sitter grammars beside it) is installed alone, as
  for Droid.
- Copilot CLI: `copilot -p PROMPT --output-format json --allow-all-tools`
  with COPILOT_PROVIDER_BASE_URL (bring your own key: no GitHub sign-in),
  COPILOT_OFFLINE=true, COPILOT_ALLOW_ALL=true (which also trusts the
  folder, so its .github/hooks run); next prompt `--resume SESSION_ID`.
  COPILOT_CACHE_HOME keeps the package it unpacks (235 MB) in the cache.
- pi: `pi --mode json --provider mock --model e2e-model -p PROMPT` with
  the provider (`openai-completions`) in a private PI_CODING_AGENT_DIR's
  models.json and PI_OFFLINE=1: no sign-in; next prompt `--session ID`.
- Factory Droid: `droid exec -o json --auto low -m custom:E2E-0 PROMPT`
  with a BYOK custom model (`generic-chat-completion-api`) in
  ~/.factory/settings.json: no Factory sign-in. The npm package
  @factory/cli 0.225.1 names platform packages of its own version that the
  registry does not have, so the platform package @factory/cli-linux-x64
  (0.225.2, the binary itself) is installed alone. `droid exec -s ID` (a
  next prompt) fetches the session from Factory's servers, which needs a
  sign-in: each scenario is one prompt.
- Cline CLI: `cline --json PROMPT` with an `openai-compatible` provider in
  a private ~/.cline/data/settings/providers.json: no sign-in. Its hooks
  are files in .clinerules/hooks/; a headless prompt fires no hook that
  waits, so fsview tells what changed with the next tool result. Each
  scenario is one prompt.
- Continue CLI (scripts/e2e-continue): `cn -p PROMPT --config FILE` with
  a `provider: openai` model in a private ~/.continue/config.yaml: no
  sign-in. It fires no hooks; with fsview, fsview-mcp is in the config's
  mcpServers and cn's own file and shell tools are left out with
  `--exclude`.
"""

import json
import os
import signal
import subprocess

from harness import cache_root, fsview_bin_dir, install_fsview, npm_ensure


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
    # When fsview tells the agent what changed: at its next "prompt", or
    # with the next "tool" result (an agent whose prompts fire no hook).
    remind_at = "prompt"

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

    # Seconds one headless run may take.
    timeout = 240

    def prompt(self, text, resume=None, path=None, timeout=None):
        # In a process group of its own: a run that times out is ended with
        # every process it started (a wrapper's native binary too).
        p = subprocess.Popen(self.args(text, resume), cwd=self.ws.work, env=self.env(path), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
        return Result(subprocess.CompletedProcess(p.args, p.returncode, out, err), self.session_key)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a user would: `fsview-hook install AGENT`."""
        return install_fsview(self.name, self.ws.work, self.env(), extra, binary)

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

    # "yolo" runs the shell without asking (headless, auto-edit refuses it).
    approval = "auto-edit"

    def args(self, text, resume):
        a = [self.binary, text, "--output-format", "stream-json", "--approval-mode", self.approval,
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

    def shell(self, command):
        return ("run_shell_command", {"command": command, "description": "run it"})


class Opencode(Agent):
    name = "opencode"
    label = "opencode"
    package = "opencode-ai"
    version = "1.18.33"
    dirname = "opencode"
    bin = "opencode"
    session_key = "sessionID"
    config = "opencode.json"

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        with open(os.path.join(ws.work, self.config), "w") as f:
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

    def shell(self, command):
        return ("bash", {"command": command, "description": "run it"})


class Kilo(Opencode):
    """Kilo Code CLI: opencode's fork, the same run command, its own names
    (kilo.json, KILO_* variables, .kilo/plugins/)."""

    name = "kilo"
    label = "Kilo Code CLI"
    # The platform package, the binary itself: the wrapper @kilocode/cli
    # 7.8.1 names platform packages the registry does not have.
    package = "@kilocode/cli-linux-x64"
    version = "7.7.9"
    dirname = "kilocode-cli"
    bin = "@kilocode/cli-linux-x64/bin/kilo"
    config = "kilo.json"
    # Kilo spends 20 s of CPU starting up: on a busy machine a run takes
    # minutes.
    timeout = 600

    def env(self, path=None):
        e = super().env(path)
        e.update({"KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_SHARE": "1",
                  "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_TELEMETRY_LEVEL": "off",
                  # What the wrapper's launcher sets: the grammars its bash
                  # tool parses commands with, beside the binary.
                  "KILO_TREE_SITTER_WASM_DIR": os.path.join(os.path.dirname(self.binary), "tree-sitter")})
        return e

    def plugin_file(self):
        return os.path.join(self.ws.work, ".kilo", "plugins", "fsview.js")


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

    # "yolo": every path too (the shell's commands reach outside the
    # project: a toolchain in ~/.cargo).
    approval = "tools"

    def args(self, text, resume):
        allow = "--allow-all" if self.approval == "yolo" else "--allow-all-tools"
        a = [self.binary, "-p", text, "--output-format", "json", allow, "--no-auto-update"]
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

    def shell(self, command):
        return ("bash", {"command": command, "description": "run it"})


class Droid(Agent):
    name = "droid"
    label = "Droid"
    package = "@factory/cli-linux-x64"
    version = "0.225.2"
    dirname = "factory-droid"
    bin = "@factory/cli-linux-x64/bin/droid"
    session_key = "session_id"
    # Headless Droid fires no hook at a prompt, and cannot resume a session
    # without a sign-in: fsview tells what changed at the next tool result.
    remind_at = "tool"
    # Droid's autonomy: "low" lets it edit files and run commands that
    # change nothing; "high" any command (the shell scenarios).
    auto = "low"

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        d = os.path.join(ws.home, ".factory")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump({"customModels": [{"model": "e2e-model", "displayName": "E2E", "baseUrl": url + "/v1",
                                         "apiKey": "sk-e2e-not-a-key", "provider": "generic-chat-completion-api",
                                         "maxOutputTokens": 4096}]}, f, indent=2)

    def args(self, text, resume):
        if resume:
            raise RuntimeError("droid exec cannot resume a session without a Factory sign-in")
        return [self.binary, "exec", "-o", "json", "--auto", self.auto, "-m", "custom:E2E-0", text]

    def settings_file(self):
        return os.path.join(self.ws.work, ".factory", "settings.json")

    def succeeded(self, r):
        return r.startswith("The file ") and r.rstrip().endswith(("updated successfully.", "created successfully."))

    def read(self, path, first=None, count=None):
        a = {"file_path": path}
        if first is not None:
            a.update({"offset": first, "limit": count})
        return ("Read", a)

    def edit(self, path, old, new):
        return ("Edit", {"file_path": path, "old_str": old, "new_str": new})

    def write(self, path, content):
        return ("Create", {"file_path": path, "content": content})

    def shell(self, command):
        return ("Execute", {"command": command, "riskLevelReason": "it only reads", "riskLevel": "low"})


class Pi(Agent):
    name = "pi"
    label = "pi"
    package = "@mariozechner/pi-coding-agent"
    version = "0.73.1"
    dirname = "pi-coding-agent"
    bin = "pi"
    session_key = None  # the "session" header line's id

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        d = self.agent_dir()
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {
                "baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "sk-e2e-not-a-key",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": "e2e-model"}]}}}, f, indent=2)

    def agent_dir(self):
        return os.path.join(self.ws.home, ".pi", "agent")

    def env(self, path=None):
        e = self.base_env(path)
        e.update({"PI_CODING_AGENT_DIR": self.agent_dir(), "PI_OFFLINE": "1"})
        return e

    def args(self, text, resume):
        a = [self.binary, "--mode", "json", "--provider", "mock", "--model", "e2e-model"]
        # `@FILE` words first are pi's file arguments, each its own.
        files = []
        while text.startswith("@"):
            word, _, text = text.partition(" ")
            files.append(word)
        return a + (["--session", resume] if resume else []) + files + ["-p", text]

    def prompt(self, text, resume=None, path=None, timeout=None):
        r = super().prompt(text, resume, path, timeout)
        r.session_id = next((e.get("id") for e in r.events if e.get("type") == "session"), None)
        return r

    def extension_file(self):
        return os.path.join(self.ws.work, ".pi", "extensions", "fsview.js")

    def succeeded(self, r):
        return r.startswith(("Successfully replaced ", "Successfully wrote "))

    def read(self, path, first=None, count=None):
        a = {"path": path}
        if first is not None:
            a.update({"offset": first, "limit": count})
        return ("read", a)

    def edit(self, path, old, new):
        return ("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})

    def write(self, path, content):
        return ("write", {"path": path, "content": content})

    def shell(self, command):
        return ("bash", {"command": command})


class Cline(Agent):
    name = "cline"
    label = "Cline CLI"
    package = "cline"
    version = "3.0.65"
    dirname = "cline"
    bin = "cline"
    session_key = None  # rootSessionId is only in the hooks' payloads
    remind_at = "tool"

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        # `cline auth` writes the provider as Cline wants it (a
        # providers.json written by hand is replaced by its default).
        subprocess.run([binary, "auth", "-p", "openai-compatible", "-k", "sk-e2e-not-a-key", "-m", "e2e-model",
                        "-b", url + "/v1"], cwd=ws.work, env=self.env(), stdin=subprocess.DEVNULL,
                       capture_output=True, check=True, timeout=120)

    def env(self, path=None):
        e = self.base_env(path)
        # "local": no background hub daemon (it would outlive the run).
        e.update({"CLINE_SESSION_BACKEND_MODE": "local", "CLINE_TELEMETRY_DISABLED": "1", "CLINE_NO_UPDATE": "1"})
        return e

    def args(self, text, resume):
        if resume:
            raise RuntimeError("the scenarios give Cline one prompt each")
        # A one-word prompt would be taken for a subcommand.
        return [self.binary, "--json", text if " " in text.strip() else text + " now"]

    def hooks_dir(self):
        return os.path.join(self.ws.work, ".clinerules", "hooks")

    def succeeded(self, r):
        try:
            v = json.loads(r)
        except ValueError:
            return False
        if isinstance(v, list):
            v = v[0] if v else {}
        return (isinstance(v, dict) and v.get("success") is True
                and str(v.get("result", "")).startswith(("Edited ", "File created successfully at: ")))

    def read(self, path, first=None, count=None):
        f = {"path": path}
        if first is not None:
            f.update({"start_line": first, "end_line": first + count - 1})
        return ("read_files", {"files": [f]})

    def edit(self, path, old, new):
        return ("editor", {"path": path, "old_text": old, "new_text": new})

    def write(self, path, content):
        # Cline's editor writes a whole file only when it is missing.
        return ("editor", {"path": path, "new_text": content})

    def shell(self, command):
        return ("run_commands", {"commands": [command]})


class Continue(Agent):
    """Continue CLI (`cn`): it fires no hooks (1.5.47 loads Claude Code's
    settings files and calls none of their hooks), so fsview comes in as
    its file tools: fsview-mcp in `mcpServers` of ~/.continue/config.yaml,
    and cn's own file and shell tools excluded with `--exclude`."""

    name = "continue"
    label = "Continue CLI"
    package = "@continuedev/cli"
    version = "1.5.47"
    dirname = "continue-cli"
    bin = "cn"
    session_key = None
    # cn's own tools that read, change or run (its Edit is MultiEdit for
    # the models it deems capable).
    OWN_TOOLS = ("Read", "Edit", "MultiEdit", "Write", "Bash")

    def __init__(self, binary, ws, url):
        super().__init__(binary, ws, url)
        self.mcp = None  # fsview-mcp's path, once wired in
        self.write_config()

    def config_file(self):
        return os.path.join(self.ws.home, ".continue", "config.yaml")

    def write_config(self):
        # JSON is YAML: no quoting of paths by hand.
        c = {"name": "e2e", "version": "0.0.1", "schema": "v1",
             "models": [{"name": "e2e", "provider": "openai", "model": "e2e-model", "apiBase": self.url + "/v1",
                         "apiKey": "sk-e2e-not-a-key", "roles": ["chat"]}]}
        if self.mcp:
            c["mcpServers"] = [{"name": "fsview", "command": self.mcp, "args": ["-C", self.ws.work]}]
        os.makedirs(os.path.dirname(self.config_file()), exist_ok=True)
        with open(self.config_file(), "w") as f:
            json.dump(c, f, indent=2)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a Continue user can: fsview-mcp as an MCP
        server, and (in `args`) cn's own file tools excluded."""
        self.mcp = binary or os.path.join(fsview_bin_dir(), "fsview-mcp")
        self.write_config()
        return ""

    def env(self, path=None):
        e = self.base_env(path)
        e.update({"CONTINUE_CLI_ENABLE_TELEMETRY": "0", "CONTINUE_METRICS_ENABLED": "0"})
        return e

    def args(self, text, resume):
        if resume:
            raise RuntimeError("the scenarios give Continue one prompt each")
        a = [self.binary, "-p", text, "--config", self.config_file()]
        if self.mcp:
            # Not --auto: its policies replace every other, --exclude too.
            for t in self.OWN_TOOLS:
                a += ["--exclude", t]
            return a
        # Headless, cn offers Edit and Write only with --auto (or --allow).
        return a + ["--auto"]

    def succeeded(self, r):
        if self.mcp:
            # A merged edit's message goes on: "... updated successfully.
            # X had been changed since you read it (by ...)".
            first = r.split("\n")[0]
            return ((first.startswith("The file ") and " has been updated successfully." in first)
                    or first.startswith("File created successfully at: "))
        return r.startswith(("Successfully edited ", "Successfully wrote to file: ", "Successfully created file: "))

    def read(self, path, first=None, count=None):
        if self.mcp:
            a = {"file_path": path}
            if first is not None:
                a.update({"offset": first, "limit": count})
            return ("read", a)
        return ("Read", {"filepath": path})

    def edit(self, path, old, new):
        if self.mcp:
            return ("edit", {"file_path": path, "old_string": old, "new_string": new})
        return ("Edit", {"file_path": path, "old_string": old, "new_string": new})

    def write(self, path, content):
        if self.mcp:
            return ("write", {"file_path": path, "content": content})
        return ("Write", {"filepath": path, "content": content})


def copilot_cache():
    return os.path.join(cache_root(), "copilot-%s" % Copilot.version, "unpacked")


AGENTS = {"qwen": Qwen, "opencode": Opencode, "kilo": Kilo, "copilot": Copilot, "droid": Droid, "pi": Pi,
          "cline": Cline}


def ensure(cls, log=None):
    env = None
    if cls is Copilot:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.expanduser("~"),
               "COPILOT_CACHE_HOME": copilot_cache(), "COPILOT_AUTO_UPDATE": "false"}
    return npm_ensure(cls.package, cls.version, cls.dirname, cls.bin, parse_version=first_version, log=log, env=env)
