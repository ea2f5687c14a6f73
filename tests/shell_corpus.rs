//! The shell gate on a day of ordinary work (issue 39, item 5): a corpus
//! of commands in the order a careful agent runs them in a real project
//! (Rust, Node, Python and Go side by side): it looks around, builds and
//! tests into logs and runs them again, writes scratch files in the
//! project and in the temporary directory, runs generators, edits what it
//! read, formats, takes git from status to commit and rebase, runs the
//! package managers. Every command goes through `fsview-hook AGENT` as
//! each agent's payloads carry it (the hook before; the command run for
//! real in a scratch project, with stand-ins for the build tools; the hook
//! after, with the command's output where the agent puts it, and Claude
//! Code's PostToolUseFailure for a command that failed), with the hook's
//! standard error in a file of the work tree. None may be refused.
//!
//! Then the misses: git's discards of a user's uncommitted edit the agent
//! never saw, each refused with the words and the diff it would lose.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::agent::Agent;
use crate::harness::Run;

/// Each agent's payload shape: `fsview-hook`'s subcommand and its fixtures.
const SHAPES: &[(&str, &str)] = &[
    ("claude", "claude-2.1.332"),
    ("codex", "codex-0.171.0"),
    ("gemini", "gemini-0.61.0"),
    ("qwen", "qwen-0.24.4"),
    ("opencode", "opencode-1.18.33"),
    ("copilot", "copilot-1.0.102"),
    ("droid", "droid-0.225.2"),
    ("pi", "pi-0.73.1"),
    ("kilo", "kilo-7.7.9"),
    ("cline", "cline-3.0.65"),
];

/// The fixtures of a shell call before and after it in `a`'s captures.
fn shell_fixtures(a: &Agent) -> (&'static str, &'static str) {
    match a.name {
        "cline" => ("pre_run_cat", "post_run_cat"),
        _ => ("pre_shell_heredoc_write", "post_shell_cat"),
    }
}

/// The project as the user left it, committed. Each language has one bug
/// (`BROKEN`) that its tests find, and a few lines its formatter changes.
const PROJECT: &[(&str, &str)] = &[
    ("README.md", "# demo\n\nA small project in four languages.\n"),
    (
        ".gitignore",
        "/rust/target/\nnode_modules/\n__pycache__/\n/web/dist/\n*.egg-info/\n.pytest_cache/\n/go/demo\n",
    ),
    (
        "rust/Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    ),
    (
        "rust/src/main.rs",
        "fn main() {\n    println!(\"{}\", demo::greet(\"world\"));  \n}\n",
    ),
    (
        "rust/src/lib.rs",
        "pub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}\")\n}\n\npub fn add(a: i32, b: i32) -> i32 {\n    a - b // BROKEN\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n",
    ),
    (
        "web/package.json",
        "{\n  \"name\": \"web\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\n    \"test\": \"node test/util.test.js\",\n    \"build\": \"node build.js\",\n    \"lint\": \"eslint src\"\n  }\n}\n",
    ),
    (
        "web/src/util.js",
        "function slug(s) {\n  return s.toLowerCase().replace(/ /g, '_'); // BROKEN\n}\nmodule.exports = { slug };\n",
    ),
    (
        "web/src/index.js",
        "const { slug } = require('./util');\nconsole.log(slug('Hello World'));\n",
    ),
    (
        "web/test/util.test.js",
        "const assert = require('assert');\nconst { slug } = require('../src/util');\nassert.strictEqual(slug('Hello World'), 'hello-world');\nconsole.log('ok 1 - slug');\n",
    ),
    (
        "web/build.js",
        "const fs = require('fs');\nfs.mkdirSync('dist', { recursive: true });\nfs.writeFileSync('dist/bundle.js', fs.readFileSync('src/util.js'));\n",
    ),
    ("py/pyproject.toml", "[project]\nname = \"app\"\nversion = \"0.1.0\"\n"),
    ("py/app/__init__.py", ""),
    (
        "py/app/core.py",
        "def mean(xs):\n    return sum(xs) / (len(xs) + 1)  # BROKEN\n",
    ),
    (
        "py/tests/test_core.py",
        "from app.core import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
    ),
    ("go/go.mod", "module example.com/demo\n\ngo 1.22\n"),
    (
        "go/main.go",
        "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Double(2))\n}\n",
    ),
    (
        "go/util.go",
        "package main\n\nfunc Double(x int) int {\n    return x + x + 1 // BROKEN\n}\n",
    ),
    (
        "go/util_test.go",
        "package main\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
    ),
];

/// Stand-ins for the build tools: what each prints, the files each makes
/// or rewrites (a lockfile, a build directory, a formatter's changes), and
/// a failure while the bug is there. node, python3, git and coreutils are
/// the real ones.
const TOOLS: &[(&str, &str)] = &[
    (
        "cargo",
        r#"cmd=$1; [ $# -gt 0 ] && shift
broken() { grep -q BROKEN src/*.rs 2>/dev/null; }
lock() { [ -f Cargo.lock ] || printf '# This file is automatically @generated by Cargo.\nversion = 4\n' > Cargo.lock; }
case $cmd in
  build|check|run)
    echo "   Compiling demo v0.1.0 ($PWD)" >&2; lock
    mkdir -p target/debug && echo bin > target/debug/demo
    echo "    Finished dev profile target(s) in 0.42s" >&2
    [ "$cmd" = run ] && echo "Hello, world"; exit 0;;
  test)
    echo "   Compiling demo v0.1.0 ($PWD)" >&2; lock; mkdir -p target/debug
    echo "running 1 test"
    if broken; then echo "test tests::adds ... FAILED"; echo "test result: FAILED. 0 passed; 1 failed"; exit 101; fi
    echo "test tests::adds ... ok"; echo "test result: ok. 1 passed; 0 failed"; exit 0;;
  clippy) echo "    Checking demo v0.1.0" >&2; echo "warning: 1 warning emitted" >&2; exit 0;;
  fmt)
    if [ "$1" = "--check" ]; then ! grep -l '[[:space:]]$' src/*.rs; exit; fi
    sed -i 's/[[:space:]]*$//' src/*.rs;;
  add) printf '%s = "1"\n' "$1" >> Cargo.toml; echo "      Adding $1 v1.0.0 to dependencies" >&2;;
  update) printf '# This file is automatically @generated by Cargo.\nversion = 4\n' > Cargo.lock;;
  doc) mkdir -p target/doc && echo '<html></html>' > target/doc/index.html;;
  --version) echo "cargo 1.88.0";;
  *) echo "cargo $cmd";;
esac
"#,
    ),
    (
        "npm",
        r#"cmd=$1; [ $# -gt 0 ] && shift
case $cmd in
  install|i|ci)
    mkdir -p node_modules/.bin && echo '{}' > node_modules/.package-lock.json
    printf '{\n  "name": "web",\n  "lockfileVersion": 3\n}\n' > package-lock.json
    echo "added 1 package in 0.2s";;
  test) node test/util.test.js;;
  run) case $1 in build) node build.js && echo "built dist/bundle.js";; lint) npx eslint src;; *) echo "npm run $1";; esac;;
  ls) echo "web@1.0.0";;
  *) echo "npm $cmd";;
esac
"#,
    ),
    (
        "npx",
        r#"tool=$1; [ $# -gt 0 ] && shift
case $tool in
  eslint) echo "0 problems";;
  prettier)
    if [ "$1" = "--write" ]; then shift; for f in $(find "$@" -name '*.js'); do sed -i "s/'/\"/g" "$f"; done; echo "formatted"
    else echo "Checking formatting..."; fi;;
  *) echo "npx $tool";;
esac
"#,
    ),
    (
        "pytest",
        r#"mkdir -p .pytest_cache/v/cache
if grep -q BROKEN app/*.py; then
  echo '{"tests/test_core.py::test_mean": true}' > .pytest_cache/v/cache/lastfailed
  echo "FAILED tests/test_core.py::test_mean - assert 1.5 == 2"; echo "1 failed in 0.02s"; exit 1
fi
echo '{}' > .pytest_cache/v/cache/lastfailed; echo "1 passed in 0.01s"
"#,
    ),
    (
        "ruff",
        r#"case $1 in check) echo "All checks passed!";; format) echo "3 files left unchanged";; *) echo "ruff $1";; esac
"#,
    ),
    (
        "black",
        "echo 'All done! 3 files would be left unchanged.' >&2\n",
    ),
    (
        "mypy",
        "echo 'Success: no issues found in 2 source files'\n",
    ),
    (
        "pip",
        r#"mkdir -p app.egg-info && echo "Successfully installed app-0.1.0"
"#,
    ),
    (
        "go",
        r#"cmd=$1; [ $# -gt 0 ] && shift
broken() { grep -q BROKEN *.go; }
case $cmd in
  build) echo bin > demo;;
  test) if broken; then echo "--- FAIL: TestDouble"; echo "FAIL	example.com/demo	0.01s"; exit 1; fi
        echo "ok  	example.com/demo	0.01s";;
  vet) ;;
  mod) [ "$1" = tidy ] && : > go.sum;;
  run) echo 4;;
  *) echo "go $cmd";;
esac
"#,
    ),
    (
        "gofmt",
        r#"case $1 in
  -l) grep -l '^    ' *.go;;
  -w) sed -i 's/^    /\t/' *.go;;
esac
exit 0
"#,
    ),
];

/// The commands, in order. `@TMP@` is a directory of the system's
/// temporary directory that an earlier session left files in.
const CORPUS: &[&str] = &[
    // Looking around.
    "git status",
    "git log --oneline -5",
    "ls -la",
    "cat README.md",
    "find . -name '*.rs' -not -path './rust/target/*'",
    "cat rust/Cargo.toml",
    "cat rust/src/lib.rs",
    "cat -n rust/src/main.rs",
    "ls web web/src",
    "cat web/package.json",
    "cat web/src/util.js",
    "nl -ba web/test/util.test.js",
    "cat py/pyproject.toml",
    "cat py/app/core.py",
    "head -n 20 py/tests/test_core.py",
    "cat go/go.mod",
    "cat go/util.go",
    "sed -n '1,20p' go/main.go",
    "grep -rn BROKEN --include='*.rs' --include='*.js' --include='*.py' --include='*.go' .",
    "wc -l rust/src/*.rs",
    "git branch -a",
    "git diff --stat",
    // Rust: build and test into logs, and again.
    "cd rust && cargo build 2>&1 | tee ../build.log",
    "tail -n 20 build.log",
    "cd rust && cargo test > ../test.log 2>&1",
    "tail -n 30 test.log",
    "grep -n FAILED test.log",
    "cd rust && cargo test > ../test.log 2>&1",
    "cd rust && cargo clippy 2> ../clippy.log",
    "cat clippy.log",
    "sed -n '5,7p' rust/src/lib.rs",
    "sed -i 's|a - b // BROKEN|a + b|' rust/src/lib.rs",
    "sed -n '5,7p' rust/src/lib.rs",
    "cd rust && cargo build &> ../build.log",
    "cd rust && cargo test 2>&1 | tee ../test.log",
    "cd rust && cargo test >| ../test.log 2>&1",
    "tail -n 5 test.log",
    "cd rust && cargo run > ../run.out",
    "cat run.out",
    "cd rust && cargo fmt --check; echo $?",
    "cd rust && cargo fmt",
    "git diff rust/src/main.rs",
    "cd rust && cargo fmt --check",
    "cd rust && cargo add serde",
    "cat rust/Cargo.toml",
    "cd rust && cargo build > ../build.log 2>&1",
    "cd rust && cargo doc 2> /dev/null",
    "ls rust/target/debug",
    "cd rust && cargo test -- --nocapture > ../test.log 2>&1",
    "cd rust && stdbuf -oL cargo test > ../test.log 2>&1",
    ": > build.log",
    "cd rust && cargo build 2>> ../build.log",
    // Scratch files, in the project and in the temporary directory.
    "mkdir -p scratch",
    "printf '%s\\n' alpha beta gamma > scratch/list.txt",
    "printf '%s\\n' alpha beta gamma delta > scratch/list.txt",
    "cat > scratch/notes.md <<EOF\n# Notes\nworking in $PWD\nEOF",
    "cat > scratch/notes.md <<EOF\n# Notes\nworking in $PWD on $(git rev-parse --abbrev-ref HEAD)\nEOF",
    "echo -e 'a\\tb\\nc\\td' > scratch/table.tsv",
    "echo -e 'a\\tb\\nc\\td\\ne\\tf' > scratch/table.tsv",
    "touch scratch/empty.txt",
    "cat > scratch/empty.txt <<'EOF'\nnow it has text\nEOF",
    "sort scratch/list.txt > scratch/sorted.txt",
    "sort -r scratch/list.txt > scratch/sorted.txt",
    "sort -o scratch/list.txt scratch/list.txt",
    "bash <<'EOF'\nfor f in scratch/*.txt; do wc -l \"$f\"; done > scratch/counts.out\nEOF",
    "bash <<'EOF'\nfor f in scratch/*.txt; do wc -c \"$f\"; done > scratch/counts.out\nEOF",
    "eval 'echo evaluated > scratch/eval.out'",
    "eval 'echo evaluated again > scratch/eval.out'",
    "exec 3> scratch/lock; echo $$ >&3",
    "exec 3> scratch/lock; echo again >&3",
    "python3 -c \"open('scratch/gen.txt', 'w').write('generated\\n')\"",
    "python3 -c \"open('scratch/gen.txt', 'w').write('generated again\\n')\"",
    "node -e \"require('fs').writeFileSync('scratch/gen.json', JSON.stringify({a: 1}))\"",
    "node -e \"require('fs').writeFileSync('scratch/gen.json', JSON.stringify({a: 2}))\"",
    "cp web/package.json scratch/package.copy.json",
    "cp web/package.json scratch/package.copy.json",
    "sed -i 's/\"web\"/\"web-copy\"/' scratch/package.copy.json",
    "diff web/package.json scratch/package.copy.json > scratch/pkg.diff; true",
    "ls @TMP@",
    "cd py && pytest > @TMP@/pytest.log 2>&1",
    "tail -n 5 @TMP@/pytest.log",
    "cd py && pytest -q > @TMP@/pytest.log 2>&1",
    "echo scratch > @TMP@/scratch.txt",
    "git diff > @TMP@/work.patch",
    "git diff > scratch/x.patch",
    "git diff > scratch/x.patch",
    "wc -l scratch/x.patch",
    ": > scratch/run.log",
    ": > scratch/run.log",
    "cargo --version > scratch/versions.txt; node --version >> scratch/versions.txt",
    "echo done >/dev/stderr",
    "echo warn > /dev/fd/2",
    "echo x >/proc/self/fd/2",
    "ls scratch > /dev/null",
    "cat scratch/list.txt | tee /dev/tty > /dev/null || true",
    "rm scratch/sorted.txt",
    "mv scratch/table.tsv scratch/table.old.tsv",
    // Node.
    "cd web && npm install > ../npm-install.log 2>&1",
    "cd web && npm test > ../web-test.log 2>&1",
    "cat web-test.log",
    "sed -n '1,3p' web/src/util.js",
    "sed -i \"s|replace(/ /g, '_'); // BROKEN|replace(/ /g, '-');|\" web/src/util.js",
    "cd web && npm test > ../web-test.log 2>&1",
    "cd web && npm test 2>&1 | tee ../web-test.log",
    "cd web && npm run build > ../web-build.log",
    "ls web/dist",
    "head -n 3 web/dist/bundle.js",
    "cd web && npm run build > ../web-build.log",
    "cd web && npx eslint src > ../lint.log",
    "cd web && npx eslint src > ../lint.log",
    "cd web && npx prettier --check src",
    "cd web && npx prettier --write src",
    "git diff --stat web",
    "cat web/src/util.js",
    "cat > web/src/format.js <<'EOF'\nfunction pad(s, n) {\n  return String(s).padStart(n, \"0\");\n}\nmodule.exports = { pad };\nEOF",
    "node -e \"console.log(require('./web/src/format').pad(7, 3))\"",
    "cat > web/src/format.js <<'EOF'\nfunction pad(s, n) {\n  return String(s).padStart(n, \"0\");\n}\nfunction trim(s) {\n  return String(s).trim();\n}\nmodule.exports = { pad, trim };\nEOF",
    "cd web && node src/index.js > ../index.out",
    "cat index.out",
    "cd web && npm ci > ../npm-install.log 2>&1",
    "cd web && npm ls > /dev/null",
    // Python.
    "cd py && pytest > ../py-test.log 2>&1",
    "grep -n assert py-test.log",
    "cat -n py/app/core.py",
    "sed -i 's|(len(xs) + 1)  # BROKEN|len(xs)|' py/app/core.py",
    "cd py && pytest > ../py-test.log 2>&1",
    "cd py && pytest -q 2>&1 | tee ../py-test.log",
    "cd py && ruff check . > ../ruff.log",
    "cd py && ruff check . > ../ruff.log",
    "cd py && ruff format .",
    "cd py && black --check . 2> ../black.log",
    "cd py && mypy app > ../mypy.log",
    "cd py && mypy app > ../mypy.log",
    "cd py && pip install -e . > ../pip.log 2>&1",
    "python3 - <<'EOF'\nfrom pathlib import Path\nPath('py/app/version.py').write_text('__version__ = \"0.1.0\"\\n')\nEOF",
    "python3 - <<'EOF'\nfrom pathlib import Path\nPath('py/app/version.py').write_text('__version__ = \"0.1.1\"\\n')\nEOF",
    "cat py/app/version.py",
    "cat >> py/app/core.py <<'EOF'\n\n\ndef median(xs):\n    ys = sorted(xs)\n    return ys[len(ys) // 2]\nEOF",
    "cat py/app/core.py",
    "cd py && python3 -c \"from app.core import median; print(median([3, 1, 2]))\"",
    "cd py && python3 -m json.tool ../web/package.json > ../pkg.pretty.json",
    "cd py && python3 -m json.tool ../web/package.json > ../pkg.pretty.json",
    "cat > py/gen_data.py <<'EOF'\nimport json\n\nwith open('data.json', 'w') as f:\n    json.dump({'n': 3}, f)\nEOF",
    "cd py && python3 gen_data.py",
    "cd py && python3 gen_data.py",
    "cat py/data.json",
    "find py -name '__pycache__' -prune -o -name '*.py' -print",
    // Go.
    "cd go && go build ./... 2> ../go-build.log",
    "cd go && go test ./... > ../go-test.log 2>&1",
    "cat go-test.log",
    "cat -n go/util.go",
    "sed -i 's|return x + x + 1 // BROKEN|return x + x|' go/util.go",
    "cd go && go test ./... > ../go-test.log 2>&1",
    "cd go && go vet ./... 2> ../go-vet.log",
    "cd go && gofmt -l .",
    "cd go && gofmt -w .",
    "cd go && gofmt -l . > ../gofmt.log",
    "cd go && go mod tidy",
    "cd go && go build ./...",
    "cd go && go run . > ../go-run.out",
    "cd go && go run . > ../go-run.out",
    "cat go-run.out",
    "cd go && go test -run TestDouble -v ./... | tee ../go-test.log",
    // Editing what it read, with the shell.
    "cat rust/src/main.rs",
    "cat > rust/src/main.rs <<'EOF'\nfn main() {\n    println!(\"{}\", demo::greet(\"fsview\"));\n}\nEOF",
    "cd rust && cargo run > ../run.out",
    "cat run.out",
    "perl -pi -e 's/fsview/world/' rust/src/main.rs",
    "cd rust && cargo build > ../build.log 2>&1",
    // Git, from status to commit and rebase.
    "git status --short",
    "git diff",
    "git diff --stat",
    "git add rust web/src py/app go",
    "git status",
    "git diff --cached --stat",
    "git commit -qm 'Fix add, slug, mean and Double; format'",
    "git log --oneline -3",
    "git show --stat HEAD",
    "git checkout -b feature/mode",
    "cat py/app/core.py",
    "cat >> py/app/core.py <<'EOF'\n\n\ndef mode(xs):\n    return max(set(xs), key=xs.count)\nEOF",
    "cd py && pytest -q > ../py-test.log 2>&1",
    "git add py/app/core.py",
    "git commit -qm 'Add mode'",
    "git checkout main",
    "echo '# Changelog' > CHANGELOG.md",
    "git add CHANGELOG.md && git commit -qm 'Changelog'",
    "git checkout feature/mode",
    "git rebase -q main",
    "git log --oneline --graph -5",
    "git checkout main",
    "git merge --ff-only feature/mode",
    "git branch -d feature/mode",
    "git status --short",
    "git stash list",
    "sed -i 's/Hello, {name}/Hello, {name}!/' rust/src/lib.rs",
    "git diff rust/src/lib.rs",
    "git stash",
    "git stash list",
    "git stash pop",
    "git diff rust/src/lib.rs",
    "cat rust/src/lib.rs",
    "git checkout -- rust/src/lib.rs",
    "git status --short",
    "git diff --quiet; echo $?",
    "sed -i 's/Hello, {name}/Hi, {name}/' rust/src/lib.rs",
    "git restore rust/src/lib.rs",
    "git clean -n",
    "git clean -f scratch",
    "ls",
    "git status --short",
    // Package managers, and everything once more into its logs.
    "cd rust && cargo update",
    "cd rust && cargo build > ../build.log 2>&1",
    "cd web && npm install > ../npm-install.log 2>&1",
    "cd py && pip install -e . > ../pip.log 2>&1",
    "cd go && go mod tidy",
    "make --version > /dev/null 2>&1 || true",
    "cd rust && cargo test > ../test.log 2>&1 && cargo clippy 2> ../clippy.log",
    "cd web && npm test > ../web-test.log 2>&1 && npm run lint > ../lint.log",
    "cd py && pytest > ../py-test.log 2>&1; ruff check . > ../ruff.log",
    "cd go && go test ./... > ../go-test.log 2>&1; go vet ./... 2> ../go-vet.log",
    "for d in rust web py go; do echo \"== $d\"; done > dirs.txt",
    "for d in rust web py go; do echo \"== $d\"; done > dirs.txt",
    "{ date; git rev-parse HEAD; } > stamp.txt",
    "{ date; git rev-parse HEAD; } > stamp.txt",
    "(cd rust && cargo build) > build.log 2>&1",
    "(cd rust && cargo build) > build.log 2>&1",
    "truncate -s 0 test.log",
    "cd rust && cargo test >> ../test.log 2>&1",
    "dd if=/dev/zero of=scratch.bin bs=1k count=1 2>/dev/null",
    "dd if=/dev/zero of=scratch.bin bs=1k count=2 2>/dev/null",
    "install -m 644 stamp.txt stamp.copy.txt",
    "install -m 644 stamp.txt stamp.copy.txt",
    "ln -sf stamp.txt stamp.link",
    "ln -sf stamp.txt stamp.link",
    "tail -n 3 go-test.log build.log",
    "git status --short",
    "git log --oneline | head -5",
    // Programs that write files the command line does not name (issue
    // 44): a formatter over the agent's own file and a file it read
    // whole, a make recipe regenerating a file it wrote, then its next
    // edit of each.
    "printf 'pub fn extra() {}   \\n' > rust/src/extra.rs",
    "cd rust && cargo fmt",
    "sed -i 's/extra/more/' rust/src/extra.rs",
    "printf \"export const greeting = 'hi';\\n\" > web/src/greeting.js",
    "cat web/src/util.js",
    "cd web && npx prettier --write src",
    "sed -i 's/hi/hello/' web/src/greeting.js",
    "sed -i 's/[[:space:]]*$//' web/src/util.js",
    "printf 'N = 0\\n' > gen.txt",
    "cat > Makefile <<'EOF'\ngen:\n\tprintf 'N = 1\\n' > gen.txt\nEOF",
    "make gen > make.log 2>&1",
    "printf 'N = 2\\n' > gen.txt",
    "make gen > make.log 2>&1 && printf 'N = 3\\n' > gen.txt",
    // A generator making a new file it does not name, then the agent's
    // edits of it.
    "cat > gen.sh <<'EOF'\nprintf 'export const version = 1;\\n' > web/src/version.js\nEOF",
    "sh gen.sh > gen.log",
    "sed -i 's/1/2/' web/src/version.js",
    "printf 'export const version = 3;\\n' > web/src/version.js",
];

/// One agent's day: its work tree, its stand-ins, and where its hook's
/// standard error goes.
struct Day {
    a: Agent,
    bin: PathBuf,
    tmp: tempfile::TempDir,
    stderr: PathBuf,
}

impl Day {
    /// Assert that the log has a `check` with verdict `own` for the file
    /// at `path` (relative to the work tree), with `detail`.
    fn logged_own(&self, path: &str, detail: &str) {
        let events = self
            .a
            .env
            .run("fsview-session", &["events", "--json"])
            .json();
        assert!(
            events.iter().any(|e| e["verdict"] == "own"
                && e["path"].as_str().is_some_and(|p| p.ends_with(path))
                && e["detail"] == detail),
            "{}: {events:?}",
            self.a.name
        );
    }

    fn new(name: &'static str, fixtures: &'static str) -> Day {
        let a = Agent::new(name, fixtures);
        for (path, text) in PROJECT {
            a.env.write(path, text);
        }
        a.env
            .sh("git init -q -b main && git add -A && git -c user.name=u -c user.email=u@u commit -qm init")
            .expect(0, "");
        let bin = a.env.root().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, body) in TOOLS {
            use std::os::unix::fs::PermissionsExt;
            let p = bin.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // What an earlier session and another program left in /tmp.
        let tmp = tempfile::Builder::new()
            .prefix("fsview-corpus")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::write(tmp.path().join("pytest.log"), "an earlier session's log\n").unwrap();
        std::fs::write(tmp.path().join("scratch.txt"), "another program's\n").unwrap();
        let stderr = a.env.path("hook-stderr.log");
        std::fs::write(&stderr, "").unwrap();
        Day {
            a,
            bin,
            tmp,
            stderr,
        }
    }

    fn command(&self, c: &str) -> String {
        c.replace("@TMP@", &self.tmp.path().display().to_string())
    }

    /// The hook on `payload`, its standard error appended to the file of
    /// the work tree.
    fn hook(&self, payload: &Value) -> Run {
        use std::io::Write as _;
        use std::process::Stdio;
        // FSVIEW_CORPUS_HOOK: another build's fsview-hook, to measure it
        // (docs/shell.md gives the figures of the build before issue 39).
        let hook = std::env::var_os("FSVIEW_CORPUS_HOOK")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::harness::bin("fsview-hook"));
        let mut c = self.a.cmd(hook);
        let err = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.stderr)
            .unwrap();
        c.arg(self.a.name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err);
        let mut child = crate::harness::spawn(&mut c);
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::new(),
        }
    }

    /// The answer before `command`; when it lets the command through, the
    /// command run and the hook after it.
    fn run(&self, command: &str) -> Run {
        let pre = self.hook(&self.a.with_command(shell_fixtures(&self.a).0, command));
        assert_eq!(pre.code, 0, "{}: {command}", self.a.name);
        if !pre.stdout.is_empty() {
            return pre;
        }
        let ran = self
            .a
            .env
            .sh(&format!(
                "PATH={}:$PATH\nexport GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com\n{command}",
                self.bin.display()
            ));
        if std::env::var_os("FSVIEW_CORPUS_TRACE").is_some() {
            eprintln!(
                "{} [{}] {command}\n{}{}",
                self.a.name, ran.code, ran.stdout, ran.stderr
            );
        }
        let post = self.hook(&after(&self.a, command, &ran.stdout, ran.code));
        assert_eq!(post.code, 0, "{}: {command}", self.a.name);
        pre
    }
}

/// The hook after `command`, which printed `out` and exited `code`, as
/// each agent reports it (the fixtures of `cat a.txt` show where).
fn after(a: &Agent, command: &str, out: &str, code: i32) -> Value {
    let mut p = a.with_command(shell_fixtures(a).1, command);
    let trimmed = out.trim();
    let shown = if trimmed.is_empty() {
        "(empty)"
    } else {
        trimmed
    };
    match a.name {
        "claude" if code != 0 => {
            let o = p.as_object_mut().unwrap();
            o.remove("tool_response");
            o.remove("duration_ms");
            o.insert("hook_event_name".into(), json!("PostToolUseFailure"));
            o.insert("error".into(), json!(format!("Exit code {code}")));
            o.insert("is_interrupt".into(), json!(false));
        }
        "claude" => {
            // Blank lines at the start and whitespace at the end removed.
            let start = out.trim_start_matches('\n');
            p["tool_response"]["stdout"] = json!(start.trim_end());
        }
        "codex" => p["tool_response"] = json!(out),
        "gemini" => {
            let exit = match code {
                0 => String::new(),
                c => format!("Exit Code: {c}\n"),
            };
            p["tool_response"] = json!({
                "llmContent": format!("<untrusted_context>\nOutput: {shown}\n{exit}Process Group PGID: 4242\n</untrusted_context>"),
                "returnDisplay": trimmed,
            });
        }
        "qwen" => {
            p["tool_response"] = json!({
                "llmContent": format!("Command: {command}\nDirectory: (root)\nOutput: {shown}\nError: (none)\nExit Code: {code}\nSignal: (none)\nProcess Group PGID: (none)"),
                "returnDisplay": trimmed,
            });
        }
        "opencode" | "kilo" => {
            let o = if out.is_empty() { "(no output)" } else { out };
            p["output"]["output"] = json!(o);
            p["output"]["metadata"]["output"] = json!(o);
            p["output"]["metadata"]["exit"] = json!(code);
        }
        "copilot" => {
            p["toolResult"] = json!({
                "resultType": "success",
                "textResultForLlm": format!("{trimmed}\n<shellId: 0 completed with exit code {code}>"),
            });
        }
        "droid" => {
            let o = if out.is_empty() {
                "Command completed successfully"
            } else {
                out
            };
            p["tool_response"] = json!(format!("{o}\n\n[Process exited with code {code}]"));
        }
        "pi" => {
            let o = if out.is_empty() { "(no output)" } else { out };
            p["content"] = json!([{"type": "text", "text": o}]);
            p["isError"] = json!(code != 0);
        }
        "cline" => {
            // Each command's output as printed, stdout and stderr.
            let output = json!([{"query": command, "result": out, "success": code == 0}]);
            p["postToolUse"]["result"] = json!(output.to_string());
            p["postToolUse"]["success"] = json!(code == 0);
            p["tool_result"]["output"] = output;
        }
        other => panic!("no payload shape for {other}"),
    }
    p
}

/// A day of `CORPUS` for one payload shape: every command's answer before
/// it; none refused.
fn a_day_of_work(name: &'static str, fixtures: &'static str) {
    let day = Day::new(name, fixtures);
    let mut refused = Vec::new();
    for c in CORPUS {
        let command = day.command(c);
        let pre = day.run(&command);
        if !pre.stdout.is_empty() {
            refused.push(format!("{command}\n  -> {}", pre.stdout.trim_end()));
        }
    }
    // The commands ran: the fixes are in, the logs are there.
    let env = &day.a.env;
    assert!(
        env.sh("! grep -rq BROKEN rust/src web/src py/app go/*.go")
            .code
            == 0
    );
    for f in [
        "build.log",
        "test.log",
        "web-test.log",
        "py-test.log",
        "go-test.log",
    ] {
        assert!(env.path(f).is_file(), "{name}: {f}");
    }
    assert_eq!(
        std::fs::read_to_string(day.tmp.path().join("pytest.log")).unwrap(),
        "FAILED tests/test_core.py::test_mean - assert 1.5 == 2\n1 failed in 0.02s\n"
    );
    assert_eq!(
        env.sh("git log --format=%s").stdout,
        "Add mode\nChangelog\nFix add, slug, mean and Double; format\ninit\n"
    );
    eprintln!(
        "shell corpus, {name}: {} refused of {} commands",
        refused.len(),
        CORPUS.len()
    );
    assert!(
        refused.is_empty(),
        "{name}: {} of {} commands refused:\n{}",
        refused.len(),
        CORPUS.len(),
        refused.join("\n")
    );
}

#[test]
fn the_corpus_has_more_than_200_commands() {
    assert!(CORPUS.len() >= 200, "{}", CORPUS.len());
}

#[test]
fn claude_refuses_no_ordinary_command() {
    a_day_of_work("claude", "claude-2.1.332");
}

#[test]
fn codex_refuses_no_ordinary_command() {
    a_day_of_work("codex", "codex-0.171.0");
}

#[test]
fn gemini_refuses_no_ordinary_command() {
    a_day_of_work("gemini", "gemini-0.61.0");
}

#[test]
fn qwen_refuses_no_ordinary_command() {
    a_day_of_work("qwen", "qwen-0.24.4");
}

#[test]
fn opencode_refuses_no_ordinary_command() {
    a_day_of_work("opencode", "opencode-1.18.33");
}

#[test]
fn copilot_refuses_no_ordinary_command() {
    a_day_of_work("copilot", "copilot-1.0.102");
}

#[test]
fn droid_refuses_no_ordinary_command() {
    a_day_of_work("droid", "droid-0.225.2");
}

#[test]
fn pi_refuses_no_ordinary_command() {
    a_day_of_work("pi", "pi-0.73.1");
}

#[test]
fn kilo_refuses_no_ordinary_command() {
    a_day_of_work("kilo", "kilo-7.7.9");
}

#[test]
fn cline_refuses_no_ordinary_command() {
    a_day_of_work("cline", "cline-3.0.65");
}

/// How `a` words a refusal.
fn denied(a: &Agent, reason: &str) -> String {
    let v = match a.name {
        "claude" | "codex" | "qwen" | "droid" => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
        "gemini" => json!({"decision": "deny", "reason": reason}),
        "copilot" => json!({"permissionDecision": "deny", "permissionDecisionReason": reason}),
        "cline" => json!({
            "overrideInput": {"fsview": "refused; see the hook_context after this result"},
            "context": reason,
        }),
        _ => json!({ "deny": reason }),
    };
    format!("{v}\n")
}

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// The misses (issue 39): git's discards of a user's uncommitted edits the
/// agent never saw, each refused, in every payload shape, with the words
/// and the diff; nothing is lost.
#[test]
fn the_misses_are_refused_with_the_words_and_the_diff() {
    for (name, fixtures) in SHAPES {
        let day = Day::new(name, fixtures);
        let a = &day.a;
        let lib = "pub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}\")\n}\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b // the user's fix, not committed\n}\n";
        a.env.write("rust/src/lib.rs", lib);
        a.env.write("web/src/util.js", "// the user's rewrite\n");
        a.env.write("notes.md", "the user's notes\n");
        for cmd in [
            "git checkout -- rust/src/lib.rs",
            "git checkout rust/src/lib.rs",
            "git restore rust/src/lib.rs",
            "git checkout HEAD -- rust/src/lib.rs",
            "git restore --source=HEAD --worktree rust/src/lib.rs",
            "git stash push -- rust/src/lib.rs",
            "cd rust && git checkout -- src/lib.rs",
        ] {
            assert_eq!(day.run(cmd).stdout, denied(a, NOT_READ), "{name}: {cmd}");
        }
        let both = a.discard_refused(&[("rust/src/lib.rs", true), ("web/src/util.js", true)]);
        for cmd in [
            "git checkout .",
            "git checkout -- .",
            "git restore .",
            "git reset --hard",
            "git reset --hard HEAD",
            "git stash",
            "git stash push -m wip",
            "git checkout -f main",
            "git switch --discard-changes main",
        ] {
            assert_eq!(day.run(cmd).stdout, denied(a, &both), "{name}: {cmd}");
        }
        assert_eq!(
            day.run("git stash -u").stdout,
            denied(
                a,
                &a.discard_refused(&[
                    ("rust/src/lib.rs", true),
                    ("web/src/util.js", true),
                    ("notes.md", false)
                ])
            ),
            "{name}"
        );
        assert_eq!(
            day.run("git restore web").stdout,
            denied(a, &a.discard_refused(&[("web/src/util.js", true)])),
            "{name}"
        );
        // Untracked: the user's notes (an empty file loses nothing).
        assert_eq!(
            day.run("git clean -f").stdout,
            denied(a, &a.discard_refused(&[("notes.md", false)])),
            "{name}"
        );
        // Nothing was lost.
        assert_eq!(
            std::fs::read_to_string(a.env.path("rust/src/lib.rs")).unwrap(),
            lib
        );
        assert!(a.env.path("notes.md").is_file());
    }
}

/// Issue 44, item 3: a read command inside a list whose other output is
/// known (`cd d && cat f`, `gen > f && cat f`, `cat f; echo done`) is a
/// view of what it printed, in every payload shape: the agent's next
/// `sed -i` of the user's file passes. Where something else printed too
/// (`ls && cat f`), nothing is recorded, and the edit is refused (by
/// Codex's gate with the file given back whole).
#[test]
fn reads_inside_a_list_are_views() {
    for (name, fixtures) in SHAPES {
        let day = Day::new(name, fixtures);
        let env = &day.a.env;
        env.write("docs/notes.txt", "alpha\n  beta\n\ngamma\n");
        env.write("docs/other.txt", "one\ntwo\n");
        env.write("docs/third.txt", "x\ny\n");
        let edit = |f: &str| day.run(&format!("sed -i s/a/A/ {f}")).stdout;
        for f in ["docs/notes.txt", "docs/other.txt", "docs/third.txt"] {
            assert_eq!(edit(f), denied(&day.a, NOT_READ), "{name}: {f}");
        }
        for cmd in [
            "cd docs && cat notes.txt; echo done",
            "git status --short > status.txt && cat docs/other.txt",
            "echo '--- third' && cat docs/third.txt && echo '--- end'",
        ] {
            assert_eq!(day.run(cmd).stdout, "", "{name}: {cmd}");
        }
        for f in ["docs/notes.txt", "docs/other.txt", "docs/third.txt"] {
            assert_eq!(edit(f), "", "{name}: {f}");
        }
        // Something else printed: no view, the edit still refused.
        env.write("docs/fourth.txt", "four\n");
        assert_eq!(day.run("ls docs && cat docs/fourth.txt").stdout, "");
        assert_eq!(day.a.views("docs/fourth.txt"), [], "{name}: ls && cat");
        assert_ne!(edit("docs/fourth.txt"), "", "{name}: ls && cat");
    }
}

/// Issue 44, item 1: what a command changed without naming it (a
/// formatter, a generator run from a script) among the files the agent
/// made or holds whole is the agent's own change: its next write of the
/// generated file and its next `sed -i` after its own formatter pass, in
/// every payload shape. A change by someone else between its commands is
/// still someone else's: refused (where the agent was not told it since).
#[test]
fn what_a_command_changed_without_naming_it_is_the_agents_own() {
    for (name, fixtures) in SHAPES {
        let day = Day::new(name, fixtures);
        let env = &day.a.env;
        env.write(
            "gen/regen.sh",
            "printf 'generated again\\n' > gen/out.txt\n",
        );
        env.write("gen/fmt.sh", "sed -i 's/  */ /g' gen/src.txt\n");
        env.write("gen/src.txt", "let  x =  1;\n");
        let ok = |cmd: &str| assert_eq!(day.run(cmd).stdout, "", "{name}: {cmd}");
        ok("printf 'generated\\n' > gen/out.txt");
        ok("sh gen/regen.sh");
        // Logged with the command that changed it.
        day.logged_own("gen/out.txt", "changed by the command: sh gen/regen.sh");
        ok("printf 'generated a third time\\n' > gen/out.txt");
        ok("cat gen/src.txt");
        ok("sh gen/fmt.sh");
        ok("sed -i s/x/y/ gen/src.txt");
        ok("sh gen/fmt.sh && sed -i s/y/z/ gen/src.txt");
        assert_eq!(
            std::fs::read_to_string(env.path("gen/src.txt")).unwrap(),
            "let z = 1;\n"
        );
        // The user's change between two commands: not the agent's.
        env.write("gen/src.txt", "let z = 1; // the user's\n");
        assert_ne!(
            day.run("sed -i s/z/w/ gen/src.txt").stdout,
            "",
            "{name}: the user's change"
        );
        env.write("gen/out.txt", "the user's\n");
        assert_ne!(
            day.run("printf 'x\\n' > gen/out.txt").stdout,
            "",
            "{name}: the user's change"
        );
    }
}

/// Issue 44, item 1: a file a command creates without naming it (a
/// generator's new output) is the agent's own, from its birth time inside
/// the command's run: its next `sed -i` or rewrite passes, logged with the
/// command. A file the user creates between two commands, or changes
/// after the command made it, is someone else's: refused. Needs a
/// filesystem that records birth times (statx): skipped, with the reason,
/// where the temporary directory's does not.
#[test]
fn a_file_a_command_made_without_naming_it_is_the_agents_own() {
    for (name, fixtures) in SHAPES {
        let day = Day::new(name, fixtures);
        let env = &day.a.env;
        env.write("probe.txt", "x\n");
        if std::fs::metadata(env.path("probe.txt"))
            .and_then(|m| m.created())
            .is_err()
        {
            eprintln!("skipped: the temporary directory's filesystem records no birth times");
            return;
        }
        // Made after the command's first tick: a file's birth time comes
        // from the kernel's coarse clock, which may lag the hook's by a
        // tick, and a birth in that tick is (safely) not taken as the
        // command's (`Store::run_made`).
        env.write(
            "gen/new.sh",
            "sleep 0.02; printf 'made\\n' > gen/made.txt\n",
        );
        let ok = |cmd: &str| assert_eq!(day.run(cmd).stdout, "", "{name}: {cmd}");
        ok("sh gen/new.sh");
        ok("sed -i s/made/edited/ gen/made.txt");
        day.logged_own("gen/made.txt", "made by the command: sh gen/new.sh");
        ok("printf 'rewritten\\n' > gen/made.txt");
        assert_eq!(
            std::fs::read_to_string(env.path("gen/made.txt")).unwrap(),
            "rewritten\n"
        );
        // Made by the command, then changed by the user: someone else's.
        env.write(
            "gen/new.sh",
            "sleep 0.02; printf 'made\\n' > gen/second.txt\n",
        );
        ok("sh gen/new.sh");
        std::thread::sleep(std::time::Duration::from_millis(30));
        env.write("gen/second.txt", "the user's\n");
        assert_ne!(
            day.run("sed -i s/user/agent/ gen/second.txt").stdout,
            "",
            "{name}: the user's change to a made file"
        );
        // A file fsview knew (read in part) put back as a new file while a
        // command ran: an editor's save looks the same, so it is not taken
        // as the command's making; refused as changed, as any change to a
        // file read in part is (docs/shell.md).
        env.write("gen/part.txt", "a1\na2\na3\na4\n");
        ok("sed -n 1,2p gen/part.txt");
        env.write(
            "gen/swap.sh",
            "printf 'b1\\n' > gen/new.tmp && mv gen/new.tmp gen/part.txt\n",
        );
        ok("sh gen/swap.sh");
        assert_ne!(
            day.run("sed -i s/b1/c1/ gen/part.txt").stdout,
            "",
            "{name}: a known file replaced during a command"
        );
        // Made by the user between two commands: someone else's.
        ok("true");
        std::thread::sleep(std::time::Duration::from_millis(30));
        env.write("gen/theirs.txt", "the user's\n");
        assert_ne!(
            day.run("sed -i s/user/agent/ gen/theirs.txt").stdout,
            "",
            "{name}: a file the user made"
        );
        assert_eq!(
            std::fs::read_to_string(env.path("gen/theirs.txt")).unwrap(),
            "the user's\n"
        );
    }
}
