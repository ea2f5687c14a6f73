"""fsview-mcp driven by the official MCP Python SDK (`mcp` from PyPI).

Run by scripts/e2e-mcp with the Python of a venv that has the pinned SDK:

    VENV/bin/python scripts/e2e/mcp_sdk_python.py MODE

MODE is the SDK's connect mode: `auto` (its default: `server/discover`,
so protocol 2026-07-28 with no initialize) or `legacy` (the initialize
handshake). Each scenario prints one JSON line on stdout: {"scenario",
"what" (what the SDK and the server did, for the table), "failures"}.
The fsview binaries come from $FSVIEW_BIN_DIR. The same scenarios, with
the same expectations, are in mcp_sdk_typescript.mjs.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

BIN = os.environ["FSVIEW_BIN_DIR"]
MODE = sys.argv[1] if len(sys.argv) > 1 else "auto"

READ_NOT = "File has not been read yet. Read it first before writing to it."
# A `modified` refusal whose whole change the same result tells.
MODIFIED = ("File has been modified since read, either by the user or by a linter. "
            "The whole change is below: you now hold the file's new text, so retry your change against it "
            "(no need to read the file again).")


class Failed(Exception):
    pass


class Work:
    """A scratch directory: work/ (the project), home/, session.db."""

    def __init__(self):
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="fsview-e2e-mcp-py-"))
        self.work = os.path.join(self.root, "work")
        self.home = os.path.join(self.root, "home")
        self.session = os.path.join(self.root, "session.db")
        os.makedirs(self.work)
        os.makedirs(self.home)

    def path(self, rel):
        return os.path.join(self.work, rel)

    def write(self, rel, text):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

    def read(self, rel):
        with open(self.path(rel)) as f:
            return f.read()

    def env(self):
        return {"FSVIEW_SESSION": self.session, "HOME": self.home, "LC_ALL": "C", "TZ": "UTC"}

    def fsview(self, tool, *args):
        """Another fsview tool, on the same session file."""
        e = {"PATH": "/usr/local/bin:/usr/bin:/bin", **self.env()}
        return subprocess.run([os.path.join(BIN, tool), *args], cwd=self.work, env=e,
                              capture_output=True, text=True)

    def server(self, sid, *extra):
        params = StdioServerParameters(command=os.path.join(BIN, "fsview-mcp"),
                                       args=["--sid", sid, "-q", *extra], cwd=self.work, env=self.env())
        return Client(params, mode=MODE)

    def views(self, sid):
        r = self.fsview("fsview-session", "show", "--sid", sid, "--json")
        if r.returncode != 0:
            return []
        return sorted((v["path"], v["kind"], v["source"]) for v in map(json.loads, r.stdout.splitlines()))

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


class Checks:
    def __init__(self):
        self.failures = []

    def eq(self, got, want, what):
        if got != want:
            self.failures.append("%s: got %r, want %r" % (what, got, want))

    def true(self, cond, what):
        if not cond:
            self.failures.append(what)


def texts(result):
    return [c.text for c in result.content]


async def tools_listed(w, c):
    async with w.server("s") as client:
        info = client.session.server_info
        c.eq((info.name, info.version), ("fsview-mcp", "0.1.0"), "serverInfo")
        tools = (await client.list_tools()).tools
        c.eq([t.name for t in tools], ["read", "edit", "write", "changed", "context"], "tool names")
        req = {t.name: t.input_schema.get("required", []) for t in tools}
        c.eq(req, {"read": ["file_path"], "edit": ["file_path", "old_string", "new_string"],
                   "write": ["file_path", "content"], "changed": [], "context": []}, "required arguments")
        c.true(all(t.input_schema.get("additionalProperties") is False for t in tools), "closed schemas")
        c.true(all(len(t.description or "") > 200 for t in tools), "every tool described")
        return "protocol %s; 5 tools; serverInfo %s %s" % (client.protocol_version, info.name, info.version)


async def read_tool(w, c):
    w.write("a.txt", "one\ntwo\nthree\n")
    os.makedirs(w.path("dir"))
    async with w.server("s") as client:
        r = await client.call_tool("read", {"file_path": w.path("a.txt")})
        c.eq((texts(r), r.is_error), (["1\tone\n2\ttwo\n3\tthree\n"], False), "read a.txt")
        c.eq(r.meta["fsview/read"]["kind"], "full", "kind")
        r2 = await client.call_tool("read", {"file_path": "a.txt", "offset": 2, "limit": 1})
        c.eq(texts(r2), ["2\ttwo\n"], "read a range")
        r3 = await client.call_tool("read", {"file_path": "dir"})
        c.eq((texts(r3), r3.is_error), (["dir is a directory; read shows regular files only"], True),
             "read a directory")
        r4 = await client.call_tool("read", {"file_path": "a.txt", "limit": 0})
        c.eq((texts(r4), r4.is_error), (["read: limit must be a whole number, 1 or more, not 0"], True),
             "read with limit 0")
    check = w.fsview("fsview-check-edit", "--sid", "s", "a.txt")
    c.eq((check.returncode, check.stdout), (0, "a.txt: ok\n"), "the shell sees the view")
    return "numbered text; a directory and limit 0 refused (isError); the shell's check: ok"


async def edit_tool(w, c):
    w.write("a.txt", "one\ntwo\nthree\n")
    async with w.server("s") as client:
        args = {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}
        r = await client.call_tool("edit", args)
        c.eq((texts(r), r.is_error), (["a.txt: not_read: " + READ_NOT], True), "edit before a read")
        await client.call_tool("read", {"file_path": "a.txt"})
        r = await client.call_tool("edit", args)
        c.eq((texts(r), r.is_error),
             (["The file a.txt has been updated successfully.\n\n--- a.txt\n+++ a.txt\n"
               "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"], False), "edit after a read")
        r = await client.call_tool("edit", {"file_path": "a.txt", "old_string": "e", "new_string": "E"})
        c.eq(r.meta["fsview/edit"]["verdict"], "ambiguous", "an ambiguous edit")
    c.eq(w.read("a.txt"), "one\nTWO\nthree\n", "the file")
    return "not_read refused (isError), applied after a read with the diff, ambiguous refused"


async def write_tool(w, c):
    w.write("a.txt", "1\n2\n3\n")
    async with w.server("s") as client:
        await client.call_tool("read", {"file_path": "a.txt", "limit": 2})
        r = await client.call_tool("write", {"file_path": "a.txt", "content": "x\n"})
        c.eq((texts(r), r.is_error),
             (["a.txt: start_only: File has only been read in part (lines 1-2 of 3). "
               "Read the whole file before writing all of it."], True), "write after a partial read")
        await client.call_tool("read", {"file_path": "a.txt"})
        r = await client.call_tool("write", {"file_path": "a.txt", "content": "x\n"})
        c.eq(r.is_error, False, "write after a full read")
        r = await client.call_tool("write", {"file_path": "new/b.txt", "content": "b\n"})
        c.eq(texts(r), ["File created successfully at: new/b.txt\n\n--- /dev/null\n+++ new/b.txt\n"
                        "@@ -0,0 +1 @@\n+b\n"], "a new file")
    c.eq((w.read("a.txt"), w.read("new/b.txt")), ("x\n", "b\n"), "the files")
    return "start_only refused (isError); written after a full read; a new file needs no read"


async def changed_and_context(w, c):
    w.write("CLAUDE.md", "Run the tests first.\n")
    w.write("a.txt", "a\n")
    async with w.server("s") as client:
        r = await client.call_tool("changed", {})
        c.eq(texts(r), ["No file you have seen has changed since you saw it.\n"], "nothing changed")
        r = await client.call_tool("changed", {"all": True})
        c.eq((texts(r), r.is_error),
             (['changed: unknown argument "all"; it takes no arguments'], True), "changed with an argument")
        r = await client.call_tool("context", {})
        c.true(not r.is_error and "Run the tests first." in texts(r)[0], "context has CLAUDE.md: %r" % texts(r))
        r = await client.call_tool("context", {"for_path": 5})
        c.eq((texts(r), r.is_error), (["context: for_path must be a string, not a number"], True),
             "context with a number")
        await client.call_tool("read", {"file_path": "a.txt"})
        w.write("a.txt", "b\n")
        r = await client.call_tool("changed", {})
        a = w.path("a.txt")
        c.eq(texts(r), ["These files changed since you last saw them:\n\n%s: modified (content)\n"
                        "--- %s (as viewed)\n+++ %s (now)\n@@ -1 +1 @@\n-a\n+b\n" % (a, a, a)],
             "a change listed")
    return "changed: none, then the diff; context: CLAUDE.md; bad arguments refused (isError)"


async def change_between_read_and_edit(w, c):
    w.write("a.txt", "alpha\nbeta\n")
    async with w.server("s") as client:
        await client.call_tool("read", {"file_path": "a.txt"})
        # Another process changes the file: same size, the old mtime put back.
        subprocess.run(["sh", "-c", "t=$(stat -c %y a.txt); printf 'alpha\\nBETA\\n' > a.txt; "
                        "touch -d \"$t\" a.txt"], cwd=w.work, check=True)
        r = await client.call_tool("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "A"})
        a = w.path("a.txt")
        c.eq((texts(r), r.is_error),
             (["a.txt: modified (content): " + MODIFIED,
               "These files changed since you last saw them:\n\n%s: modified (content)\n--- %s (as viewed)\n"
               "+++ %s (now)\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n" % (a, a, a)], True),
             "the stale edit")
        c.eq(w.read("a.txt"), "alpha\nBETA\n", "nothing overwritten")
        await client.call_tool("read", {"file_path": "a.txt"})
        r = await client.call_tool("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "A"})
        c.eq(r.is_error, False, "the edit after a new read")
    c.eq(w.read("a.txt"), "A\nBETA\n", "the file")
    return "refused as modified (content), with the diff as news; applied after a new read"


def notes():
    return "".join("line %d of notes\n" % i for i in range(1, 13))


async def formatter_race(w, c):
    """A formatter rewrites line 1 while the model's edit of line 10 is on
    its way: merged, the change told with the result; then the same race
    next to the edited line (line 3, the line before it changed too):
    refused with the change, and the retry against the text told applies."""
    w.write("notes.txt", notes())
    formatted = notes().replace("line 1 of notes\n", "LINE 1 OF NOTES (formatted)\n")
    async with w.server("s") as client:
        await client.call_tool("read", {"file_path": "notes.txt"})
        w.write("notes.txt", formatted)
        r = await client.call_tool("edit", {"file_path": "notes.txt", "old_string": "line 10 of notes",
                                            "new_string": "LINE 10"})
        other = ("--- notes.txt\n+++ notes.txt\n@@ -1,4 +1,4 @@\n-line 1 of notes\n+LINE 1 OF NOTES (formatted)\n"
                 " line 2 of notes\n line 3 of notes\n line 4 of notes\n")
        mine = ("--- notes.txt\n+++ notes.txt\n@@ -7,6 +7,6 @@\n line 7 of notes\n line 8 of notes\n"
                " line 9 of notes\n-line 10 of notes\n+LINE 10\n line 11 of notes\n line 12 of notes\n")
        c.eq((texts(r), r.is_error),
             (["The file notes.txt has been updated successfully. notes.txt had been changed since you read it "
               "(by the user or another program); that change is kept and your edit was made beside it. You now "
               "hold the file with both; the other change:\n\n%s\n\n%s" % (other, mine)], False),
             "the edit of line 10")
        c.eq(r.meta["fsview/edit"]["verdict"], "merged", "its verdict")
        both = formatted.replace("line 10 of notes", "LINE 10")
        c.eq(w.read("notes.txt"), both, "both changes kept")
        near = both.replace("line 2 of notes\n", "line 2  of  notes\n")
        w.write("notes.txt", near)
        r = await client.call_tool("edit", {"file_path": "notes.txt", "old_string": "line 3 of notes",
                                            "new_string": "LINE 3"})
        a = w.path("notes.txt")
        c.eq((texts(r), r.is_error),
             (["notes.txt: modified (content): " + MODIFIED,
               "These files changed since you last saw them:\n\n%s: modified (content)\n--- %s (as viewed)\n"
               "+++ %s (now)\n@@ -1,10 +1,10 @@\n LINE 1 OF NOTES (formatted)\n-line 2 of notes\n+line 2  of  notes\n"
               " line 3 of notes\n line 4 of notes\n line 5 of notes\n line 6 of notes\n line 7 of notes\n"
               " line 8 of notes\n line 9 of notes\n LINE 10\n" % (a, a, a)], True),
             "the edit of line 3, next to the change")
        c.eq(w.read("notes.txt"), near, "nothing overwritten")
        r = await client.call_tool("edit", {"file_path": "notes.txt", "old_string": "line 3 of notes",
                                            "new_string": "LINE 3"})
        c.eq(r.is_error, False, "the retry against the text told")
    c.eq(w.read("notes.txt"), near.replace("line 3 of notes", "LINE 3"), "the file")
    return "far: merged, the change told with the result; near: refused with the change, the retry applied"


async def range_race(w, c):
    """Lines 10-20 of a 40-line file read; a line added at the top and line
    12 changed before the edit of line 17: merged, what became of the lines
    read told with the result, where they are now; the agent then holds
    only the line its edit showed it, so a whole-file write is refused."""
    text = "".join("line %d\n" % i for i in range(1, 41))
    w.write("long.txt", text)
    theirs = "#!/bin/sh\n" + text.replace("line 12\n", "line 12 formatted\n")
    async with w.server("s") as client:
        await client.call_tool("read", {"file_path": "long.txt", "offset": 10, "limit": 11})
        w.write("long.txt", theirs)
        r = await client.call_tool("edit", {"file_path": "long.txt", "old_string": "line 17\n",
                                            "new_string": "LINE 17\n"})
        other = ("--- long.txt\n+++ long.txt\n@@ -10,7 +10,7 @@\n line 9\n line 10\n line 11\n-line 12\n"
                 "+line 12 formatted\n line 13\n line 14\n line 15\n")
        mine = ("--- long.txt\n+++ long.txt\n@@ -15,7 +15,7 @@\n line 14\n line 15\n line 16\n-line 17\n+LINE 17\n"
                " line 18\n line 19\n line 20\n")
        c.eq((texts(r), r.is_error),
             (["The file long.txt has been updated successfully. long.txt had been changed since you read lines "
               "10-20 (by the user or another program); that change is kept and your edit was made beside it. "
               "Those lines are 11-21 now, and you hold them with both; what changed in them:\n\n%s\n\n%s"
               % (other, mine)], False),
             "the edit of line 17")
        c.eq(r.meta["fsview/edit"]["merged"]["lines"], {"seen": [10, 20], "now": [11, 21]}, "the lines")
        c.eq(w.read("long.txt"), theirs.replace("line 17\n", "LINE 17\n"), "both changes kept")
        r = await client.call_tool("write", {"file_path": "long.txt", "content": "x\n"})
        c.eq((texts(r), r.is_error),
             (["long.txt: start_only: File has only been read in part (line 18 of 41). Read the whole file "
               "before writing all of it."], True), "a whole-file write after")
    return "merged, what became of the lines read told with the result; a whole write then refused"


async def malformed(w, c):
    w.write("a.txt", "a\n")
    async with w.server("s") as client:
        try:
            await client.call_tool("Read", {"file_path": "a.txt"})
            c.true(False, "an unknown tool raised no error")
        except MCPError as e:
            c.eq((e.code, e.error.message),
                 (-32602, 'unknown tool "Read"; the tools are read, edit, write, changed and context'),
                 "an unknown tool")
        r = await client.call_tool("read", {"file_path": 7})
        c.eq((texts(r), r.is_error), (["read: file_path must be a string, not a number"], True),
             "a number for a path")
        r = await client.call_tool("edit", {"file_path": "a.txt"})
        c.eq((texts(r), r.is_error), (["edit: old_string is required (a string)"], True), "missing arguments")
        try:
            await client.session.send_request(types.Request(method="no/such/method", params=None),
                                              types.EmptyResult)
            c.true(False, "an unknown method raised no error")
        except MCPError as e:
            c.eq(e.code, -32601, "an unknown method")
        r = await client.call_tool("read", {"file_path": "a.txt"})
        c.eq(texts(r), ["1\ta\n"], "still serving")
    return "unknown tool: -32602, unknown method: -32601 (protocol errors); bad arguments: isError; still serving"


async def disconnect_mid_call(w, c):
    # A read big enough to take a while; the client gives up on it and
    # leaves. Nothing it never received may be recorded.
    with open(w.path("big.txt"), "w") as f:
        for i in range(400000):
            f.write("line %d of a big file\n" % i)
    w.write("small.txt", "s\n")
    outcome = ""
    async with w.server("s", "--cap", "64M") as client:
        await client.call_tool("read", {"file_path": "small.txt"})
        try:
            await asyncio.wait_for(client.call_tool("read", {"file_path": "big.txt"}), 0.05)
            outcome = "the big read finished before the client left"
        except (asyncio.TimeoutError, TimeoutError):
            outcome = "cancelled after 50 ms, then left"
    # The server is gone once the client closed; its session file is whole.
    time.sleep(0.5)
    c.eq(w.views("s"), [("small.txt", "full", "read")], "views after the disconnect")
    chk = w.fsview("fsview-check-edit", "--sid", "s", "big.txt")
    c.eq(chk.returncode, 1, "big.txt not read")
    lst = w.fsview("fsview-session", "list")
    c.eq(lst.returncode, 0, "the session file is usable: " + lst.stderr)
    async with w.server("s") as client:
        r = await client.call_tool("read", {"file_path": "small.txt"})
        c.eq(r.meta["fsview/read"]["unchanged"], True, "a new server on the session")
    return outcome + "; no view of big.txt; the session file fine"


async def eight_clients(w, c):
    w.write("shared.txt", "version 1\n")
    for i in range(8):
        w.write("own%d.txt" % i, "file %d\n" % i)

    async def one(i, start):
        async with w.server("crew-%d" % i) as client:
            await client.call_tool("read", {"file_path": "shared.txt"})
            await client.call_tool("read", {"file_path": "own%d.txt" % i})
            await start.wait()
            own, shared = await asyncio.gather(
                client.call_tool("edit", {"file_path": "own%d.txt" % i, "old_string": "file",
                                          "new_string": "edited"}),
                client.call_tool("edit", {"file_path": "shared.txt", "old_string": "version 1",
                                          "new_string": "version by %d" % i}))
            return own, shared

    start = asyncio.Event()
    tasks = [asyncio.create_task(one(i, start)) for i in range(8)]
    await asyncio.sleep(1.0)
    start.set()
    results = await asyncio.gather(*tasks)
    winners = [i for i, (_, s) in enumerate(results) if not s.is_error]
    c.eq(len(winners), 1, "one shared edit lands")
    # A loser already told of the winner's change (issue 25: a change told
    # whole moves the view) passes the gate and finds its old text gone.
    lost = [s.meta["fsview/edit"]["verdict"] for _, s in results if s.is_error]
    c.true(len(lost) == 7 and all(v in ("modified", "not_found") for v in lost),
           "the others are refused as modified (or not_found once told): %s" % lost)
    c.true(all(not o.is_error for o, _ in results), "every own edit lands")
    if winners:
        c.eq(w.read("shared.txt"), "version by %d\n" % winners[0], "the shared file")
    for i in range(8):
        c.eq(w.read("own%d.txt" % i), "edited %d\n" % i, "own%d.txt" % i)
        ev = w.fsview("fsview-session", "events", "--sid", "crew-%d" % i, "--json")
        actions = [json.loads(l)["action"] for l in ev.stdout.splitlines()]
        c.eq((actions.count("read"), actions.count("edit")), (2, 2), "crew-%d's reads and edits logged" % i)
        # Told that shared.txt changed: the losers at least once (the race's
        # undone swaps can be seen, and told, as changes of their own).
        if i not in winners:
            c.true(actions.count("remind") + actions.count("told") >= 1,
                   "crew-%d told of the change: %s (its shared edit: %s)"
                   % (i, actions, results[i][1].meta["fsview/edit"]["verdict"]))
    return "8 servers at once: own edits all land; shared: 1 lands, 7 modified and told; every event logged"


SCENARIOS = [
    ("tools listed", tools_listed),
    ("read", read_tool),
    ("edit", edit_tool),
    ("write", write_tool),
    ("changed, context", changed_and_context),
    ("change between read and edit", change_between_read_and_edit),
    ("formatter race, far and near", formatter_race),
    ("formatter race after a range read", range_race),
    ("malformed requests", malformed),
    ("client gone mid-call", disconnect_mid_call),
    ("8 clients, one session file", eight_clients),
]


async def main(only):
    for name, fn in SCENARIOS:
        if only and not any(o in name for o in only):
            continue
        w = Work()
        c = Checks()
        what = ""
        try:
            what = await asyncio.wait_for(fn(w, c), 120)
        except Exception as e:  # a scenario that breaks is a failure, with its trace
            c.failures.append("%s: %s" % (type(e).__name__, "".join(traceback.format_exception(e))[-1500:]))
        finally:
            w.close()
        print(json.dumps({"scenario": name, "what": what, "failures": c.failures}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[2:]))
