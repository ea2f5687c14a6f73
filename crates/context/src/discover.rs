//! Which instruction files a conversation gets, and in which order.
//!
//! [`user_context`] is the eager set, in Claude Code's order (later files
//! weigh more with the model):
//!
//! 1. managed: `MANAGED/CLAUDE.md`, `MANAGED/.claude/rules/**/*.md`;
//! 2. user: `USER/CLAUDE.md`, `USER/rules/**/*.md`;
//! 3. every directory from the top (below `/`, which Claude Code never
//!    reads) down to the working directory: `CLAUDE.md`,
//!    then each of [`Options::extra_names`](crate::Options::extra_names),
//!    `.claude/CLAUDE.md`, `.claude/rules/**/*.md`, `CLAUDE.local.md`;
//! 4. the auto-memory `MEMORY.md`.
//!
//! Each file is followed by its imports. In a rules directory the
//! unconditional rules come first, sorted by path, then the conditional ones
//! (front matter `paths:`) that match one of
//! [`Options::for_paths`](crate::Options::for_paths). A project rule's
//! patterns are relative to the directory holding its `.claude`; user and
//! managed rules have no such directory, so, as in Claude Code, theirs are
//! relative to the working directory. The walk uses the canonical working
//! directory (what `getcwd` reports), and every file is named by its
//! canonical path; a file reached twice (a symlink, an import of an eager
//! file) is loaded once, where it is first reached.
//!
//! [`nested_for`] is the lazy set for paths the agent is about to touch, in
//! Claude Code's phases: the matching managed and user conditional rules, then
//! each directory strictly below the working directory down to the path's
//! directory (all the names above, rules filtered the same way), then the
//! matching conditional rules of the directories from the top to the working
//! directory. Files the session already holds are skipped.
//!
//! `extra_names` (`--also AGENTS.md`) are fsview's: Claude Code 2.1.332 reads
//! no other names.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::load::{Loader, RuleMode, Source};
use crate::{Options, Origin, UserContext};

/// The eager instruction files for `opts`.
pub fn user_context(opts: &Options) -> UserContext {
    let mut l = Loader::new(opts, &HashSet::new());
    let targets = l.targets.clone();
    let cwd = l.cwd.clone();

    let managed = l.managed_dir.clone();
    let managed_src = l.cwd_source("managed", Origin::Managed);
    l.load_file(&managed.join("CLAUDE.md"), &managed_src);
    let managed_rules = Source {
        label: "managed-rule",
        ..managed_src
    };
    let rules_dir = managed.join(".claude").join("rules");
    l.load_rules(&rules_dir, &cwd, &managed_rules, RuleMode::All, &targets);

    let user = l.user_dir.clone();
    let user_src = user_source("user");
    l.load_file(&user.join("CLAUDE.md"), &user_src);
    let user_rules = Source {
        label: "user-rule",
        ..user_src
    };
    l.load_rules(
        &user.join("rules"),
        &cwd,
        &user_rules,
        RuleMode::All,
        &targets,
    );

    for dir in top_down(&cwd) {
        load_directory(&mut l, &dir, &targets);
    }

    if let Some(memory) = &opts.memory_file {
        let source = Source {
            label: "memory",
            origin: Origin::Memory,
            import_root: None,
            follow_imports: false,
            is_memory: true,
        };
        // Named on purpose: its absence is said, unlike an instruction
        // file's that may or may not be in a directory.
        match std::fs::metadata(memory) {
            Err(_) => l.warn(format!(
                "{}: file not found; --memory skipped",
                memory.display()
            )),
            Ok(m) if m.is_dir() => l.warn(format!(
                "{}: is a directory; --memory skipped",
                memory.display()
            )),
            Ok(_) => l.load_file(memory, &source),
        }
    }
    l.finish()
}

/// The instruction files that apply to `opts.for_paths` and were not loaded
/// eagerly: see the module documentation. Files whose canonical path is in
/// `already_loaded` are skipped, and so are their imports.
pub fn nested_for(opts: &Options, already_loaded: &HashSet<PathBuf>) -> UserContext {
    let mut l = Loader::new(opts, already_loaded);
    let cwd = l.cwd.clone();
    let managed = l.managed_dir.clone();
    let user = l.user_dir.clone();
    let managed_rules = l.cwd_source("managed-rule", Origin::Managed);
    let user_rules = user_source("user-rule");
    for target in l.targets.clone() {
        let one = std::slice::from_ref(&target);
        let managed_dir = managed.join(".claude").join("rules");
        l.load_rules(
            &managed_dir,
            &cwd,
            &managed_rules,
            RuleMode::ConditionalOnly,
            one,
        );
        l.load_rules(
            &user.join("rules"),
            &cwd,
            &user_rules,
            RuleMode::ConditionalOnly,
            one,
        );

        let target_dir = if target.is_dir() {
            target.clone()
        } else {
            target.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        if let Ok(rel) = target_dir.strip_prefix(&cwd) {
            let mut dir = cwd.clone();
            for component in rel.components() {
                dir.push(component);
                load_directory(&mut l, &dir, one);
            }
        }

        for dir in top_down(&cwd) {
            let rule = l.cwd_source("rule", Origin::Project);
            let rules_dir = dir.join(".claude").join("rules");
            l.load_rules(&rules_dir, &dir, &rule, RuleMode::ConditionalOnly, one);
        }
    }
    l.finish()
}

/// The instruction files of one directory, in order.
fn load_directory(l: &mut Loader, dir: &Path, targets: &[PathBuf]) {
    let project = l.cwd_source("project", Origin::Project);
    l.load_file(&dir.join("CLAUDE.md"), &project);
    for name in &l.opts.extra_names.clone() {
        l.load_file(&dir.join(name), &project);
    }
    let dot_claude = dir.join(".claude");
    l.load_file(&dot_claude.join("CLAUDE.md"), &project);
    let rule = l.cwd_source("rule", Origin::Project);
    l.load_rules(
        &dot_claude.join("rules"),
        dir,
        &rule,
        RuleMode::All,
        targets,
    );
    let local = l.cwd_source("local", Origin::Local);
    l.load_file(&dir.join("CLAUDE.local.md"), &local);
}

/// The user's own files: Claude Code follows their imports anywhere.
fn user_source(label: &'static str) -> Source {
    Source {
        label,
        origin: Origin::User,
        import_root: None,
        follow_imports: true,
        is_memory: false,
    }
}

/// Each directory from the top down to `dir` inclusive, without `/`
/// itself: Claude Code's walk stops below the file system root.
fn top_down(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = dir
        .ancestors()
        .filter(|d| d.parent().is_some())
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{self, FileText};
    use crate::{InjectedFile, Kind, Layout};
    use std::fs;

    struct Fixture {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    impl Fixture {
        fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().canonicalize().unwrap();
            Fixture { _tmp: tmp, root }
        }

        fn write(&self, rel: &str, text: &str) -> PathBuf {
            let p = self.root.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, text).unwrap();
            p
        }

        fn p(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }

        /// Project at `repo`, working directory `cwd` inside it.
        fn opts(&self, cwd: &str) -> Options {
            fs::create_dir_all(self.p(cwd)).unwrap();
            fs::create_dir_all(self.p("repo/.git")).unwrap();
            Options {
                cwd: self.p(cwd),
                home: Some(self.p("home")),
                managed_dir: self.p("managed"),
                user_dir: self.p("home/.claude"),
                extra_names: vec![],
                memory_file: None,
                allow_external_imports: false,
                for_paths: vec![],
            }
        }

        /// Paths of the loaded files, relative to the fixture root.
        fn rel(&self, files: &[InjectedFile]) -> Vec<String> {
            files
                .iter()
                .map(|f| {
                    f.path
                        .strip_prefix(&self.root)
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect()
        }

        fn warnings(&self, ctx: &UserContext) -> Vec<String> {
            let root = format!("{}/", self.root.display());
            ctx.warnings.iter().map(|w| w.replace(&root, "")).collect()
        }
    }

    #[test]
    fn claude_code_order_and_labels() {
        let f = Fixture::new();
        f.write("managed/CLAUDE.md", "managed\n");
        f.write("managed/.claude/rules/policy.md", "policy\n");
        f.write("home/.claude/CLAUDE.md", "user\n");
        f.write("home/.claude/rules/b.md", "user rule b\n");
        f.write("home/.claude/rules/a/z.md", "user rule a/z\n");
        f.write("repo/CLAUDE.md", "root\n");
        f.write("repo/AGENTS.md", "agents\n");
        f.write("repo/.claude/CLAUDE.md", "dot claude\n");
        f.write("repo/.claude/rules/style.md", "style\n");
        f.write("repo/.claude/rules/api/rest.md", "rest\n");
        f.write("repo/CLAUDE.local.md", "local\n");
        f.write("repo/pkg/CLAUDE.md", "pkg\n");
        f.write("repo/pkg/deeper/CLAUDE.md", "below cwd: lazy\n");
        f.write("repo/empty/CLAUDE.md", "");
        f.write("home/.claude/projects/x/memory/MEMORY.md", "- [a](a.md)\n");
        let mut opts = f.opts("repo/pkg");
        opts.extra_names = vec!["AGENTS.md".into()];
        opts.memory_file = Some(f.p("home/.claude/projects/x/memory/MEMORY.md"));
        let ctx = user_context(&opts);
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "managed/CLAUDE.md",
                "managed/.claude/rules/policy.md",
                "home/.claude/CLAUDE.md",
                "home/.claude/rules/a/z.md",
                "home/.claude/rules/b.md",
                "repo/CLAUDE.md",
                "repo/AGENTS.md",
                "repo/.claude/CLAUDE.md",
                "repo/.claude/rules/api/rest.md",
                "repo/.claude/rules/style.md",
                "repo/CLAUDE.local.md",
                "repo/pkg/CLAUDE.md",
                "home/.claude/projects/x/memory/MEMORY.md",
            ]
        );
        let labels: Vec<_> = ctx.files.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            vec![
                "managed",
                "managed-rule",
                "user",
                "user-rule",
                "user-rule",
                "project",
                "project",
                "project",
                "rule",
                "rule",
                "local",
                "project",
                "memory"
            ]
        );
        let origins: Vec<_> = ctx.files.iter().map(|f| f.origin.as_str()).collect();
        assert_eq!(
            origins,
            vec![
                "managed", "managed", "user", "user", "user", "project", "project", "project",
                "project", "project", "local", "project", "memory"
            ]
        );
        assert!(ctx.files.iter().all(|f| f.kind == Kind::Full));
        assert!(ctx.warnings.is_empty(), "{:?}", ctx.warnings);
        // raw and meta describe the file read.
        assert_eq!(ctx.files[5].raw, b"root\n");
        assert_eq!(ctx.files[5].meta.len(), 5);
    }

    #[test]
    fn imports_follow_their_importer_with_the_importer_description() {
        let f = Fixture::new();
        f.write(
            "repo/CLAUDE.md",
            "See @docs/a.md and @./b\\ c.md#section.\n\n```\n@fenced.md\n```\n\nRun `@span.md`.\n",
        );
        f.write("repo/docs/a.md", "A imports @../CLAUDE.md and @sub/d.md\n");
        f.write("repo/docs/sub/d.md", "D\n");
        f.write("repo/b c.md", "B C\n");
        f.write("repo/CLAUDE.local.md", "@docs/a.md\n");
        let ctx = user_context(&f.opts("repo"));
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "repo/CLAUDE.md",
                "repo/docs/a.md",
                "repo/docs/sub/d.md",
                "repo/b c.md",
                "repo/CLAUDE.local.md"
            ]
        );
        let by: Vec<_> = ctx
            .files
            .iter()
            .map(|x| {
                x.imported_by
                    .as_ref()
                    .map(|p| p.strip_prefix(&f.root).unwrap().display().to_string())
            })
            .collect();
        assert_eq!(
            by,
            vec![
                None,
                Some("repo/CLAUDE.md".into()),
                Some("repo/docs/a.md".into()),
                Some("repo/CLAUDE.md".into()),
                None
            ]
        );
        assert_eq!(ctx.files[1].label, "import");
        assert_eq!(ctx.files[1].origin, Origin::Project);
        // The cycle A -> CLAUDE.md -> A is broken silently; the code block
        // and the code span are not imports, so nothing is missing.
        assert!(ctx.warnings.is_empty(), "{:?}", ctx.warnings);
    }

    #[test]
    fn import_warnings_missing_directory_binary_and_depth() {
        let f = Fixture::new();
        f.write(
            "repo/CLAUDE.md",
            "@missing.md @adir @bin.md @diagram.svg @NOTES @Upper.MD @d1.md\n",
        );
        fs::create_dir_all(f.p("repo/adir")).unwrap();
        fs::write(f.p("repo/bin.md"), b"GIF89a\0\0\x01").unwrap();
        f.write("repo/diagram.svg", "<svg/>\n");
        f.write("repo/NOTES", "no extension\n");
        f.write("repo/Upper.MD", "upper case extension\n");
        for i in 1..=6 {
            f.write(
                &format!("repo/d{i}.md"),
                &format!("depth {i} @d{}.md\n", i + 1),
            );
        }
        let ctx = user_context(&f.opts("repo"));
        // Claude Code reads imports down to depth 4: d1..d4.
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "repo/CLAUDE.md",
                "repo/NOTES",
                "repo/Upper.MD",
                "repo/d1.md",
                "repo/d2.md",
                "repo/d3.md",
                "repo/d4.md",
            ]
        );
        assert_eq!(
            f.warnings(&ctx),
            vec![
                "import missing.md from repo/CLAUDE.md: file not found",
                "import adir from repo/CLAUDE.md: is a directory",
                "import bin.md from repo/CLAUDE.md: not a text file (NUL byte in its first 8 KiB); skipped",
                "import diagram.svg from repo/CLAUDE.md: .svg is not a text file extension Claude Code imports; skipped",
                "import d5.md from repo/d4.md: imports nest deeper than 4 levels; not loaded",
            ]
        );
    }

    #[test]
    fn extensions_as_node_reads_them() {
        use crate::load::non_text_extension as ext;
        let e = |p: &str| ext(Path::new(p));
        assert_eq!(e("/a/b.md"), None);
        assert_eq!(e("/a/B.Rs"), None);
        assert_eq!(e("/a/Makefile"), None);
        assert_eq!(e("/a/.env"), None);
        assert_eq!(e("/a/.hidden.md"), None);
        assert_eq!(e("/a/x.tar.gz"), Some(".gz".into()));
        assert_eq!(e("/a/x.svg"), Some(".svg".into()));
        assert_eq!(e("/a/x.PNG"), Some(".png".into()));
        assert_eq!(e("/a/x."), Some(".".into()));
    }

    // Issue 16, fix 2: Claude Code's boundary for imports is the directory
    // it started in, not the git work tree.
    #[test]
    fn imports_may_not_leave_the_working_directory() {
        let f = Fixture::new();
        f.write("outside.md", "secret\n");
        f.write("repo/CLAUDE.md", "@../outside.md @link.md @docs/style.md\n");
        f.write("repo/docs/style.md", "style\n");
        f.write("repo/pkg/CLAUDE.local.md", "@../docs/style.md @notes.md\n");
        f.write("repo/pkg/notes.md", "notes\n");
        std::os::unix::fs::symlink(f.p("outside.md"), f.p("repo/link.md")).unwrap();
        let opts = f.opts("repo");
        let ctx = user_context(&opts);
        assert_eq!(
            f.rel(&ctx.files),
            vec!["repo/CLAUDE.md", "repo/docs/style.md"]
        );
        assert_eq!(
            f.warnings(&ctx),
            vec![
                "import ../outside.md from repo/CLAUDE.md: outside.md is outside the working directory repo; not loaded (external imports are not allowed)",
                "import link.md from repo/CLAUDE.md: outside.md is outside the working directory repo; not loaded (external imports are not allowed)",
            ]
        );
        // From a subdirectory of the work tree, the root's imports are
        // outside too; the subdirectory's own are not.
        let ctx = user_context(&f.opts("repo/pkg"));
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "repo/CLAUDE.md",
                "repo/pkg/CLAUDE.local.md",
                "repo/pkg/notes.md"
            ]
        );
        assert_eq!(
            f.warnings(&ctx)[2],
            "import docs/style.md from repo/CLAUDE.md: repo/docs/style.md is outside the working directory repo/pkg; not loaded (external imports are not allowed)"
        );
        let allowed = Options {
            allow_external_imports: true,
            ..opts
        };
        let ctx = user_context(&allowed);
        assert_eq!(
            f.rel(&ctx.files),
            vec!["repo/CLAUDE.md", "outside.md", "repo/docs/style.md"]
        );
    }

    #[test]
    fn a_path_that_leaves_and_comes_back_is_outside() {
        let f = Fixture::new();
        // `../elsewhere/link.md` is outside as written, even though the
        // link leads back inside.
        f.write("repo/inside.md", "inside\n");
        fs::create_dir_all(f.p("elsewhere")).unwrap();
        std::os::unix::fs::symlink(f.p("repo/inside.md"), f.p("elsewhere/link.md")).unwrap();
        f.write("repo/CLAUDE.md", "@../elsewhere/link.md\n");
        let ctx = user_context(&f.opts("repo"));
        assert_eq!(f.rel(&ctx.files), vec!["repo/CLAUDE.md"]);
        assert_eq!(ctx.warnings.len(), 1, "{:?}", ctx.warnings);
    }

    #[test]
    fn user_files_import_from_anywhere_managed_ones_from_the_working_directory() {
        let f = Fixture::new();
        f.write(
            "home/.claude/CLAUDE.md",
            "@~/.claude/style.md @../notes.md\n",
        );
        f.write("home/.claude/style.md", "style\n");
        f.write("home/notes.md", "notes\n");
        f.write("managed/CLAUDE.md", "@policy.md @../repo/shared.md\n");
        f.write("managed/policy.md", "policy\n");
        f.write("repo/shared.md", "shared\n");
        let ctx = user_context(&f.opts("repo"));
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "managed/CLAUDE.md",
                "repo/shared.md",
                "home/.claude/CLAUDE.md",
                "home/.claude/style.md",
                "home/notes.md"
            ]
        );
        assert_eq!(
            f.warnings(&ctx),
            vec!["import policy.md from managed/CLAUDE.md: managed/policy.md is outside the working directory repo; not loaded (external imports are not allowed)"]
        );
        let origins: Vec<_> = ctx.files.iter().map(|x| x.origin).collect();
        assert_eq!(
            origins,
            vec![
                Origin::Managed,
                Origin::Managed,
                Origin::User,
                Origin::User,
                Origin::User
            ]
        );
    }

    #[test]
    fn the_walk_does_not_read_the_file_system_root() {
        assert_eq!(
            top_down(Path::new("/a/b")),
            vec![PathBuf::from("/a"), PathBuf::from("/a/b")]
        );
        assert!(top_down(Path::new("/")).is_empty());
    }

    #[test]
    fn processing_front_matter_and_comments_make_a_processed_view() {
        let f = Fixture::new();
        f.write(
            "repo/CLAUDE.md",
            "# Rules\n\n<!-- note to self -->\n\nUse bun <!-- inline --> always.\n",
        );
        f.write(
            "repo/.claude/rules/fm.md",
            "---\ndescription: x\n---\nBody\n",
        );
        f.write(
            "repo/.claude/rules/bad.md",
            "---\ndescription: \"unclosed\n---\nBroken\n",
        );
        f.write(
            "repo/.claude/rules/only-comment.md",
            "<!-- nothing else -->\n",
        );
        let ctx = user_context(&f.opts("repo"));
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "repo/CLAUDE.md",
                "repo/.claude/rules/bad.md",
                "repo/.claude/rules/fm.md"
            ]
        );
        // The comment goes with the blank line after it (issue 16, fix 1).
        assert_eq!(
            ctx.files[0].text,
            "# Rules\n\nUse bun <!-- inline --> always.\n"
        );
        assert_eq!(ctx.files[0].kind, Kind::Processed);
        assert_eq!(
            ctx.files[1].text,
            "---\ndescription: \"unclosed\n---\nBroken\n"
        );
        assert_eq!(ctx.files[1].kind, Kind::Full);
        assert_eq!(ctx.files[2].text, "Body\n");
        assert_eq!(ctx.files[2].kind, Kind::Processed);
        assert_eq!(ctx.files[2].raw, b"---\ndescription: x\n---\nBody\n");
        let w = f.warnings(&ctx);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("repo/.claude/rules/bad.md: invalid front matter, injected as is: "),
            "{w:?}"
        );
    }

    #[test]
    fn conditional_rules_load_for_matching_paths_only() {
        let f = Fixture::new();
        f.write(
            "repo/.claude/rules/ts.md",
            "---\npaths: \"src/**/*.{ts,tsx}\"\n---\nTS rule\n",
        );
        f.write("repo/.claude/rules/any.md", "always\n");
        f.write(
            "home/.claude/rules/docs.md",
            "---\npaths:\n  - \"docs/**\"\n---\nDocs rule\n",
        );
        let mut opts = f.opts("repo");
        let ctx = user_context(&opts);
        assert_eq!(f.rel(&ctx.files), vec!["repo/.claude/rules/any.md"]);

        opts.for_paths = vec![f.p("repo/lib/x.ts")];
        assert_eq!(
            f.rel(&user_context(&opts).files),
            vec!["repo/.claude/rules/any.md"]
        );

        opts.for_paths = vec![f.p("repo/src/a/b.tsx"), f.p("repo/docs/guide/x.md")];
        let ctx = user_context(&opts);
        assert_eq!(
            f.rel(&ctx.files),
            vec![
                "home/.claude/rules/docs.md",
                "repo/.claude/rules/any.md",
                "repo/.claude/rules/ts.md"
            ]
        );
        assert!(ctx.files[0].conditional && !ctx.files[1].conditional && ctx.files[2].conditional);
        assert_eq!(ctx.files[2].text, "TS rule\n");
    }

    #[test]
    fn memory_is_truncated_with_notice_and_processed() {
        let f = Fixture::new();
        let text: String = (1..=300).map(|i| format!("- entry {i}\n")).collect();
        let mem = f.write("mem/MEMORY.md", &text);
        let mut opts = f.opts("repo");
        opts.memory_file = Some(mem);
        let ctx = user_context(&opts);
        let m = &ctx.files[0];
        assert_eq!(m.label, "memory");
        assert_eq!(m.kind, Kind::Processed);
        assert_eq!(m.text.lines().count(), 202);
        assert!(m.text.starts_with("- entry 1\n"));
        assert!(m
            .text
            .contains("- entry 200\n\n> WARNING: MEMORY.md is 300 lines (limit: 200)."));
        assert!(!m.text.contains("entry 201"));
    }

    #[test]
    fn size_limits_warn() {
        let f = Fixture::new();
        f.write("repo/CLAUDE.md", &"x".repeat(40_001));
        let big = fs::File::create(f.p("repo/CLAUDE.local.md")).unwrap();
        big.set_len(4 * 1024 * 1024 + 1).unwrap();
        let ctx = user_context(&f.opts("repo"));
        assert_eq!(f.rel(&ctx.files), vec!["repo/CLAUDE.md"]);
        assert_eq!(
            f.warnings(&ctx),
            vec![
                "repo/CLAUDE.md: 40001 characters, over the 40000 recommended for an instruction file",
                "repo/CLAUDE.local.md: 4194305 bytes, larger than 4 MiB; skipped",
            ]
        );
    }

    #[test]
    fn nested_files_load_lazily_and_once() {
        let f = Fixture::new();
        f.write("repo/CLAUDE.md", "root\n");
        f.write(
            "repo/.claude/rules/ts.md",
            "---\npaths: \"packages/**/*.ts\"\n---\nTS\n",
        );
        f.write("repo/packages/CLAUDE.md", "packages\n");
        f.write("repo/packages/api/CLAUDE.md", "api @notes.md\n");
        f.write("repo/packages/api/notes.md", "notes\n");
        f.write(
            "repo/packages/api/.claude/rules/server.md",
            "---\npaths: src/server.ts\n---\nserver\n",
        );
        f.write(
            "repo/packages/api/.claude/rules/other.md",
            "---\npaths: src/other.ts\n---\nother\n",
        );
        f.write("repo/packages/api/.claude/rules/always.md", "api always\n");
        f.write("repo/packages/api/src/CLAUDE.local.md", "src local\n");
        f.write("repo/packages/web/CLAUDE.md", "web: not on the way\n");
        f.write(
            "home/.claude/rules/ts.md",
            "---\npaths: \"**/*.ts\"\n---\nuser TS\n",
        );
        let mut opts = f.opts("repo");
        let eager = user_context(&opts);
        assert_eq!(f.rel(&eager.files), vec!["repo/CLAUDE.md"]);

        opts.for_paths = vec![f.p("repo/packages/api/src/server.ts")];
        let loaded: HashSet<PathBuf> = eager.files.iter().map(|x| x.path.clone()).collect();
        let nested = nested_for(&opts, &loaded);
        assert_eq!(
            f.rel(&nested.files),
            vec![
                "home/.claude/rules/ts.md",
                "repo/packages/CLAUDE.md",
                "repo/packages/api/CLAUDE.md",
                "repo/packages/api/notes.md",
                "repo/packages/api/.claude/rules/always.md",
                "repo/packages/api/.claude/rules/server.md",
                "repo/packages/api/src/CLAUDE.local.md",
                "repo/.claude/rules/ts.md",
            ]
        );
        assert!(nested.warnings.is_empty(), "{:?}", nested.warnings);

        // A second call with everything loaded returns nothing new.
        let mut all = loaded;
        all.extend(nested.files.iter().map(|x| x.path.clone()));
        assert!(nested_for(&opts, &all).files.is_empty());
    }

    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let f = Fixture::new();
        let opts = f.opts("repo");
        let fifo = f.p("repo/CLAUDE.md");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let ctx = user_context(&opts);
        assert!(ctx.files.is_empty());
        assert_eq!(
            f.warnings(&ctx),
            vec!["repo/CLAUDE.md: not a regular file; skipped"]
        );
    }

    #[test]
    fn rendering_is_deterministic() {
        let f = Fixture::new();
        f.write("repo/CLAUDE.md", "# Project\n\n@a.md\n");
        f.write("repo/a.md", "A\n");
        let opts = f.opts("repo");
        let render = || {
            let files: Vec<FileText> = user_context(&opts)
                .files
                .iter()
                .map(FileText::from)
                .collect();
            render::instructions(&files, Layout::ClaudeCode2_1_332)
        };
        let one = render();
        assert_eq!(one, render());
        let root = f.p("repo");
        assert!(one.ends_with(&format!(
            "Contents of {}/CLAUDE.md (project instructions, checked into the codebase):\n\n# Project\n\n@a.md\n\nContents of {}/a.md (project instructions, checked into the codebase):\n\nA",
            root.display(),
            root.display()
        )));
    }
}
