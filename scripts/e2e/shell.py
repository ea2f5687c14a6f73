"""The shell scenarios, for every agent with a shell tool.

Every agent fsview answers has a shell tool, and fsview reads its commands
with one shell reader (crates/agents/src/shell/): the writes they make are
gated like the agent's write tool, and what a read command printed counts
as seen. These scenarios are the same for every agent; each suite hands
them a `Kit` saying how its agent is driven (scripts/e2e-claude,
e2e-gemini, e2e-codex, e2e-qwen, e2e-opencode, e2e-copilot, e2e-droid,
e2e-pi, e2e-kilo):

- shell-writes-gated: a shell overwrite of a file never read, `sed -i` of a
  file changed since it was read, `tee` over a file read in part: each
  refused with fsview, each applied (the user's work lost) without;
- shell-normal-work: 40 shell commands of ordinary work (cargo build, test
  and fmt, npm test, python's unittest, git, appends to a log, scratch files
  from here-documents, one-liners, copies and moves) and the agent's own
  edit tool after shell reads and shell-written files: nothing refused.
- shell-discards-gated: a build log written twice (the agent's own
  output: applied), `git checkout .` over a user's edit the agent never
  saw (refused with fsview, naming the file with git's diff), `git restore`
  of a file the user changed after the agent read it (refused, the change
  told); each discard applied alone, the user's line lost.

`capture(kit, run)` saves the payloads the agent's shell tool sent as
fixtures (`*_shell_*`), for the hook's tests.
"""

import os
import re

import harness
from harness import lines

GATE = ("File has not been read yet", "File has been modified since read", "File has only been read in part")
NOT_READ = "File has not been read yet. Read it first before writing to it."
# The gate's `modified` words; the refusal then either asks for a re-read
# or carries the whole change (issue 25).
MODIFIED = "File has been modified since read, either by the user or by a linter."
RUSTUP = os.environ.get("RUSTUP_HOME") or os.path.expanduser("~/.rustup")
CARGO = os.path.join(os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo"), "bin", "cargo")


class Kit:
    """How a suite drives its agent, for these scenarios: a suite subclasses
    it and fills in what its agent does."""

    name = None  # fsview-hook's name for the agent
    version = None
    done = None  # the model's last turn: a text, in the agent's protocol

    def agent(self, run, turns):
        """A context manager giving (proto, agent): the model server playing
        `turns` (each a list of calls, or a function of the request)."""
        raise NotImplementedError

    def sh(self, cmd):
        """A call of the agent's shell tool."""
        raise NotImplementedError

    def edit(self, ws, rel, old, new):
        """A call of the agent's own edit tool."""
        raise NotImplementedError

    def result(self, proto, call):
        """The text the model got for `call`, or None."""
        raise NotImplementedError

    def edit_outcome(self, proto, agent, call):
        """"applied" or "refused: ..." for an edit tool's call."""
        raise NotImplementedError

    def prompt(self, agent, text):
        """One prompt, headless, the shell tool allowed."""
        raise NotImplementedError

    def wire(self, run, agent):
        if run.fsview:
            agent.install_fsview()

    def call_id(self, call):
        return call.get("id")

    def wire_capture(self, agent, out):
        """Hooks on every tool event that append their payloads to `out`."""
        raise NotImplementedError

    def payload_call(self, payload):
        """("pre" or "post", the call's id) of a captured payload, or
        (None, None) for another event."""
        raise NotImplementedError

    def extra_captures(self, ws):
        """More calls to capture: name -> call (files they need written in
        `ws`)."""
        return {}

    def session_of(self, result, fixtures):
        return getattr(result, "session_id", None)

    def save(self, run, fixtures, ws, sid):
        return harness.save_fixtures(fixtures, self.name, self.version, ws, sid, prefix=harness.SHELL_FIXTURES)


def lost_output(kit, proto, call):
    """Whether the agent gave the model nothing of what a shell read printed
    (Qwen Code 0.24.4, on a loaded machine, now and then answers a
    `cat` or `nl | sed` with "Output: (empty)"): nothing was shown, so the
    gate is right to refuse a change that rests on that read."""
    r = kit.result(proto, call)
    return r is not None and ("Output: (empty)" in r or not r.strip())


def outcome(kit, proto, call):
    """What became of a shell call: "ran", "refused: REASON" (the gate's
    message in what the model got), or "never ran"."""
    r = kit.result(proto, call)
    if r is None:
        return "never ran"
    for g in GATE:
        if g in r:
            i = r.index(g)
            return "refused: " + r[i:].split("\n")[0].split(". Command: ")[0][:160]
    return "ran"


def writes_gated(kit):
    def scenario(run):
        ws = run.ws
        ws.write("unread.txt", "the user's notes, never shown to the model\n")
        ws.write("notes.txt", "alpha\nbeta\n")
        ws.write("app.log", lines(50))
        ws.commit()
        overwrite = kit.sh("printf 'replaced\\n' > unread.txt")
        read = kit.sh("cat notes.txt")
        sed = kit.sh("sed -i 's/alpha/ALPHA/' notes.txt")
        head = kit.sh("sed -n '1,5p' app.log")
        tee = kit.sh("echo 'line 1 only' | tee app.log")

        def change(body):
            ws.write("notes.txt", "alpha\nbeta\nuser's line\n")
            return [sed]

        turns = [[overwrite], [read], change, [head], [tee], [kit.done]]
        with kit.agent(run, turns) as (proto, a):
            kit.wire(run, a)
            r = kit.prompt(a, "work in the shell")
            run.eq(r.code, 0, "exit code")
            want = "refused" if run.fsview else "ran"
            got = outcome(kit, proto, overwrite)
            run.check(got.startswith(want), "overwrite of a file never read: %s" % got)
            run.step("`printf ... > unread.txt` over a file never read", got + (
                " (the user's notes gone)" if ws.read("unread.txt") == "replaced\n" else ""))
            got = outcome(kit, proto, sed)
            run.check(got.startswith(want), "sed -i after a change: %s" % got)
            run.step("`cat notes.txt`, the user adds a line, then `sed -i` of it", got)
            got = outcome(kit, proto, tee)
            run.check(got.startswith(want), "tee over a file read in part: %s" % got)
            run.step("`sed -n '1,5p'` of 50 lines, then `... | tee` over it", got + (
                " (45 unseen lines gone)" if ws.read("app.log") == "line 1 only\n" else ""))
            # An agent may show nothing of what a command printed (Qwen
            # Code's terminal now and then loses a short output: "Output:
            # (empty)"); the model then never saw the file, and the gate's
            # words follow what it was shown, not what the command printed.
            saw_notes = "alpha\nbeta" in (kit.result(proto, read) or "")
            saw_head = "line 1\nline 2\nline 3\nline 4\nline 5" in (kit.result(proto, head) or "")
            if not saw_notes:
                run.step("... `cat notes.txt` showed the model nothing", "the agent lost its output")
            if not saw_head:
                run.step("... `sed -n '1,5p'` showed the model nothing", "the agent lost its output")
            if run.fsview:
                run.check(NOT_READ in outcome(kit, proto, overwrite), "the gate's words for the overwrite")
                run.check((MODIFIED if saw_notes else NOT_READ) in outcome(kit, proto, sed),
                          "the gate's words for sed -i")
                run.check(("(lines 1-5 of 50)" if saw_head else NOT_READ) in outcome(kit, proto, tee),
                          "the lines seen, named")
                run.eq([ws.read(f) for f in ("unread.txt", "notes.txt", "app.log")],
                       ["the user's notes, never shown to the model\n", "alpha\nbeta\nuser's line\n", lines(50)],
                       "the files after the refused commands")

    return scenario


def project(ws):
    """A small project: a Rust crate, an npm package, a Python module."""
    ws.write("Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n')
    ws.write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n"
                           "    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n}\n")
    ws.write("package.json", '{\n  "name": "demo",\n  "version": "1.0.0",\n  "scripts": {"test": "node test.js"}\n}\n')
    ws.write("test.js", "const assert = require('assert');\nassert.strictEqual(1 + 1, 2);\nconsole.log('ok');\n")
    ws.write("calc.py", "def add(a, b):\n    return a + b\n")
    ws.write("test_calc.py", "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n"
                             "    def test_add(self):\n        self.assertEqual(calc.add(2, 2), 4)\n")
    ws.write("README.md", "# demo\n\nA small project.\n")
    ws.write("notes.txt", "b\na\nb\n")
    ws.write(".gitignore", "target/\n__pycache__/\n")
    ws.commit()


def cargo(args):
    return "RUSTUP_HOME=%s CARGO_HOME=%s %s %s" % (RUSTUP, os.path.dirname(os.path.dirname(CARGO)), CARGO, args)


def normal_work(kit):
    def scenario(run):
        ws = run.ws
        project(ws)
        E = kit.edit
        steps = [
            ("git status", kit.sh("git status --short")),
            ("ls", kit.sh("ls -la")),
            ("cat README.md (a shell read)", kit.sh("cat README.md")),
            ("... the agent's edit tool on it after the read", E(ws, "README.md", "A small project.", "A small demo project.")),
            ("cargo build", kit.sh(cargo("build --offline -q 2>&1 | tail -3"))),
            ("cargo test", kit.sh(cargo("test --offline -q 2>&1 | tail -3"))),
            ("cat src/lib.rs", kit.sh("cat src/lib.rs")),
            ("cargo fmt (rewrites src/lib.rs)", kit.sh(cargo("fmt"))),
            ("nl -ba src/lib.rs | sed -n '1,4p' (a shell read)", kit.sh("nl -ba src/lib.rs | sed -n '1,4p'")),
            ("... the agent's edit tool on it after fmt and a read", E(ws, "src/lib.rs", "a + b", "b + a")),
            ("cargo test again", kit.sh(cargo("test --offline -q 2>&1 | tail -3"))),
            ("npm test", kit.sh("npm test 2>&1 | tail -3")),
            ("npm pkg get name", kit.sh("npm pkg get name")),
            ("python3 -m unittest", kit.sh("python3 -m unittest -q 2>&1 | tail -3")),
            ("python3 -m json.tool package.json > /dev/null", kit.sh("python3 -m json.tool package.json > /dev/null && echo valid")),
            ("append to a log", kit.sh("echo 'build ok' >> build.log")),
            ("append again", kit.sh("echo 'tests ok' >> build.log")),
            ("append a date", kit.sh("date -u >> build.log")),
            ("cat build.log", kit.sh("cat build.log")),
            ("a scratch file from a here-document", kit.sh("cat > scratch.py <<'EOF'\nprint('hi')\nEOF")),
            ("run it", kit.sh("python3 scratch.py")),
            ("... the agent's edit tool on the here-document's file", E(ws, "scratch.py", "print('hi')", "print('hello')")),
            ("its output to a new file", kit.sh("python3 scratch.py > out.txt")),
            ("cat out.txt", kit.sh("cat out.txt")),
            ("its output over the file just read", kit.sh("python3 scratch.py > out.txt")),
            ("sed -i on the edited scratch file", kit.sh("sed -i 's/hello/hello again/' scratch.py")),
            ("mkdir, cp to a new file", kit.sh("mkdir -p tmp && cp notes.txt tmp/notes.bak")),
            ("mv to a new name", kit.sh("mv tmp/notes.bak tmp/notes.old")),
            ("rm -rf tmp", kit.sh("rm -rf tmp")),
            ("tee a new file from a here-document", kit.sh("tee summary.txt <<'EOF'\nsummary\nEOF")),
            ("... the agent's edit tool on tee's file", E(ws, "summary.txt", "summary", "summary: all good")),
            ("node one-liner writing a new file", kit.sh("node -e \"require('fs').writeFileSync('gen.json', JSON.stringify({a: 1}))\"")),
            ("python one-liner writing a new file", kit.sh("python3 -c \"open('gen.txt', 'w').write('x\\n')\"")),
            # Files a program made without the command line naming them
            # (issue 44): the agent's own, its next writes of them pass.
            ("sed -i on the file the node one-liner made", kit.sh("sed -i 's/1/2/' gen.json")),
            ("printf over the file the python one-liner made", kit.sh("printf 'y\\n' > gen.txt")),
            ("sort | uniq", kit.sh("sort notes.txt | uniq -c")),
            ("find", kit.sh("find . -name '*.py' -not -path './.git/*' | sort")),
            ("grep", kit.sh("grep -rn 'fn ' src | head -5")),
            ("wc", kit.sh("wc -l README.md notes.txt")),
            ("cat notes.txt, then append to it", kit.sh("cat notes.txt && echo c >> notes.txt")),
            ("git add and commit", kit.sh("git add -A && git commit -qm work && git log --oneline | head -2")),
            ("git diff --stat", kit.sh("git diff HEAD~1 --stat | tail -1")),
            ("head -n 1", kit.sh("head -n 1 notes.txt")),
            ("a throwaway file in /tmp", kit.sh("printf 'tmp\\n' > \"$(mktemp)\"")),
        ]
        turns = [[c] for _, c in steps] + [[kit.done]]
        with kit.agent(run, turns) as (proto, a):
            kit.wire(run, a)
            r = kit.prompt(a, "do the usual work")
            run.eq(r.code, 0, "exit code")
            shell = [(n, c) for n, c in steps if not n.startswith("... the agent's")]
            edits = [(n, c) for n, c in steps if n.startswith("... the agent's")]
            # A refusal right after a shell read whose output the agent
            # lost (it showed the model nothing) is the gate being right.
            after_lost = {steps[i + 1][0] for i, (n, c) in enumerate(steps[:-1])
                          if (n.startswith("cat ") or "(a shell read)" in n) and lost_output(kit, proto, c)}
            for n in sorted(after_lost):
                run.note("the read before %r came back empty from the agent itself" % n)
            got = [(n, outcome(kit, proto, c)) for n, c in shell]
            bad = [(n, g) for n, g in got if g != "ran" and n not in after_lost]
            run.check(not bad, "shell commands not run: %s" % bad)
            run.step("%d shell commands of ordinary work" % len(shell),
                     "all ran" if not bad else "; ".join("%s: %s" % b for b in bad))
            got = [(n, kit.edit_outcome(proto, a, c)) for n, c in edits]
            # The gate's refusals: fsview's. Some agents refuse an edit after
            # a shell read themselves (Qwen Code keeps its own read state):
            # theirs, with or without fsview, shown as they are.
            ours = [(n, g) for n, g in got if any(m in g for m in GATE) and n not in after_lost]
            theirs = [(n, g) for n, g in got if g != "applied" and (n, g) not in ours]
            run.check(not ours, "edits refused by fsview: %s" % ours)
            run.step("the agent's edit tool after a shell read, a formatter, a here-document (%d)" % len(edits),
                     "all applied" if not ours + theirs else "; ".join("%s: %s" % b for b in ours + theirs))
            applied = {n for n, g in got if g == "applied"}
            ends = [("... the agent's edit tool on the here-document's file", "scratch.py", "print('hello again')\n"),
                    ("... the agent's edit tool on tee's file", "summary.txt", "summary: all good\n")]
            for edit, rel, want in ends:
                if edit in applied:
                    run.eq(ws.read(rel), want, "%s at the end" % rel)
            run.eq(ws.read("out.txt") if os.path.exists(ws.path("out.txt")) else None,
                   "hello\n" if ends[0][0] in applied else "hi\n", "out.txt at the end")
            if "... the agent's edit tool on it after fmt and a read" in applied:
                run.check("b + a" in ws.read("src/lib.rs"), "src/lib.rs edited after cargo fmt")
            # Qwen Code refuses a `sed -i` of a file its own read state
            # lacks, with or without fsview: its refusal, not the gate's.
            sed_r = kit.result(proto, dict(steps)["sed -i on the file the node one-liner made"]) or ""
            theirs = "has not been read in this session" in sed_r
            if theirs:
                run.note("the agent itself refused the sed -i of the file it had not read: %s" % squeeze(sed_r, 200))
            run.eq((ws.read("gen.json"), ws.read("gen.txt")), ('{"a":1}' if theirs else '{"a":2}', "y\n"),
                   "the made files after the agent's writes")
            tested = kit.result(proto, steps[5][1]) or ""
            run.check("test result: ok" in tested, "cargo test ran: %r" % tested[-200:])
            if run.failures:
                run.note("stderr: %s" % squeeze(getattr(r, "stderr", "") or "", 1500))
                run.note("last events: %s" % squeeze(str(getattr(r, "events", [])[-4:]), 1500))
                for n, c in steps:
                    run.note("%s: %s" % (n, squeeze(kit.result(proto, c) or "(none)", 300)))

    return scenario


def discards_gated(kit):
    """Issue 39, item 6: a build log run again (the agent's own output,
    applied), `git restore` over a user's edit the agent never saw (a file
    it read before: refused, the change told), a whole-tree `git checkout
    .` with one such edit (refused, naming it)."""
    def kept(res):
        # Run, and nothing lost: what git said (an agent's sandbox may keep
        # it from writing).
        said = [re.sub(r"'/[^']*/(\.git/[^']*)'", r"'\1'", l.strip()) for l in res.splitlines()
                if "fatal:" in l or "error:" in l]
        return ", nothing lost: %s" % squeeze("; ".join(said) or res, 100)

    def scenario(run):
        ws = run.ws
        project(ws)
        ws.write("todo.md", "- ship it\n")
        ws.commit()
        build = kit.sh(cargo("build --offline -q > build.log 2>&1"))
        rebuild = kit.sh(cargo("build --offline -q > build.log 2>&1"))
        read = kit.sh("cat notes.txt")

        def user_edits_notes(body):
            ws.write("notes.txt", "b\na\nb\nthe user's line\n")
            return [checkout]

        checkout = kit.sh("git checkout .")

        cat_todo = kit.sh("cat todo.md")

        def user_edits_todo(body):
            ws.write("todo.md", "- ship it\n- the user's todo\n")
            return [restore]

        restore = kit.sh("git restore todo.md")
        turns = [[build], [rebuild], [read], user_edits_notes, [cat_todo], user_edits_todo, [kit.done]]
        with kit.agent(run, turns) as (proto, a):
            kit.wire(run, a)
            r = kit.prompt(a, "build, then clean up")
            run.eq(r.code, 0, "exit code")
            got = outcome(kit, proto, rebuild)
            run.check(outcome(kit, proto, build) == "ran" and got == "ran", "the build log written twice: %s" % got)
            run.step("`cargo build > build.log 2>&1`, then again", "applied" if got == "ran" else got)
            res = kit.result(proto, checkout) or ""
            refused = "would discard changes" in res
            run.check(refused == run.fsview, "git checkout . over an unseen edit: %s" % squeeze(res))
            named = refused and "notes.txt" in res and "+the user's line" in res
            if run.fsview:
                run.check(named, "the refusal names notes.txt with its diff: %s" % squeeze(res, 400))
                run.eq(ws.read("notes.txt"), "b\na\nb\nthe user's line\n", "notes.txt after the refusal")
            lost = ws.read("notes.txt") == "b\na\nb\n"
            run.step("`cat notes.txt`, the user adds a line, then `git checkout .`",
                     ("refused, naming notes.txt with its diff" if named else "refused: " + squeeze(res, 100))
                     if refused else "ran" + (" (the user's line lost)" if lost else kept(res)))
            res = kit.result(proto, restore) or ""
            refused = MODIFIED in res or NOT_READ in res
            run.check(refused == run.fsview, "git restore over an unseen edit: %s" % squeeze(res))
            told = refused and "+- the user's todo" in res
            # An agent may show the model nothing of the read (Qwen Code's
            # "Output: (empty)", see lost_output): the gate then answers as
            # for a file never read, and is right to.
            saw = not lost_output(kit, proto, cat_todo)
            if run.fsview:
                run.check(told if saw else NOT_READ in res, "the refusal tells the change: %s" % squeeze(res, 400))
                run.eq(ws.read("todo.md"), "- ship it\n- the user's todo\n", "todo.md after the refusal")
            lost = ws.read("todo.md") == "- ship it\n"
            run.step("`cat todo.md`, the user adds a line, then `git restore todo.md`",
                     ("refused, the change told" if told else "refused: " + squeeze(res, 100)
                      + ("" if saw else " (the agent showed the model nothing of `cat todo.md`)"))
                     if refused else "ran" + (" (the user's line lost)" if lost else kept(res)))
            if run.failures:
                for n, c in [("build", build), ("rebuild", rebuild), ("read", read), ("checkout", checkout),
                             ("cat todo", cat_todo), ("restore", restore)]:
                    run.note("%s: %s" % (n, squeeze(kit.result(proto, c) or "(none)", 400)))

    return scenario


def links_moves_gated(kit):
    """Ways around the gate by naming (an adversarial pass found them):
    a link the command line makes, then a write through it; someone's
    untracked draft moved to a new name, then overwritten; a backup that
    makes none. Alone each runs; with fsview the writes are refused (the
    move itself loses nothing, and runs)."""
    def scenario(run):
        ws = run.ws
        ws.write("notes.txt", "the user's notes, never shown to the model\n")
        ws.write("sub/keep.txt", "keep\n")
        ws.commit()
        ws.write("draft.txt", "the user's uncommitted draft\n")
        link = kit.sh("ln -s notes.txt s.txt && printf 'x\\n' > s.txt")
        move = kit.sh("mv draft.txt plan.md")
        over = kit.sh("printf 'agent text\\n' > plan.md")
        backup = kit.sh("cp --backup=none sub/keep.txt notes.txt")
        turns = [[link], [move], [over], [backup], [kit.done]]
        with kit.agent(run, turns) as (proto, a):
            kit.wire(run, a)
            r = kit.prompt(a, "work in the shell")
            run.eq(r.code, 0, "exit code")
            want = "refused" if run.fsview else "ran"
            for call, what in [(link, "`ln -s notes.txt s.txt && printf x > s.txt`"),
                               (over, "`mv draft.txt plan.md`, then `printf ... > plan.md`"),
                               (backup, "`cp --backup=none sub/keep.txt notes.txt`")]:
                got = outcome(kit, proto, call)
                run.check(got.startswith(want), "%s: %s" % (what, got))
                run.step(what, got)
            run.check(outcome(kit, proto, move) == "ran", "the move itself runs: %s" % outcome(kit, proto, move))
            if run.fsview:
                run.eq([ws.read("notes.txt"), ws.read("plan.md")],
                       ["the user's notes, never shown to the model\n", "the user's uncommitted draft\n"],
                       "the user's text after the refused commands")

    return scenario


def scenarios(kit, runs=(False, True)):
    """The shell scenarios for a suite's SCENARIOS list."""
    return [
        ("shell-writes-gated", writes_gated(kit), runs),
        ("shell-normal-work", normal_work(kit), runs),
        ("shell-discards-gated", discards_gated(kit), runs),
        ("shell-links-moves-gated", links_moves_gated(kit), runs),
    ]


def capture(kit):
    """The payloads of the agent's shell tool, as fixtures `*_shell_*`."""
    def capture_shell(run):
        ws = run.ws
        ws.write("a.txt", "one\ntwo\nthree\n")
        ws.write("crlf.txt", b"one\r\ntwo\r\n")
        ws.write("empty.txt", "")
        ws.write("lead.txt", "\n\n  lead\ttab  \nx  \n\n")
        ws.write("big.txt", lines(5000, fmt="line %d of a big file with some words in it"))
        ws.commit()
        calls = {
            "cat": "cat a.txt",
            "sed_range": "sed -n '2,3p' a.txt",
            "nl_sed": "nl -ba a.txt | sed -n '1,2p'",
            "cat_crlf": "cat crlf.txt",
            "cat_empty": "cat empty.txt",
            "cat_lead": "cat lead.txt",
            "cat_big": "cat big.txt",
            "heredoc_write": "cat > new.txt <<'EOF'\nnew file\nEOF",
            "sed_in_place": "sed -i 's/one/ONE/' a.txt",
            "append": "echo x >> log.txt",
            "other": "ls",
        }
        made = {name: kit.sh(cmd) for name, cmd in calls.items()}
        made.update(kit.extra_captures(ws))
        names = {kit.call_id(c): n for n, c in made.items()}
        out = os.path.join(ws.root, "payloads.jsonl")
        with kit.agent(run, [[c] for c in made.values()] + [[kit.done]]) as (proto, a):
            kit.wire_capture(a, out)
            r = kit.prompt(a, "capture")
        fixtures = {}
        for d in harness.hook_payloads(out):
            when, cid = kit.payload_call(d)
            name = names.get(cid)
            if name and when:
                fixtures.setdefault("%s_shell_%s" % (when, name), d)
        sid = kit.session_of(r, fixtures)
        dest = kit.save(run, fixtures, ws, sid)
        run.step("captured", "%d fixtures in %s" % (len(fixtures), os.path.relpath(dest, harness.ROOT)))
        run.check(len(fixtures) >= 2 * len(made) - 2, "fixtures captured: %s" % sorted(fixtures))

    return capture_shell


def squeeze(s, n=160):
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= n else s[:n - 3] + "..."
