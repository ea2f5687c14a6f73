#!/usr/bin/env python3
"""Compares the context Claude Code sent with what ctx-build gives, byte for byte.

Usage:
  compare_context.py --first FIRST.json --ctx-build CTX.json
                     [--after-read AFTER.json] [--map FROM=TO]...

FIRST.json   the body of Claude Code's first POST /v1/messages (or a fixture
             with the same shape: tests/fixtures/context/claude-code-*-first-request.json)
AFTER.json   optional: the body of the request that followed the model's Read
             of a file below the working directory, or a fixture holding only
             its last messages (`{"messages": [...]}`); its nested instruction
             files are compared with ctx-build's nested blocks
CTX.json     the output of `ctx-build --json --for PATH` (the layout must be
             2.1.332) run on the same tree, PATH being the file that was Read
--map FROM=TO  replace FROM by TO in Claude Code's text before comparing
             (e.g. /etc/claude-code=TREE/managed when ctx-build read the
             managed files from FSVIEW_MANAGED_DIR; {{ROOT}}=TREE,
             {{DATE}}=YYYY-MM-DD and {{COMMIT}}=ID for a redacted fixture);
             repeatable, applied in order

What is compared (Claude Code's side -> ctx-build's block):
  instructions  the first user message's reminder that starts with "Codebase
                and user instructions" -> part "instructions" (where "user")
  git           the first user message's reminder holding "# gitStatus" ->
                part "git" (where "user")
  date          the last line of the system text that holds "Today's date is"
                (Claude Code 2.1.332 ends its environment message with it) ->
                part "date" (where "system")
  nested N      the reminders "Contents of PATH:" after the tool result in the
                request after the Read -> the N-th part "nested" (where
                "attachment"). Claude Code drops the line break after the
                last block of a message; that one difference is expected and
                reported as such, not as a disagreement.
Blocks on one side only are listed too. The first user message's other
blocks (the prompt, Claude Code's attribution reminder) are not ctx-build's
and are ignored.

Prints one line per piece ("same", or "DIFFERENT" followed by a unified diff
of the two texts, line endings shown) and a summary. Exit 0 when every piece
agrees, 1 when one does not, 2 on bad input. Python 3 standard library only.
"""

import argparse
import difflib
import json
import re
import sys

DATE_RE = re.compile(r"Today's date is \d{4}-\d{2}-\d{2}\.")


def fail(message):
    """Bad input: one line on stderr, exit 2."""
    print(f"compare_context: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    """A JSON document, or the first object of JSON Lines (ctx-build --json)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json.loads(text.lstrip().splitlines()[0])
    except (ValueError, IndexError) as e:
        fail(f"{path} is not JSON: {e}")


def texts(content, mapped=lambda t: t):
    """The text blocks of a message's content, in order."""
    if isinstance(content, str):
        return [mapped(content)]
    return [mapped(b.get("text", "")) for b in content if b.get("type") == "text"]


def claude_side(first, after, mapped):
    """Claude Code's pieces: (name, text), in order, --map applied."""
    pieces = []
    messages = first.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        fail("the first request has no first user message")
    for t in texts(messages[0]["content"], mapped):
        if t.startswith("<system-reminder>\nCodebase and user instructions"):
            pieces.append(("instructions", t))
        elif t.startswith("<system-reminder>\n") and "\n# gitStatus\n" in t:
            pieces.append(("git", t))
    system_texts = texts(first.get("system") or [], mapped)
    for m in messages:
        if m.get("role") == "system":
            system_texts.extend(texts(m["content"], mapped))
    dates = [DATE_RE.search(t.rstrip().rsplit("\n", 1)[-1]) for t in system_texts]
    dates = [d.group(0) for d in dates if d]
    if dates:
        pieces.append(("date", dates[-1]))
    if after is not None:
        last = (after.get("messages") or [{}])[-1]
        if last.get("role") != "user":
            fail("the request after the Read does not end with a user message")
        blocks = last["content"] if isinstance(last["content"], list) else []
        seen_result = False
        nested = []
        for b in blocks:
            if b.get("type") == "tool_result":
                seen_result = True
            elif seen_result and b.get("type") == "text" and \
                    b.get("text", "").startswith("<system-reminder>\nContents of "):
                nested.append(mapped(b["text"]))
        for i, t in enumerate(nested):
            pieces.append((f"nested {i + 1}", t))
    return pieces


def ctx_side(ctx):
    if ctx.get("type") != "context":
        fail("the ctx-build output is not a context object (ctx-build --json)")
    if ctx.get("layout") != "2.1.332":
        fail(f"ctx-build laid the context out as {ctx.get('layout')}; "
                 "run it with --layout 2.1.332")
    pieces = []
    expected_where = {"instructions": "user", "git": "user", "date": "system",
                      "nested": "attachment"}
    wrong_place = []
    n = 0
    for b in ctx.get("blocks") or []:
        part = b.get("part")
        if part == "nested":
            n += 1
            name = f"nested {n}"
        elif part in ("instructions", "git", "date"):
            name = part
        else:
            continue
        if b.get("where") != expected_where[part]:
            wrong_place.append(f"{name}: ctx-build says where={b.get('where')}, "
                               f"Claude Code puts it in {expected_where[part]}")
        pieces.append((name, b.get("text", "")))
    return pieces, wrong_place


def show(line):
    return line.replace("\r", "\\r").replace("\t", "\\t")


def diff(a, b):
    la = [show(l) + ("\\n" if l.endswith("\n") else "") for l in a.splitlines(True)]
    lb = [show(l) + ("\\n" if l.endswith("\n") else "") for l in b.splitlines(True)]
    la = [l.replace("\n", "") for l in la]
    lb = [l.replace("\n", "") for l in lb]
    out = list(difflib.unified_diff(la, lb, "claude-code", "ctx-build", lineterm="", n=2))
    return out or ["(same lines; the texts differ in their line endings)"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--first", required=True)
    ap.add_argument("--after-read")
    ap.add_argument("--ctx-build", required=True, dest="ctx")
    ap.add_argument("--map", action="append", default=[])
    a = ap.parse_args()
    maps = []
    for m in a.map:
        if "=" not in m:
            fail(f"--map {m!r} is not FROM=TO")
        maps.append(tuple(m.split("=", 1)))

    first = load(a.first)
    after = load(a.after_read) if a.after_read else None
    ctx = load(a.ctx)

    def mapped(t):
        for f, to in maps:
            t = t.replace(f, to)
        return t

    claude = claude_side(first, after, mapped)
    ours, wrong_place = ctx_side(ctx)
    if after is None:
        ours = [(n, t) for n, t in ours if not n.startswith("nested")]
    theirs_by = dict(claude)
    ours_by = dict(ours)
    names = [n for n, _ in claude] + [n for n, _ in ours if n not in theirs_by]
    same = different = 0
    notes = []
    for name in names:
        if name not in ours_by:
            print(f"{name}: only Claude Code sent it")
            different += 1
            continue
        if name not in theirs_by:
            print(f"{name}: only ctx-build gives it")
            different += 1
            continue
        t, o = theirs_by[name], ours_by[name]
        is_last_nested = name.startswith("nested") and name == [n for n, _ in claude
                                                                 if n.startswith("nested")][-1]
        if t != o and is_last_nested and t + "\n" == o:
            notes.append(f"{name}: Claude Code dropped the line break after the last block "
                         "of its message (expected)")
            t = o
        if t == o:
            print(f"{name}: same ({len(o.encode())} bytes)")
            same += 1
        else:
            print(f"{name}: DIFFERENT")
            for line in diff(t, o):
                print(f"    {line}")
            different += 1
    for w in wrong_place:
        print(f"placement: {w}")
        different += 1
    for n in notes:
        print(f"note: {n}")
    print(f"{same} same, {different} different")
    sys.exit(0 if different == 0 else 1)


if __name__ == "__main__":
    main()
