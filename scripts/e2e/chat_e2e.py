"""End-to-end scenarios for the agents that call an OpenAI-compatible Chat
Completions API (chat_agents.py): Qwen Code, opencode, Copilot CLI, Droid.

Each scenario runs once with the agent alone and once with fsview wired
in by `fsview-hook install AGENT`, against a scripted model
(openai_chat.py), and records what the agent did in a table. The checks
are on what the model received (tool results, context) and on the files.
`main()` is the command line of scripts/e2e-qwen, e2e-opencode and
e2e-copilot.
"""

import contextlib
import json
import os
import re
import shutil
import sys

import chat_agents
import harness
import shell
from harness import ROOT, fsview_bin_dir
from model import Server
from openai_chat import Chat, Conversations, call, message_text, text, tool_results, usage

AGENT = None  # the agent's class, set by main()
BINARY = None
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)\n", "x = 2"],
                                   "outputs": [], "execution_count": None}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
NOT_READ = "File has not been read yet. Read it first before writing to it."
# The gate's `modified` words; the refusal then either asks for a re-read
# or carries the whole change (issue 25).
MODIFIED = "File has been modified since read, either by the user or by a linter."


@contextlib.contextmanager
def agent(run, turns):
    """A model server playing `turns`, and the agent talking to it."""
    proto = Chat(turns)
    with Server(proto) as srv:
        a = AGENT(BINARY, run.ws, srv.url)
        yield proto, a
        run.check(not srv.errors, "model server errors: %s" % srv.errors)


def wire(run, a, *extra):
    if run.fsview:
        a.install_fsview(*extra)


def tool(spec):
    name, args = spec
    return call(name, args)


def result_of(proto, c, context=True):
    """The tool result the model got for call `c`, or None. A hook's
    context that Cline CLI sends right after it (`<hook_context ...>`, a
    refusal) comes first, and what Copilot CLI appends to it ("Tool "edit"
    succeeded. Additional guidance from postToolUse hooks:" and the hook's
    context) stays, unless `context` is false."""
    for req in reversed(proto.main):
        msgs = req.json.get("messages", [])
        for tid, body in tool_results(req.json):
            if tid == c["id"]:
                if not context:
                    body = re.split(r"\n\nTool \"[^\"]*\" succeeded\. Additional guidance from postToolUse hooks:\n",
                                    body)[0]
                return (hook_context(msgs, tid) if context else "") + body
    return None


def hook_context(msgs, tid):
    """The text of the `<hook_context>` messages after tool result `tid`."""
    out = ""
    for i, m in enumerate(msgs):
        if m.get("role") == "tool" and m.get("tool_call_id") == tid:
            for n in msgs[i + 1:]:
                t = message_text(n.get("content"))
                if n.get("role") != "user" or not t.startswith("<hook_context"):
                    break
                for part in re.findall(r"<hook_context [^>]*>\n(.*?)\n</hook_context>", t, re.S):
                    out += part + "\n"
    return out


def outcome(a, proto, c):
    r = result_of(proto, c)
    if r is None:
        return "never ran"
    if a.succeeded(result_of(proto, c, context=False)):
        return "applied"
    first = r.strip().splitlines()[0] if r.strip() else "(empty)"
    return "refused: " + (first if len(first) <= 150 else first[:147] + "...")


def applied(run, a, proto, c, want, what):
    got = outcome(a, proto, c)
    run.check(got.startswith(want), "%s: %s, want %s" % (what, got, want))
    return got


def lines(n, fmt="line %d"):
    return "".join((fmt % i) + "\n" for i in range(1, n + 1))


def request_text(req):
    """Every message of a request as text."""
    out = []
    for m in req.json.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            c = "\n".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append(c or "")
    return "\n".join(out)


def views(a, sid):
    p = a.fsview("fsview-session", "show", "--sid", sid, "--json")
    out = {}
    for line in p.stdout.splitlines():
        v = json.loads(line)
        out.setdefault(v["path"], []).append(v)
    return out


def only_session(a):
    p = a.fsview("fsview-session", "list", "--json")
    sids = [json.loads(x)["sid"] for x in p.stdout.splitlines()]
    return sids[0] if len(sids) == 1 else None


# -- scenarios ---------------------------------------------------------------


def same_size_change_before_edit(run):
    """A same-size change with the old mtime put back (cp -p, rsync -t)."""
    ws = run.ws
    ws.write("conf.ini", "timeout = 30\n")
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("conf.ini")))
        edit = tool(a.edit(ws.path("conf.ini"), "timeout", "max_wait"))

        def change(body):
            ws.write("conf.ini", "timeout = 99\n", mtime_of=ws.times("conf.ini"))
            return [edit]

        proto.turns = [[read], change, [text("done")]]
        wire(run, a)
        a.prompt("edit conf.ini")
        got = applied(run, a, proto, edit, "refused" if run.fsview else "applied", "Edit")
        if run.fsview:
            run.check(MODIFIED in got, "the gate's wording: " + got)
        run.step("Stale edit: same-size change, old mtime put back, between read and edit", got)


def stale_edit(run, line, what):
    """The user adds `line` to the file after the read and before the
    model's edit of it; the edit's outcome is the step `what`. Returns the
    agent's protocol and the edit's call."""
    ws = run.ws
    ws.write("notes.txt", "alpha\nbeta\n")
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("notes.txt")))
        edit = tool(a.edit(ws.path("notes.txt"), "beta", "gamma"))

        def change(body):
            ws.write("notes.txt", "alpha\nbeta\n" + line)
            return [edit]

        proto.turns = [[read], change, [text("done")]]
        wire(run, a)
        a.prompt("edit notes.txt")
        got = applied(run, a, proto, edit, "refused" if run.fsview else "", "Edit")
        run.step(what, got)
    return proto, edit


def changed_before_edit(run):
    """The user changes the file after the read: an ordinary change."""
    stale_edit(run, "user's line\n", "Stale edit: file changed (new size) between read and edit")


def changed_before_edit_angle(run):
    """The same, the user's line holding `<`, `>` and `&`. Qwen Code
    0.24.4 refuses the edit itself, before fsview's hook, and fsview tells
    the change in the context before the next model call, which Qwen Code
    escapes (`<`, `>`): told as its exact HTML escape, said so. (Were
    fsview's refusal first, its reason would carry the diff as it is.)"""
    proto, edit = stale_edit(run, "user's <line> && more\n", "Stale edit: the user's new line has < and >")
    if run.fsview:
        r = result_of(proto, edit)
        ctx = request_text(proto.main[-1])
        raw = "+user's <line> && more" in r
        escaped = ("[fsview] Qwen Code shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a "
                   "greater-than sign, &amp; as an ampersand.\n" in ctx
                   and "+user's &lt;line&gt; &amp;&amp; more\n" in ctx)
        run.check(raw or escaped, "the change told whole: %r" % ctx[-600:])
        run.step("... the change, told", "in fsview's refusal, as it is" if raw else
                 "after Qwen Code's own refusal, as its HTML escape (said so)" if escaped else "not told")


def edit_unread(run):
    ws = run.ws
    ws.write("never_read.py", "x = 1\n")
    ws.commit()
    with agent(run, []) as (proto, a):
        edit = tool(a.edit(ws.path("never_read.py"), "x = 1", "x = 2"))
        proto.turns = [[edit], [text("done")]]
        wire(run, a)
        a.prompt("edit never_read.py")
        got = applied(run, a, proto, edit, "refused" if run.fsview else "", "Edit")
        run.step("Edit of a file never read", got)


def write_after_partial_read(run):
    """Lines 1-5 of 50 read, then the whole file replaced: 45 lines the model
    never saw."""
    ws = run.ws
    ws.write("app.log", lines(50))
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("app.log"), 1, 5))
        write = tool(a.write(ws.path("app.log"), "line 1 only\n"))
        proto.turns = [[read], [write], [text("done")]]
        wire(run, a)
        a.prompt("rewrite app.log")
        got = outcome(a, proto, write)
        if run.fsview:
            run.check(got.startswith("refused"), "Write after a partial read: " + got)
            if a.name != "copilot":
                run.check("(lines 1-5 of 50)" in got, "names the lines seen: " + got)
        lost = got == "applied" and ws.read("app.log") == "line 1 only\n"
        run.step("Whole-file write after reading lines 1-5 of 50", got + (" (45 unseen lines gone)" if lost else ""))


def write_after_capped_read(run):
    """A whole-file read the agent caps (Qwen Code: 1,000 lines; opencode:
    2,000 lines or 50 KB), then the whole file replaced."""
    ws = run.ws
    ws.write("long.txt", lines(2500, fmt="%d"))
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("long.txt")))
        write = tool(a.write(ws.path("long.txt"), "short now\n"))
        seen = {}

        def look(body):
            if run.fsview:
                seen.update(views(a, only_session(a)))
            return [write]

        proto.turns = [[read], look, [text("done")]]
        wire(run, a)
        a.prompt("rewrite long.txt")
        shown = result_of(proto, read) or ""
        last = re.findall(r"^(?:(\d+): )?(\d+)$", shown, re.M)
        last = int(last[-1][1]) if last else 0
        run.check(0 < last < 2500, "a first page only (to line %d)" % last)
        got = applied(run, a, proto, write, "refused" if run.fsview else "applied", "Write")
        run.step("Read of 2,500 lines without a range", "lines 1-%d shown" % last)
        run.step("... then a whole-file write", got)
        if run.fsview:
            v = (seen.get("long.txt") or [{}])[0]
            run.eq((v.get("kind"), v.get("offset"), v.get("lines")), ("start", 1, last), "the read's view")


def prompt_reminder(run):
    """A file the agent read changes; the next prompt tells it, once, in a
    form the agent does not alter."""
    ws = run.ws
    body = lines(12)
    ws.write("notes.txt", body)
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("notes.txt")))
        proto.turns = [[read], [text("read it")], [text("ok")], [text("ok again")]]
        wire(run, a)
        r = a.prompt("read notes.txt")
        run.check(r.session_id, "a session id: %s" % r.stderr[-300:])
        ws.write("notes.txt", body.replace("line 6\n", "line six: if a < b\n"))
        a.prompt("anything new?", resume=r.session_id)
        n = len(proto.main)
        ctx = request_text(proto.main[-1])
        told = "notes.txt: modified (content)" in ctx
        run.check(told == run.fsview, "fsview's reminder at the next prompt: %s" % told)
        reminder = ctx.partition("These files changed since you last saw them:")[2]
        escaped = a.name == "qwen"
        run.check(("&lt;" in reminder) == (escaped and run.fsview), "escaped markup only where the agent escapes")
        diff = ("+line six: if a &lt; b" if escaped else "+line six: if a < b") in ctx
        if run.fsview:
            if escaped:
                # Qwen Code escapes < and > (not &) in hook context: fsview
                # escapes & too and says so, an exact HTML escape.
                run.check(diff and "[fsview] Qwen Code shows this context HTML-escaped: read &lt; as a less-than "
                          "sign, &gt; as a greater-than sign, &amp; as an ampersand.\nThese files changed" in ctx,
                          "Qwen Code: the diff as its HTML escape, said so: %r" % ctx[-600:])
            else:
                run.check(diff and "-line 6" in ctx, "the diff, verbatim")
        what = "nothing said"
        if told:
            what = "told, with the diff" + (" (HTML-escaped, said so: the agent escapes <)" if escaped else "")
        run.step("A file it read changed; next prompt", what)
        a.prompt("and now?", resume=r.session_id)
        again = request_text(proto.main[-1]).count("notes.txt: modified") > (1 if told else 0)
        run.check(not again, "not told twice")
        run.check(len(proto.main) >= n + 1, "a request for the third prompt")
        run.step("... the prompt after", "told again" if again else "not repeated")


def notes_and_other(ws):
    """notes.txt (12 lines, returned) and other.txt, committed."""
    body = lines(12)
    ws.write("notes.txt", body)
    ws.write("other.txt", "other\n")
    ws.commit()
    return body


def tool_reminder(run):
    """For an agent whose prompts fire no hook (Droid headless): a file it
    read changes; the next tool result tells it, once, verbatim."""
    ws = run.ws
    body = notes_and_other(ws)
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("notes.txt")))
        other = tool(a.read(ws.path("other.txt")))
        again = tool(a.read(ws.path("other.txt")))

        def change(body_):
            ws.write("notes.txt", body.replace("line 6\n", "line six: if a < b\n"))
            return [other]

        proto.turns = [[read], change, [again], [text("done")]]
        wire(run, a)
        r = a.prompt("read notes.txt, then other.txt twice")
        run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
        run.check(len(proto.main) == 4, "four model requests: %d" % len(proto.main))
        after = request_text(proto.main[2]) if len(proto.main) > 2 else ""
        told = "notes.txt: modified (content)" in after
        run.check(told == run.fsview, "fsview's reminder with the next tool result: %s" % told)
        diff = "+line six: if a < b" in after and "-line 6" in after
        if run.fsview:
            run.check(diff, "the diff, verbatim")
        run.step("A file it read changed; the next tool result",
                 ("told, with the diff" if diff else "told") if told else "nothing said")
        last = request_text(proto.main[-1]) if proto.main else ""
        repeated = last.count("notes.txt: modified") > (1 if told else 0)
        run.check(not repeated, "not told twice")
        run.step("... the tool result after", "told again" if repeated else "not repeated")


# The agents whose own edit tool refuses an edit of a file changed since
# its own last read, whatever the model was told (Droid: "has been
# modified externally since it was last read"): fsview's refusal carries
# the change and asks for the read; nothing is merged.
REREADS = ("droid",)
# The agents whose own check refuses such an edit before any hook runs
# (Qwen Code: "has been modified since you last read it (mtime or size
# changed)"): fsview is never asked; it tells the change before the next
# step, and the model reads the file again, as the agent asks, and retries.
OWN_CHECK = {"qwen": "modified since you last read it"}


def formatter_race(run, a, edited_line):
    """A formatter rewrites line 1 of a 12-line file after the model's read,
    while the model's edit of line `edited_line` is on its way (issue 41's
    race: no telling can come first). Near the start, the line before the
    edited one changes too. Returns the calls, the turns after the read
    (a refusal that carried the change is retried, after a read where the
    agent asks for one) and the file both changes make."""
    ws = run.ws
    body = "".join("line %d of notes\n" % i for i in range(1, 13))
    ws.write("notes.txt", body)
    ws.commit()
    old = "line %d of notes" % edited_line
    formatted = body.replace("line 1 of notes\n", "LINE 1 OF NOTES (formatted)\n")
    if edited_line <= 4:
        formatted = formatted.replace("line %d of notes\n" % (edited_line - 1),
                                      "line %d  of  notes\n" % (edited_line - 1))
    read = tool(a.read(ws.path("notes.txt")))
    edit = tool(a.edit(ws.path("notes.txt"), old, old.upper()))
    again = tool(a.read(ws.path("notes.txt")))
    retry = tool(a.edit(ws.path("notes.txt"), old, old.upper()))

    def change(body_):
        ws.write("notes.txt", formatted)
        return [edit]

    def retry_if_told(body_):
        seen = json.dumps(body_)
        if AGENT.name in OWN_CHECK and OWN_CHECK[AGENT.name] in seen:
            return [again]
        if "modified since read" not in seen or "LINE 1 OF NOTES (formatted)" not in seen:
            return [text("done")]
        return [again] if AGENT.name in REREADS else [retry]

    turns = [[read], change, retry_if_told]
    if AGENT.name in REREADS or AGENT.name in OWN_CHECK:
        turns.append([retry])
    return edit, retry, turns + [[text("done")]], formatted.replace(old, old.upper())


def race_played(run, proto, a, edited_line):
    """formatter_race played: the agent prompted to edit, its exit
    checked; the calls, the file both changes make, and what the edit got."""
    edit, retry, turns, both = formatter_race(run, a, edited_line)
    proto.turns = turns
    wire(run, a)
    r = a.prompt("edit notes.txt")
    run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
    return edit, retry, both, outcome(a, proto, edit)


def refused_by_the_agent(run, a, proto, edit, retry, both):
    """An agent whose own check refused the edit before any hook
    ([`OWN_CHECK`]): refused in its words; with fsview the change told
    before the next step; the retry after the read it asks for applied."""
    got = outcome(a, proto, edit)
    run.check(got.startswith("refused") and OWN_CHECK[AGENT.name] in got, "refused by the agent: %s" % got)
    after = request_text(proto.main[2]) if len(proto.main) > 2 else ""
    told = "+LINE 1 OF NOTES (formatted)" in after
    run.check(told == run.fsview, "the change told before the next step: %s" % told)
    run.step("... what the model is told before its next step", "the change, as a diff" if told else "nothing")
    run.step("... the retry after the read the agent asks for", applied(run, a, proto, retry, "applied", "the retry"))
    run.eq(run.ws.read("notes.txt"), both, "both changes in the file")


def refused_then_retried(run, a, proto, edit, retry, both):
    """With fsview: the edit refused with the change, the retry applied."""
    got = outcome(a, proto, edit)
    run.check(got.startswith("refused") and MODIFIED[:30] in got, "refused with the change: %s" % got)
    full = result_of(proto, edit) or ""
    run.check("+LINE 1 OF NOTES (formatted)" in full, "the refusal carries the change: %r" % full[-400:])
    how = "... the retry against the told text" + (", after the read Droid asks for" if AGENT.name in REREADS else "")
    run.step(how, applied(run, a, proto, retry, "applied", "the retry"))
    run.eq(run.ws.read("notes.txt"), both, "both changes in the file")


def merge_far_edit(run):
    """The formatter's change is 8 lines from the edit: with fsview the edit
    is let through onto the formatted file and the change told with its
    result (after the tool: fsview's reminder); alone the agent does as it
    does. An agent whose own check refuses it (Droid) is refused by fsview
    with the change, as the near edit."""
    ws = run.ws
    with agent(run, []) as (proto, a):
        edit, retry, both, got = race_played(run, proto, a, 10)
        after = request_text(proto.main[2]) if len(proto.main) > 2 else ""
        told = "+LINE 1 OF NOTES (formatted)" in after and "-line 1 of notes" in after
        kept = ws.read("notes.txt") == both
        run.step("Formatter changes line 1 while the edit of line 10 is on its way",
                 got + (", the change told with it" if told else ", nothing told")
                 + (", the formatter's change lost" if got == "applied" and not kept else ""))
        if AGENT.name in OWN_CHECK:
            refused_by_the_agent(run, a, proto, edit, retry, both)
        elif run.fsview and (AGENT.name in REREADS or AGENT.name in NOT_MERGED):
            refused_then_retried(run, a, proto, edit, retry, both)
        elif run.fsview:
            run.check(got == "applied", "applied with fsview: %s" % got)
            run.check(told, "the other change told with the result: %r" % after[-600:])
            run.check(kept, "both changes kept: %r" % ws.read("notes.txt"))
            sid = only_session(a) or "?"
            ev = [json.loads(x) for x in a.fsview("fsview-session", "events", "--sid", sid, "--json").stdout.splitlines()]
            run.check(any(e.get("verdict") == "merged" for e in ev), "a merged check in the log")


def merge_near_edit(run):
    """The formatter also changes the line just before the one the edit
    replaces (line 3): with fsview refused with the change (too near to
    merge), then the retry against the told text applies; alone the agent
    does as it does."""
    with agent(run, []) as (proto, a):
        edit, retry, both, got = race_played(run, proto, a, 3)
        run.step("Formatter changes the line before the one the edit replaces, while it is on its way", got)
        if AGENT.name in OWN_CHECK:
            refused_by_the_agent(run, a, proto, edit, retry, both)
        elif run.fsview:
            refused_then_retried(run, a, proto, edit, retry, both)


def merge_range_edit(run):
    """A 40-line file read as lines 10-30 (the agent's read with a range);
    while the edit of line 20 is on its way, a formatter changes line 14
    (inside the lines read, 6 lines from the edit) and line 1 (outside
    them). With fsview the edit is let through and what became of the
    lines read is told after its result, where they are now (line 14's
    change, nothing of line 1); alone the agent applies it, telling
    nothing."""
    ws = run.ws
    body = "".join("line %d of notes\n" % i for i in range(1, 41))
    ws.write("notes.txt", body)
    ws.commit()
    formatted = (body.replace("line 1 of notes\n", "LINE 1 OF NOTES (formatted)\n")
                 .replace("line 14 of notes\n", "line 14  of  notes\n"))
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("notes.txt"), 10, 21))
        edit = tool(a.edit(ws.path("notes.txt"), "line 20 of notes", "LINE 20 OF NOTES"))

        def change(body_):
            ws.write("notes.txt", formatted)
            return [edit]

        proto.turns = [[read], change, [text("done")]]
        wire(run, a)
        r = a.prompt("edit notes.txt")
        run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
        got = outcome(a, proto, edit)
        after = request_text(proto.main[2]) if len(proto.main) > 2 else ""
        told = ("lines 10-30)" in after and "+line 14  of  notes" in after
                and "LINE 1 OF NOTES" not in after)
        run.step("Formatter changes line 14 (and line 1) while the edit of line 20 of lines 10-30 read is on its way",
                 got + (", what became of the lines read told with it" if told else ", nothing told"))
        run.check(got == "applied", "the edit applied: %s" % got)
        run.check(told == run.fsview, "told after the result only with fsview: %r" % after[-800:])
        run.eq(ws.read("notes.txt"), formatted.replace("line 20 of notes", "LINE 20 OF NOTES"),
               "both changes kept")


def short_reread(run):
    """A whole re-read of a file the conversation holds, unchanged: with
    fsview the model gets a short notice in place of the text (it still
    holds the text); the same read after the file changed shows the text;
    an edit after the notice goes through."""
    ws = run.ws
    body = lines(40, fmt="line %d of notes")
    ws.write("notes.txt", body)
    ws.commit()
    with agent(run, []) as (proto, a):
        first = tool(a.read(ws.path("notes.txt")))
        again = tool(a.read(ws.path("notes.txt")))
        edit = tool(a.edit(ws.path("notes.txt"), "line 7 of notes", "line seven of notes"))
        after = tool(a.read(ws.path("notes.txt")))
        proto.turns = [[first], [again], [edit], [after], [text("done")]]
        wire(run, a)
        r = a.prompt("read notes.txt twice, change line 7, read it again")
        run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
        shown = result_of(proto, again) or ""
        short = "is unchanged (40 lines) since " in shown
        run.check(short == run.fsview, "the re-read answered short: %s" % short)
        run.check(("line 12 of notes" in shown) != short, "the text, or the notice alone: %r" % shown[:200])
        run.step("A whole re-read of an unchanged file", "a notice instead of the text" if short else "the text again")
        applied(run, a, proto, edit, "applied", "the edit after the re-read")
        run.step("... an edit after it", outcome(a, proto, edit))
        shown = result_of(proto, after) or ""
        # After its own edit the model holds the new text too: short again.
        short = "is unchanged (40 lines) since " in shown
        run.check(short == run.fsview, "the read after the edit answered short: %s" % short)
        run.step("... a whole read after its own edit", "a notice instead of the text" if short else "the text again")


def normal_work(run):
    """Ordinary work goes through: no false refusals."""
    ws = run.ws
    ws.write("a.py", "def f():\n    return 1\n")
    ws.write("crlf.txt", b"one\r\ntwo\r\n")
    ws.write("trail.txt", "keep   \nthese\t\nends\n")
    ws.write("nb.ipynb", NOTEBOOK)
    ws.commit()
    with agent(run, []) as (proto, a):
        P = ws.path
        whole = a.name not in ("copilot", "cline")  # their create refuses an existing file
        groups = [
            ("Read a.py, edit it", [a.read(P("a.py")), a.edit(P("a.py"), "return 1", "return 2")]),
            ("... edit it again", [a.edit(P("a.py"), "return 2", "return 3")]),
        ]
        if whole:
            groups.append(("... write it whole", [a.write(P("a.py"), "def f():\n    return 4\n")]))
        groups += [
            ("Write a new file, edit it", [a.write(P("new.py"), "x = 1\n"), a.edit(P("new.py"), "x = 1", "x = 2")]),
            ("Read a CRLF file, edit it", [a.read(P("crlf.txt")), a.edit(P("crlf.txt"), "two", "TWO")]),
            ("Read lines 2-3 of 3, edit line 2", [a.read(P("trail.txt"), 2, 2), a.edit(P("trail.txt"), "these", "those")]),
        ]
        if a.name == "qwen":
            groups.append(("Read a notebook, notebook_edit a cell", [a.read(P("nb.ipynb")), (
                "notebook_edit", {"notebook_path": P("nb.ipynb"), "cell_id": "c1", "new_source": "print(42)"})]))
        calls = [(name, [tool(s) for s in specs]) for name, specs in groups]
        proto.turns = [[c] for _, group in calls for c in group] + [[text("done")]]
        wire(run, a)
        r = a.prompt("work")
        run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
        for name, group in calls:
            got = [outcome(a, proto, c) for c in group]
            changes = [g for c, g in zip(group, got) if c["name"] != a.read("x")[0]]
            bad = [g for g in changes if g != "applied"]
            run.check(not bad, "%s: %s" % (name, bad))
            run.step(name, "all applied" if not bad else "; ".join(bad))
        want = "def f():\n    return %d\n" % (4 if whole else 3)
        run.eq(ws.read("a.py"), want, "a.py at the end")
        if run.fsview and r.session_id:
            v = views(a, r.session_id)
            fresh = {p: all(x["fresh"] for x in vs) for p, vs in v.items()}
            run.check(fresh and all(fresh.values()), "every view fresh at the end: %s" % fresh)


def hook_missing(run):
    """The installed fsview-hook gone: the gate fails closed."""
    if not run.fsview:
        return
    ws = run.ws
    ws.write("x.txt", "x = 1\n")
    ws.commit()
    with agent(run, []) as (proto, a):
        read = tool(a.read(ws.path("x.txt")))
        edit = tool(a.edit(ws.path("x.txt"), "x = 1", "x = 2"))
        proto.turns = [[read], [edit], [text("done")]]
        tmp = os.path.join(ws.root, "bin")
        os.makedirs(tmp)
        shutil.copy(os.path.join(fsview_bin_dir(), "fsview-hook"), tmp)
        a.install_fsview(binary=os.path.join(tmp, "fsview-hook"))
        shutil.rmtree(tmp)
        a.prompt("edit x.txt")
        got = applied(run, a, proto, edit, "refused", "Edit with the hook gone")
        run.eq(ws.read("x.txt"), "x = 1\n", "x.txt after the refused edit")
        run.step("Read, then edit with the installed fsview-hook deleted", got)


@contextlib.contextmanager
def conversation(run, scripts):
    """A model server playing scripted prompts (openai_chat.Conversations),
    and the agent talking to it."""
    proto = Conversations(scripts)
    with Server(proto) as srv:
        a = AGENT(BINARY, run.ws, srv.url)
        yield proto, a
        run.check(not srv.errors, "model server errors: %s" % srv.errors)


def at_mention_edit(run):
    """`@m.txt`: Qwen Code, pi (its `@FILE` argument) and Droid read the
    file themselves and put its text before the prompt (Droid: a message of
    its own, in its transcript only); the edit after it (and again, and a
    write) goes through."""
    ws = run.ws
    ws.write("m.txt", "one\ntwo\n")
    ws.commit()
    with conversation(run, {}) as (proto, a):
        P = ws.path
        e1 = tool(a.edit(P("m.txt"), "one", "ONE"))
        e2 = tool(a.edit(P("m.txt"), "two", "TWO"))
        w = tool(a.write(P("m.txt"), "ONE\nTWO\nthree\n"))
        proto.scripts["[mention]"] = [[e1], [e2], [w], [text("done")]]
        wire(run, a)
        a.prompt("@m.txt change it [mention]")
        got = [outcome(a, proto, c) for c in (e1, e2, w)]
        run.check(all(g == "applied" for g in got), "edit, edit again, write: %s" % got)
        run.step("@m.txt, then edit, edit again, write", "; ".join(sorted(set(got))))


def compaction(run):
    """a.txt read, then `/compress`: the conversation is a summary, and the
    edit of a.txt from its memory is refused until a.txt is read again.
    Qwen Code alone refuses it too: its own read cache is per process, and
    each headless prompt is a new one (so its refusal comes first here;
    fsview's release shows in the session's log)."""
    ws = run.ws
    ws.write("a.txt", "one\ntwo\n")
    ws.commit()
    with conversation(run, {}) as (proto, a):
        P = ws.path
        e = tool(a.edit(P("a.txt"), "one", "ONE"))
        r2 = tool(a.read(P("a.txt")))
        e2 = tool(a.edit(P("a.txt"), "two", "TWO"))
        proto.scripts["[read]"] = [[tool(a.read(P("a.txt")))], [text("read")]]
        proto.scripts["[after]"] = [[e], [r2], [e2], [text("done")]]
        wire(run, a)
        r = a.prompt("[read]")
        a.prompt("/compress", resume=r.session_id)
        a.prompt("[after] edit a.txt", resume=r.session_id)
        run.step("read a.txt; /compress; edit it", applied(run, a, proto, e, "refused",
                                                            "the edit after the compaction"))
        if run.fsview:
            log = [json.loads(x) for x in a.fsview("fsview-session", "events", "--sid", r.session_id,
                                                    "--json").stdout.splitlines()]
            released = [x["detail"] for x in log if x["action"] == "release"]
            run.check(released == ["1 views no longer held, 0 held again"],
                      "fsview released the view at PostCompact: %s" % released)
        run.step("... read it again, edit it", applied(run, a, proto, e2, "applied", "the edit after a read"))


# Tokens a scripted answer reports to make the agent compact (over any
# context window it knows).
OVERFLOW = 5_000_000


def compaction_drops_views(run, force, how, fillers=0):
    """a.txt and b.txt read (a.txt first, then `fillers` more files after
    b.txt), then a compaction the agent makes headless: `force(run, a,
    read_turns)` prepares it and returns the first prompt's turns, one of
    them reporting a usage over the agent's threshold.
    The next prompt writes a.txt whole from what the summary remembers:
    alone applied, refused by fsview (the compaction released the view);
    then b.txt, read again, is written whole: applied."""
    ws = run.ws
    names = ["a.txt", "b.txt"] + ["%s.txt" % c for c in "cdefghij"[:fillers]]
    for n in names:
        ws.write(n, "%s one\n%s two\n" % (n, n))
    ws.commit()
    with conversation(run, {}) as (proto, a):
        P = ws.path
        reads = [[tool(a.read(P(n)))] for n in names]
        wa = tool(a.write(P("a.txt"), "a from memory\n"))
        rb = tool(a.read(P("b.txt")))
        wb = tool(a.write(P("b.txt"), "b after a read\n"))
        proto.scripts["[read]"] = force(run, a, reads + [[text("read")]])
        proto.scripts["[after]"] = [[wa], [rb], [wb], [text("done")]]
        wire(run, a)
        r = a.prompt("[read] read the files")
        run.eq(r.code, 0, "exit code of the reads (stderr: %s)" % r.stderr[-300:])
        sid = r.session_id
        run.check(sid, "a session id")
        r2 = a.prompt("[after] rewrite a.txt, then b.txt", resume=sid)
        run.eq(r2.code, 0, "exit code of the writes (stderr: %s)" % r2.stderr[-300:])
        run.check(len(proto.summaries) >= 1, "the agent asked for a summary (compacted): %d" % len(proto.summaries))
        after = [q for q in proto.main if "[after]" in request_text(q)]
        run.check(after and "a.txt one" not in request_text(after[0]),
                  "the conversation no longer holds a.txt's text when the Write is asked for")
        reads_desc = "read a.txt, b.txt" + (" and %d more" % fillers if fillers else "")
        got = outcome(a, proto, wa)
        want = "refused" if run.fsview else getattr(force, "alone", "applied")
        run.check(got.startswith(want), "the Write of a.txt from memory: %s, want %s" % (got, want))
        if run.fsview:
            full = result_of(proto, wa) or ""
            own = getattr(force, "own_refusal", None)
            if own and own in full:
                # The agent's own check refuses first (fsview's release
                # shows in the session's log, below).
                run.note("the agent's own refusal came first: %s" % full[:200])
            else:
                run.check(NOT_READ.split(".")[0] in full and "compaction" in full,
                          "the gate's words for a released view: %r" % full[:300])
            run.eq(ws.read("a.txt"), "a.txt one\na.txt two\n", "a.txt after the refusal")
            log = [json.loads(x) for x in a.fsview("fsview-session", "events", "--sid", sid,
                                                    "--json").stdout.splitlines()]
            released = [x["detail"] for x in log if x["action"] == "release"]
            run.check(released and released[0] == "%d views no longer held, 0 held again" % len(names),
                      "fsview released the views at the compaction: %s" % released)
        else:
            run.check(got != "applied" or ws.read("a.txt") == "a from memory\n", "a.txt replaced alone")
        run.step("%s; %s; Write a.txt whole from memory" % (reads_desc, how), got)
        got = applied(run, a, proto, wb, "applied", "the Write of b.txt after a read")
        run.eq(ws.read("b.txt"), "b after a read\n", "b.txt at the end")
        run.step("... read b.txt again, Write it whole", got)


def opencode_overflow(run, a, turns):
    """opencode and Kilo compact when an answer's usage reaches the model's
    context limit less its output (the custom model is given `limit`: a
    model without one, context 0, never compacts): the last answer of the
    prompt reports OVERFLOW tokens, so the loop compacts at once (a summary
    request without tools), publishes `session.compacted`, and goes on
    with its "Continue if you have next steps" (answered "Done.")."""
    p = os.path.join(a.ws.work, a.config)
    with open(p) as f:
        cfg = json.load(f)
    for m in cfg["provider"]["mock"]["models"].values():
        m["limit"] = {"context": 200000, "output": 8192}
    with open(p, "w") as f:
        json.dump(cfg, f, indent=2)
    return turns[:-1] + [turns[-1] + [usage(OVERFLOW)]]


PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_probe.py")


def opencode_mcp_reminder(run):
    """opencode (and Kilo) after an MCP tool: its result is the tool's
    content parts (what the plugin sets as `output.output` is not read),
    joined and then cut past 2,000 lines or 51,200 bytes, with what the
    plugin added. A file the model read changes; the next MCP result (1
    KB) carries the reminder. It changes again; the next MCP result is
    51,000 bytes, with no room left for it: the reminder waits for the
    next tool's result rather than being cut off. A last MCP result of
    60,000 bytes shows the cut."""
    ws = run.ws
    body = notes_and_other(ws)
    with agent(run, []) as (proto, a):
        with open(os.path.join(ws.work, a.config)) as f:
            config = json.load(f)
        config["mcp"] = {"probe": {"type": "local", "command": [sys.executable, PROBE], "enabled": True}}
        with open(os.path.join(ws.work, a.config), "w") as f:
            json.dump(config, f, indent=2)
        read = tool(a.read(ws.path("notes.txt")))
        small = call("probe_big", {"bytes": 1000})
        full = call("probe_big", {"bytes": 51000})
        over = call("probe_big", {"bytes": 60000})
        other = tool(a.read(ws.path("other.txt")))

        def first_change(body_):
            ws.write("notes.txt", body.replace("line 6\n", "line six\n"))
            return [small]

        def second_change(body_):
            ws.write("notes.txt", body.replace("line 6\n", "line six\n").replace("line 9\n", "line nine\n"))
            return [full]

        proto.turns = [[read], first_change, second_change, [other], [over], [text("done")]]
        wire(run, a)
        r = a.prompt("read notes.txt, then use the probe")
        run.eq(r.code, 0, "exit code (stderr: %s)" % r.stderr[-300:])
        run.check(len(proto.main) == 6, "six model requests: %d" % len(proto.main))
        texts = [request_text(q) for q in proto.main] + [""] * 6
        told = "+line six" in texts[2]
        run.check(told == run.fsview, "the change told with the 1 KB MCP result: %s" % told)
        run.step("A file it read changed; the next MCP result (1 KB)",
                 "told, with the diff" if told else "nothing said")
        in_full = "+line nine" in texts[3]
        run.check(not in_full, "nothing told inside the 51,000-byte result: %s" % in_full)
        later = "+line nine" in texts[4]
        run.check(later == run.fsview, "the second change told with the next tool's result: %s" % later)
        run.step("It changed again; the next MCP result (51,000 bytes, no room left)",
                 "told with the read after it" if later else ("told inside it" if in_full else "nothing said"))
        cut = "truncated" in texts[5]
        run.check(cut, "%s cuts a 60,000-byte MCP result: %s" % (a.label, cut))
        run.step("An MCP result of 60,000 bytes", "cut by %s" % a.label if cut else "whole")


def files_of_40k(ws, names):
    """Each file of `names`: 400 numbered lines of about 100 bytes, all
    committed."""
    for n in names:
        ws.write(n, "".join("%s line %d: %s\n" % (n, i, "x" * 80) for i in range(1, 401)))
    ws.commit()


def pruned_then_written(run, a, proto, sid, marker, gone, kept, story, released_ok):
    """The pruning's outcome: the first request of the prompt `marker`
    holds the text of `kept` (a (write call, file) pair), not that of
    `gone` (pruned); the write of `gone` from memory is applied alone and
    refused with fsview, whose release events' details pass
    `released_ok`; that of `kept`, from its kept read, applied in both."""
    (wg, ng), (wk, nk) = gone, kept
    asked = [q for q in proto.main if marker in request_text(q)]
    held = request_text(asked[0]) if asked else ""
    run.check("[Old tool result content cleared]" in held and "%s line 200:" % ng not in held
              and "%s line 200:" % nk in held,
              "the first request of %s holds %s's text, not %s's (pruned)" % (marker, nk, ng))
    got = outcome(a, proto, wg)
    run.check(got.startswith("refused" if run.fsview else "applied"), "the write of %s: %s" % (ng, got))
    run.step("%s; write %s whole from memory" % (story, ng), got)
    if run.fsview:
        log = [json.loads(x) for x in a.fsview("fsview-session", "events", "--sid", sid,
                                                "--json").stdout.splitlines()]
        released = [x["detail"] for x in log if x["action"] == "release"]
        run.check(released_ok(released), "fsview released the pruned reads' views: %s" % released)
    got = applied(run, a, proto, wk, "applied", "the write of %s from its kept read" % nk)
    run.step("... write %s whole from its kept read" % nk, got)


def prompts(run, a, texts):
    """Each prompt of `texts` in turn, in one session (the first starts
    it, the others resume it), each to exit 0; the session's id."""
    sid = None
    for t in texts:
        r = a.prompt(t, resume=sid)
        run.eq(r.code, 0, "exit code of %s (stderr: %s)" % (t.split()[0], r.stderr[-300:]))
        sid = sid or r.session_id
    return sid


def opencode_keeps_tail(run):
    """opencode's (and Kilo's) compaction keeps the latest turns that fit
    `compaction.preserve_recent_tokens` (here 800) and summarizes the rest.
    A first prompt reads a.txt (200 lines, too long to keep); a second
    reads b.txt, and its last answer reports a usage over the context limit
    (opencode_overflow): the compaction keeps the second turn from the
    message opencode names (`tail_start_id`). fsview's plugin asks opencode
    for the session's messages and sends the ids of the calls whose results
    the kept tail holds: the view of b.txt stays held, a.txt's is
    released. Then a third prompt writes a.txt whole from the summary's
    memory (alone applied; with fsview refused, the file given back) and
    b.txt whole from its kept read, with no read again: applied alone and
    with fsview (refused once, given back, before 2026-12-07)."""
    ws = run.ws
    ws.write("a.txt", "".join("a.txt line %d, long enough to be summarized\n" % i for i in range(1, 201)))
    ws.write("b.txt", "b.txt one\nb.txt two\n")
    ws.commit()
    P = ws.path
    with conversation(run, {}) as (proto, a):
        wa = tool(a.write(P("a.txt"), "a from memory\n"))
        wb = tool(a.write(P("b.txt"), "b from the kept read\n"))
        turns = opencode_overflow(run, a, [[tool(a.read(P("b.txt")))], [text("read b")]])
        cfg_path = os.path.join(a.ws.work, a.config)
        with open(cfg_path) as f:
            cfg = json.load(f)
        cfg["compaction"] = {"preserve_recent_tokens": 800}
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=2)
        proto.scripts["[one]"] = [[tool(a.read(P("a.txt")))], [text("read a")]]
        proto.scripts["[two]"] = turns
        proto.scripts["[after]"] = [[wa], [wb], [text("done")]]
        wire(run, a)
        sid = prompts(run, a, ["[one] read a.txt", "[two] read b.txt", "[after] rewrite a.txt, then b.txt"])
        run.check(len(proto.summaries) >= 1, "the agent asked for a summary (compacted): %d" % len(proto.summaries))
        after = [q for q in proto.main if "[after]" in request_text(q)]
        held = request_text(after[0]) if after else ""
        run.check("a.txt line 100," not in held and "b.txt one" in held,
                  "the conversation holds b.txt's text, not a.txt's, when the writes are asked for")
        got = outcome(a, proto, wa)
        run.check(got.startswith("refused" if run.fsview else "applied"), "the write of a.txt: %s" % got)
        run.step("read a.txt; read b.txt; compaction keeping the second turn; write a.txt whole from memory", got)
        if run.fsview:
            log = [json.loads(x) for x in a.fsview("fsview-session", "events", "--sid", sid,
                                                    "--json").stdout.splitlines()]
            released = [x["detail"] for x in log if x["action"] == "release"]
            run.eq(released, ["1 views no longer held, 0 held again"], "fsview released a.txt's view only")
        got = applied(run, a, proto, wb, "applied", "the write of b.txt from the kept read")
        run.step("... write b.txt whole from the kept read", got + (" (its view kept)" if run.fsview else ""))
        run.eq(ws.read("b.txt"), "b from the kept read\n", "b.txt at the end")


def opencode_prunes(run):
    """With `compaction.prune` on, opencode clears old tool outputs at the
    end of a prompt ("[Old tool result content cleared]"): those of the
    turns before the last two, past the newest 40,000 tokens of them, when
    that frees over 20,000 (PRUNE_PROTECT, PRUNE_MINIMUM). A first prompt
    reads seven files of about 40 KB (f1 first), two more prompts say
    nothing new, and the third one's end prunes the reads of f1 to f4. No
    event reaches fsview but the parts' updates, and `opencode run` is a
    process a prompt: at the next prompt fsview's plugin looks in the
    session's messages for results pruned before, and fsview releases
    their views. Then the fourth prompt writes f1 whole from memory (alone
    applied; with fsview refused: the conversation no longer holds it) and
    f7, whose read was kept, whole from it: applied alone and with
    fsview."""
    ws = run.ws
    names = ["f%d.txt" % i for i in range(1, 8)]
    files_of_40k(ws, names)
    P = ws.path
    with conversation(run, {}) as (proto, a):
        cfg_path = os.path.join(a.ws.work, a.config)
        with open(cfg_path) as f:
            cfg = json.load(f)
        cfg["compaction"] = {"prune": True}
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=2)
        w1 = tool(a.write(P("f1.txt"), "f1 from memory\n"))
        w7 = tool(a.write(P("f7.txt"), "f7 from the kept read\n"))
        proto.scripts["[one]"] = [[tool(a.read(P(n))) for n in names], [text("read them")]]
        proto.scripts["[two]"] = [[text("ok")]]
        proto.scripts["[three]"] = [[text("ok")]]
        proto.scripts["[after]"] = [[w1], [w7], [text("done")]]
        wire(run, a)
        sid = prompts(run, a, ["[one] read the files", "[two] go on", "[three] go on",
                               "[after] rewrite f1.txt, then f7.txt"])
        pruned_then_written(run, a, proto, sid, "[after]", (w1, "f1.txt"), (w7, "f7.txt"),
                            "read 7 files of 40 KB; two prompts; opencode prunes the first four reads",
                            lambda released: released == ["4 views no longer held, 0 held again"])


def kilo_payload_prunes(run):
    """Kilo 7.7.9 prunes old tool outputs in the middle of a prompt, by
    default (compaction.prune unset): before a request whose messages pass
    1,250,000 bytes as JSON, those of the turns before the last two, past
    the newest 40,000 tokens of them ("[Old tool result content
    cleared]"). A first prompt reads 36 files of about 40 KB; two more
    prompts: the third's first request passes the limit and prunes the
    oldest reads. The prune is heard only as parts' updates, and the next
    prompt is too late: the plugin sends the calls pruned since with the
    gate's payload, and fsview releases their views before it answers.
    So the write of f01.txt from memory in that third prompt is applied
    alone and refused with fsview (before 2026-12-07 fsview let it
    through), and that of f36.txt, whose read was kept, applied in both."""
    ws = run.ws
    names = ["f%02d.txt" % i for i in range(1, 37)]
    files_of_40k(ws, names)
    P = ws.path
    with conversation(run, {}) as (proto, a):
        w1 = tool(a.write(P("f01.txt"), "f01 from memory\n"))
        w36 = tool(a.write(P("f36.txt"), "f36 from the kept read\n"))
        proto.scripts["[one]"] = [[tool(a.read(P(n))) for n in names], [text("read them")]]
        proto.scripts["[two]"] = [[text("ok")]]
        proto.scripts["[three]"] = [[w1], [w36], [text("done")]]
        wire(run, a)
        sid = prompts(run, a, ["[one] read the files", "[two] go on", "[three] rewrite f01.txt, then f36.txt"])
        pruned_then_written(run, a, proto, sid, "[three]", (w1, "f01.txt"), (w36, "f36.txt"),
                            "read 36 files of 40 KB; two prompts; the third's first request passes 1,250,000 "
                            "bytes and Kilo prunes the oldest reads",
                            lambda released: len(released) == 1
                            and released[0].endswith("views no longer held, 0 held again"))


SCENARIOS = [
    ("same-size-change-before-edit", same_size_change_before_edit),
    ("changed-before-edit", changed_before_edit),
    ("edit-unread", edit_unread),
    ("write-after-partial-read", write_after_partial_read),
    ("write-after-capped-read", write_after_capped_read),
    ("prompt-reminder", prompt_reminder),
    ("normal-work", normal_work),
    ("hook-missing", hook_missing),
]


# The agents whose targeted edit fsview merges with a change that came
# while it was on its way, telling the change after the tool (issue 41).
MERGE_PROVEN = ("droid", "opencode", "kilo", "pi", "cline", "copilot")
# The agents fsview does not merge for, whose race is played beside the
# agent alone all the same (issue 41): Qwen Code refuses such an edit
# itself, before any hook.
NOT_MERGED = ("qwen",)
# The agents whose edit of lines read as a range is merged with a change
# apart from it (told after the result).
RANGE_MERGE_PROVEN = ("opencode", "kilo", "pi", "cline", "copilot")


# The agents whose shell tool the shell scenarios drive (scripts/e2e/shell.py).
SHELL_PROVEN = ("qwen", "opencode", "copilot", "droid", "pi", "kilo")


class Shell(shell.Kit):
    """The agent's shell tool, for the shell scenarios (scripts/e2e/shell.py):
    Qwen Code's run_shell_command (yolo mode: headless, auto-edit refuses
    the shell), opencode's, Kilo Code CLI's, Copilot CLI's and pi's bash,
    Droid's Execute (`--auto high`: `low` runs only commands that change
    nothing)."""

    done = text("done")

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.name
        self.version = cls.version

    def agent(self, run, turns):
        return agent(run, turns)

    def sh(self, cmd):
        return tool(self.cls.shell(None, cmd))

    def edit(self, ws, rel, old, new):
        return tool(self.cls.edit(None, ws.path(rel), old, new))

    def result(self, proto, c):
        return result_of(proto, c)

    def edit_outcome(self, proto, a, c):
        return outcome(a, proto, c)

    def prompt(self, a, text):
        a.approval = "yolo"
        a.auto = "high"
        return a.prompt(text, timeout=600 if self.name != "kilo" else 1200)

    def wire(self, run, a):
        wire(run, a)

    def call_id(self, c):
        # Copilot CLI's and Droid's payloads name no call: the command does.
        return c["arguments"]["command"] if self.name in ("copilot", "droid") else c["id"]

    def wire_capture(self, a, out):
        cmd = harness.capture_command(out)
        if self.name == "qwen":
            hook = {"type": "command", "command": cmd}
            a.write_hooks({ev: [{"matcher": "run_shell_command", "hooks": [hook]}]
                           for ev in ("PreToolUse", "PostToolUse")})
        elif self.name == "droid":
            hook = {"type": "command", "command": cmd}
            os.makedirs(os.path.dirname(a.settings_file()), exist_ok=True)
            with open(a.settings_file(), "w") as f:
                json.dump({"hooks": {ev: [{"matcher": "Execute", "hooks": [hook]}]
                                     for ev in ("PreToolUse", "PostToolUse")}}, f)
        elif self.name == "copilot":
            os.makedirs(os.path.dirname(a.hooks_file()), exist_ok=True)
            with open(a.hooks_file(), "w") as f:
                json.dump({"version": 1, "hooks": {ev: [{"type": "command", "bash": cmd, "timeoutSec": 30}]
                                                   for ev in ("preToolUse", "postToolUse")}}, f)
        else:
            keeper = os.path.join(a.ws.root, "keep.sh")
            with open(keeper, "w") as f:
                f.write("#!/bin/sh\ncat >> '%s'; printf '\\n' >> '%s'\n" % (out, out))
            os.chmod(keeper, 0o755)
            a.install_fsview()
            p = a.extension_file() if self.name == "pi" else a.plugin_file()
            with open(p) as f:
                js = f.read()
            with open(p, "w") as f:
                f.write(re.sub(r"const HOOK = .*;", "const HOOK = %s;" % json.dumps(keeper), js, count=1))

    def extra_captures(self, ws):
        if self.name != "kilo":
            return {}
        # Kilo's background_process, starting a command (the plugin gates
        # it; nothing is recorded after it).
        return {"background_start": tool(("background_process", {
            "action": "start", "command": "printf 'bg\\n' > bg.txt", "description": "bg"}))}

    def payload_call(self, d):
        if self.name == "qwen":
            when = {"PreToolUse": "pre", "PostToolUse": "post"}.get(d.get("hook_event_name"))
            return when, d.get("tool_call_id")
        if self.name == "droid":
            if d.get("tool_name") != "Execute":
                return None, None
            when = {"PreToolUse": "pre", "PostToolUse": "post"}.get(d.get("hook_event_name"))
            return when, (d.get("tool_input") or {}).get("command")
        if self.name == "pi":
            if d.get("toolName") != "bash":
                return None, None
            return {"tool_call": "pre", "tool_result": "post"}.get(d.get("event")), d.get("toolCallId")
        if self.name == "copilot":
            if d.get("toolName") != "bash":
                return None, None
            args = d.get("toolArgs") or {}
            if isinstance(args, str):
                args = json.loads(args)
            return ("post" if "toolResult" in d else "pre"), args.get("command")
        if (d.get("input") or {}).get("tool") not in ("bash", "background_process"):
            return None, None
        when = {"tool.execute.before": "pre", "tool.execute.after": "post"}.get(d.get("event"))
        return when, d["input"].get("callID")

    def save(self, run, fixtures, ws, sid):
        for d in fixtures.values():
            if isinstance(d.get("transcript_path"), str):
                d["transcript_path"] = re.sub(r"/(projects|sessions)/[^/]+/", r"/\1/@PROJECT@/",
                                              d["transcript_path"])
        return super().save(run, fixtures, ws, sid)


def main(argv, name, capture, doc, more=(), captures=()):
    """The command line of scripts/e2e-NAME; `more` scenarios and
    `captures` of the agent's own."""
    global AGENT
    AGENT = chat_agents.AGENTS[name]

    def ensure():
        global BINARY
        BINARY = chat_agents.ensure(AGENT, log=sys.stderr)
        return BINARY

    scenarios = [(n, f, (False, True)) for n, f in SCENARIOS if AGENT.name not in ("copilot", "cline") or n != "write-after-capped-read"]
    if AGENT.remind_at == "tool":
        scenarios = [(n, f, m) if n != "prompt-reminder" else ("tool-reminder", tool_reminder, m)
                     for n, f, m in scenarios]
    captures = [capture, *captures]
    if AGENT.name in SHELL_PROVEN:
        kit = Shell(AGENT)
        scenarios += shell.scenarios(kit)
        captures.append(shell.capture(kit))
    if AGENT.name == "qwen":
        scenarios += [("at-mention-edit", at_mention_edit, (False, True)), ("compaction", compaction, (False, True)),
                      ("changed-before-edit-angle", changed_before_edit_angle, (False, True))]
    if AGENT.name == "pi":
        scenarios += [("at-mention-edit", at_mention_edit, (False, True)),
                      ("tool-reminder", tool_reminder, (False, True)),
                      ("short-reread", short_reread, (False, True))]
    if AGENT.name == "droid":
        scenarios += [("at-mention-edit", at_mention_edit, (False, True))]
    if AGENT.name in ("opencode", "kilo"):
        scenarios += [("tool-reminder", tool_reminder, (False, True))]
    if AGENT.name in MERGE_PROVEN + NOT_MERGED:
        scenarios += [("merge-far-edit", merge_far_edit, (False, True)),
                      ("merge-near-edit", merge_near_edit, (False, True))]
    if AGENT.name in RANGE_MERGE_PROVEN:
        scenarios += [("merge-range-edit", merge_range_edit, (False, True))]
    scenarios += list(more)
    return harness.main(argv, "e2e-" + name, AGENT.label, AGENT.version, ensure, scenarios, captures, doc, jobs=3)


def capture_plugin(run):
    """Capture what fsview's opencode plugin sends (opencode, Kilo Code
    CLI), as fixtures (--save-fixtures): the installed plugin, its
    fsview-hook swapped for a script that keeps each payload and answers
    nothing."""
    ws = run.ws
    ws.write("a.txt", "one\ntwo\nthree\n")
    ws.write("big.txt", lines(2500, fmt="line %d of a big file"))
    ws.write("crlf.txt", b"one\r\ntwo\r\n")
    ws.write("long.txt", "x" * 3000 + "\nshort\n")
    ws.write("empty.txt", "")
    ws.commit()
    out = os.path.join(ws.root, "payloads.jsonl")
    keeper = os.path.join(ws.root, "keep.sh")
    with open(keeper, "w") as f:
        f.write("#!/bin/sh\ncat >> '%s'; printf '\\n' >> '%s'\n" % (out, out))
    os.chmod(keeper, 0o755)
    names = {}
    with agent(run, []) as (proto, a):
        P = ws.path

        def t(name, spec):
            c = tool(spec)
            names[c["id"]] = name
            return [c]

        proto.turns = [
            t("read_whole", a.read(P("a.txt"))),
            t("read_range", a.read(P("a.txt"), 2, 1)),
            t("read_capped", a.read(P("big.txt"))),
            t("read_crlf", a.read(P("crlf.txt"))),
            t("read_long_line", a.read(P("long.txt"))),
            t("read_empty", a.read(P("empty.txt"))),
            t("edit", a.edit(P("a.txt"), "two", "TWO")),
            t("write_create", a.write(P("b.txt"), "bee\n")),
            t("write_update", a.write(P("a.txt"), "one\nTWO\nthree\nfour\n")),
            [text("done")], [text("again")],
        ]
        a.install_fsview()
        p = a.plugin_file()
        with open(p) as f:
            js = f.read()
        with open(p, "w") as f:
            f.write(re.sub(r"const HOOK = .*;", "const HOOK = %s;" % json.dumps(keeper), js, count=1))
        r = a.prompt("capture")
        a.prompt("again", resume=r.session_id)
    fixtures = {}
    with open(out) as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            ev = d["event"]
            if ev == "chat.message":
                key = "chat_message"
            else:
                name = names.get(d["input"].get("callID"))
                if not name:
                    continue
                key = ("before_" if ev == "tool.execute.before" else "after_") + name
            fixtures.setdefault(key, d)
    save_fixtures(run, fixtures, ws, r.session_id)
    run.check(len(fixtures) >= 13, "fixtures captured: %s" % sorted(fixtures))


def save_fixtures(run, fixtures, ws, sid):
    """Write captured payloads to tests/fixtures/hooks/NAME-VERSION/, the
    workspace, home and session id replaced by @CWD@, @HOME@, @SID@."""
    dest = os.path.join(ROOT, "tests", "fixtures", "hooks", "%s-%s" % (AGENT.name, AGENT.version))
    os.makedirs(dest, exist_ok=True)
    for key, d in sorted(fixtures.items()):
        if isinstance(d.get("transcript_path"), str):
            d["transcript_path"] = re.sub(r"/projects/[^/]+/", "/projects/@PROJECT@/", d["transcript_path"])
        s = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
        s = s.replace(ws.work, "@CWD@").replace(ws.home, "@HOME@")
        if sid:
            s = s.replace(sid, "@SID@")
        with open(os.path.join(dest, key + ".json"), "w") as f:
            f.write(s)
    run.step("captured", "%d fixtures in %s" % (len(fixtures), os.path.relpath(dest, ROOT)))
