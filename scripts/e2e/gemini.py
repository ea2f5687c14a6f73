"""gemini-cli, installed from npm at a pinned version and run headless.

The CLI is installed once into ~/.cache/fsview-e2e/gemini-cli-VERSION
(never into the repository); `ensure()` fills the cache when it is empty
and raises harness.Skip when npm cannot. `Gemini` runs one prompt (`gemini
-p ... --output-format stream-json --approval-mode auto_edit`) in a
workspace, against a Gemini API server on 127.0.0.1
(GOOGLE_GEMINI_BASE_URL, any GEMINI_API_KEY), with a private HOME whose
settings select API-key auth, turn usage statistics and update checks off
and trust the work tree (headless gemini-cli refuses an untrusted folder),
so nothing leaves the machine.
"""

import json
import os
import subprocess

from harness import install_fsview, npm_ensure

PACKAGE = "@google/gemini-cli"
VERSION = "0.61.0"


def ensure(log=None):
    return npm_ensure(PACKAGE, VERSION, "gemini-cli", "gemini", log=log)


class Result:
    """One `gemini -p` run: its exit code, stderr, and the stream-json
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
        self.session_id = next((e.get("session_id") for e in self.events if e.get("type") == "init"), None)

    def tool_results(self):
        """tool_id -> the tool_result event."""
        return {e.get("tool_id"): e for e in self.events if e.get("type") == "tool_result"}


class Gemini:
    """gemini-cli in one workspace, talking to `server_url`."""

    def __init__(self, binary, ws, server_url):
        self.binary = binary
        self.ws = ws
        self.url = server_url
        d = os.path.join(ws.home, ".gemini")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "privacy": {"usageStatisticsEnabled": False},
                       "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}, f)
        with open(os.path.join(d, "trustedFolders.json"), "w") as f:
            json.dump({ws.work: "TRUST_FOLDER"}, f)

    def env(self, path=None):
        return {
            "PATH": path or "/usr/local/bin:/usr/bin:/bin",
            "HOME": self.ws.home,
            "GEMINI_API_KEY": "e2e-not-a-key",
            "GOOGLE_GEMINI_BASE_URL": self.url,
            "GEMINI_CLI_NO_RELAUNCH": "1",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }

    def prompt(self, text, resume=None, path=None, timeout=240, mode="auto_edit"):
        """One prompt; `mode` "yolo" runs the shell without asking (headless,
        auto_edit refuses it)."""
        args = [self.binary, "-p", text, "--output-format", "stream-json", "--approval-mode", mode]
        if resume:
            args += ["--resume", resume]
        proc = subprocess.run(args, cwd=self.ws.work, env=self.env(path), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(proc)

    def settings_file(self):
        return os.path.join(self.ws.work, ".gemini", "settings.json")

    def write_settings(self, settings):
        p = self.settings_file()
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump(settings, f, indent=2)

    def read_settings(self):
        with open(self.settings_file()) as f:
            return json.load(f)

    def install_fsview(self, *extra, binary=None):
        """Wire fsview in as a user would: `fsview-hook install gemini`."""
        return install_fsview("gemini", self.ws.work, self.env(), extra, binary)
