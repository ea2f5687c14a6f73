//! Property tests of the JSON Lines request parsers (`--requests`) of
//! fsview-read and fsview-check-edit: the built binaries get generated
//! stdin mixing good requests, bad lines and blank lines, and must name
//! every bad line once, do every good request once and in order, and exit
//! 2 exactly when something was bad.
//!
//! Processes are slow: 64 cases by default, `PROPTEST_CASES / 10` for a
//! long run (`scripts/fuzz`). Failures found are kept as seeds in
//! `proptest-regressions/`.

use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError, TestRunner};

use crate::harness::{Env, Run};

/// Paths a request may name: the files, and one that does not exist.
const PATHS: &[&str] = &["a.rs", "sub/b.txt", "c d.md", "é.txt", "missing.rs"];
const MISSING: usize = 4;

/// 64 cases, or `PROPTEST_CASES / 10` for a long run.
fn runner(seeds: &'static str) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .map_or(64, |n| (n / 10).max(1));
    TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(seeds))),
        ..ProptestConfig::default()
    })
}

fn env() -> Env {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    env.write("sub/b.txt", "one\ntwo\nthree");
    env.write("c d.md", "# c d\n");
    env.write("é.txt", "é\r\nè\r\n");
    env
}

/// One line of stdin.
#[derive(Debug, Clone)]
enum Line {
    /// A request that parses: a path (index into `PATHS`), the fields the
    /// tool takes, the way the JSON is written.
    Good {
        path: usize,
        fields: Vec<(&'static str, String)>,
        style: Style,
    },
    /// A line that does not parse as a request, and so must be named.
    Bad(String),
    /// White space only: skipped, neither done nor named.
    Blank(String),
}

#[derive(Debug, Clone, Copy)]
enum Style {
    Plain,
    /// Every non-ASCII character and `/` escaped (`\u00e9`, `\/`).
    Escaped,
    /// Spaces around every token.
    Spaced,
}

fn json_string(s: &str, style: Style) -> String {
    match style {
        Style::Escaped => {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '/' => out.push_str("\\/"),
                    c if c.is_ascii() => out.push(c),
                    c => {
                        let mut buf = [0u16; 2];
                        for u in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{u:04x}"));
                        }
                    }
                }
            }
            out.push('"');
            out
        }
        _ => serde_json::to_string(s).unwrap(),
    }
}

impl Line {
    fn render(&self) -> String {
        match self {
            Line::Good {
                path,
                fields,
                style,
            } => {
                let sep = match style {
                    Style::Spaced => " ",
                    _ => "",
                };
                let mut members = vec![format!(
                    "{sep}\"path\"{sep}:{sep}{}",
                    json_string(PATHS[*path], *style)
                )];
                for (k, v) in fields {
                    members.push(format!("{sep}\"{k}\"{sep}:{sep}{v}"));
                }
                // Field order does not matter: put the path last sometimes.
                if fields.len() % 2 == 1 {
                    members.rotate_left(1);
                }
                format!("{sep}{{{}}}{sep}", members.join(","))
            }
            Line::Bad(s) | Line::Blank(s) => s.clone(),
        }
    }
}

/// Lines every parser must refuse.
fn bad_common() -> impl Strategy<Value = String> {
    prop_oneof![
        // Not JSON, or not an object.
        "[ -~]{1,16}".prop_filter("not blank", |s| !s.trim().is_empty()),
        prop::sample::select(vec![
            "[]",
            "null",
            "\"a.rs\"",
            "1",
            "{}",
            "{\"path\":1}",
            "{\"path\":null}",
            "{\"path\":[\"a.rs\"]}",
            "{\"pth\":\"a.rs\"}",
            "{\"path\":\"a.rs\",\"x\":1}",
            "{\"path\":\"a.rs\"} x",
            "{\"path\":\"a.rs\"",
            "{\"path\":\"a.rs\",}",
            "{\"path\":\"a.rs\",\"path\":\"a.rs\"}",
            "{'path':'a.rs'}",
            "\u{feff}{\"path\":\"a.rs\"}",
            "{\"path\":\"a.rs\"}{\"path\":\"a.rs\"}",
            "{\"path\":\"a.rs\"}\r{\"path\":\"a.rs\"}",
        ])
        .prop_map(str::to_string),
    ]
}

fn blank() -> impl Strategy<Value = Line> {
    prop::sample::select(vec!["", " ", "\t", "  \t ", "\r", "\u{a0}"])
        .prop_map(|s| Line::Blank(s.to_string()))
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        Just(Style::Plain),
        Just(Style::Escaped),
        Just(Style::Spaced)
    ]
}

/// A line number for `offset`/`limit`: absent, null or a positive u64.
fn line_number() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some("null".to_string())),
        4 => (1..8u64).prop_map(|n| Some(n.to_string())),
        1 => Just(Some(u64::MAX.to_string())),
    ]
}

fn read_line() -> impl Strategy<Value = Line> {
    let good = (0..PATHS.len(), line_number(), line_number(), style()).prop_map(
        |(path, offset, limit, style)| {
            let mut fields = Vec::new();
            if let Some(o) = offset {
                fields.push(("offset", o));
            }
            if let Some(l) = limit {
                fields.push(("limit", l));
            }
            Line::Good {
                path,
                fields,
                style,
            }
        },
    );
    let bad_numbers = prop::sample::select(vec![
        "{\"path\":\"a.rs\",\"offset\":0}",
        "{\"path\":\"a.rs\",\"limit\":0}",
        "{\"path\":\"a.rs\",\"offset\":-1}",
        "{\"path\":\"a.rs\",\"offset\":1.5}",
        "{\"path\":\"a.rs\",\"offset\":\"2\"}",
        "{\"path\":\"a.rs\",\"limit\":18446744073709551616}",
        "{\"path\":\"a.rs\",\"write\":true}",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => good,
        2 => bad_common().prop_map(Line::Bad),
        1 => bad_numbers.prop_map(Line::Bad),
        1 => blank(),
    ]
}

fn check_line() -> impl Strategy<Value = Line> {
    let write = prop_oneof![
        Just(None),
        Just(Some("true".to_string())),
        Just(Some("false".to_string())),
    ];
    let good = (0..PATHS.len(), write, style()).prop_map(|(path, write, style)| Line::Good {
        path,
        fields: write.map(|w| ("write", w)).into_iter().collect(),
        style,
    });
    let bad_write = prop::sample::select(vec![
        "{\"path\":\"a.rs\",\"write\":\"yes\"}",
        "{\"path\":\"a.rs\",\"write\":null}",
        "{\"path\":\"a.rs\",\"write\":1}",
        "{\"path\":\"a.rs\",\"offset\":1}",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => good,
        2 => bad_common().prop_map(Line::Bad),
        1 => bad_write.prop_map(Line::Bad),
        1 => blank(),
    ]
}

/// Stdin made of `lines`, LF or CRLF, with or without a final newline.
fn stdin(lines: &[Line], crlf: bool, final_newline: bool) -> String {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.iter().map(Line::render).collect::<Vec<_>>().join(nl);
    if final_newline && !lines.is_empty() {
        s.push_str(nl);
    }
    s
}

/// The numbers of the bad lines, 1-based, counting blank lines.
fn bad_numbers(lines: &[Line]) -> Vec<usize> {
    (1..=lines.len())
        .filter(|&n| matches!(lines[n - 1], Line::Bad(_)))
        .collect()
}

/// The line numbers named on stderr as `TOOL: stdin line N: ...`, and
/// stderr's other lines.
fn named(run: &Run, tool: &str) -> (Vec<usize>, Vec<String>) {
    let prefix = format!("{tool}: stdin line ");
    let mut numbers = Vec::new();
    let mut other = Vec::new();
    for l in run.stderr.lines() {
        let n = l
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once(':'))
            .and_then(|(n, _)| n.parse().ok());
        match n {
            Some(n) => numbers.push(n),
            None => other.push(l.to_string()),
        }
    }
    (numbers, other)
}

fn field(fields: &[(&'static str, String)], name: &str) -> Option<u64> {
    fields
        .iter()
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| v.parse().ok())
}

/// fsview-read --requests --json: one error object per bad line, first;
/// then one object per good request, in order: a read of the path from the
/// asked offset, or an error naming a missing path. Exit 2 exactly when a
/// line was bad or a file missing.
#[test]
fn read_requests_name_every_bad_line_and_do_every_good_one() {
    let env = env();
    let strategy = (
        prop::collection::vec(read_line(), 0..8),
        any::<bool>(),
        any::<bool>(),
    );
    let result = runner("proptest-regressions/read-requests.txt").run(
        &strategy,
        |(lines, crlf, final_newline)| {
            let input = stdin(&lines, crlf, final_newline);
            let run = env.run_stdin(
                "fsview-read",
                &["--requests", "--json", "-q"],
                input.as_bytes(),
            );
            let bad = bad_numbers(&lines);
            let good: Vec<_> = lines
                .iter()
                .filter_map(|l| match l {
                    Line::Good { path, fields, .. } => Some((*path, fields)),
                    _ => None,
                })
                .collect();
            let missing = good.iter().any(|(p, _)| *p == MISSING);
            let code = if bad.is_empty() && !missing { 0 } else { 2 };
            prop_assert_eq!(run.code, code, "input {:?}: {}", input, run.stderr);
            let (numbers, other) = named(&run, "fsview-read");
            prop_assert_eq!(&numbers, &bad, "input {:?}: {}", input, run.stderr);
            let missing_named = other.iter().filter(|l| l.contains("missing.rs")).count();
            let missing_asked = good.iter().filter(|(p, _)| *p == MISSING).count();
            prop_assert_eq!(missing_named, missing_asked, "{}", run.stderr);
            prop_assert_eq!(other.len(), missing_asked, "{}", run.stderr);

            let out = run.json();
            prop_assert_eq!(
                out.len(),
                bad.len() + good.len(),
                "input {:?}: {}",
                input,
                run.stdout
            );
            for o in &out[..bad.len()] {
                prop_assert_eq!(&o["type"], "error");
            }
            for (o, (path, fields)) in out[bad.len()..].iter().zip(&good) {
                prop_assert_eq!(&o["path"], PATHS[*path], "{}", o);
                if *path == MISSING {
                    prop_assert_eq!(&o["type"], "error");
                    continue;
                }
                prop_assert_eq!(&o["type"], "read", "{}", o);
                let offset = field(fields, "offset").unwrap_or(1);
                prop_assert_eq!(&o["offset"], offset, "{}", o);
                if let Some(limit) = field(fields, "limit") {
                    prop_assert!(o["lines"].as_u64().unwrap() <= limit, "{}", o);
                }
            }
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// fsview-check-edit --requests: one `PATH: verdict` line per good request,
/// in order, the same line as asking about that path on the command line;
/// every bad line named once on stderr and nothing else there; exit 2
/// exactly when a line was bad, else the worst verdict's code.
#[test]
fn check_requests_name_every_bad_line_and_answer_every_good_one() {
    let env = env();
    env.run("fsview-read", &["-q", "a.rs"])
        .expect(0, "1\tfn a() {}\n2\tfn b() {}\n3\tfn c() {}\n");
    env.run("fsview-read", &["-q", "-o", "2", "-n", "1", "sub/b.txt"])
        .expect(0, "2\ttwo\n");
    // The answer for each (path, write), asked on the command line.
    let answer = |path: usize, write: bool| -> (i32, String) {
        let mut args = vec![PATHS[path]];
        if write {
            args.insert(0, "--write");
        }
        let r = env.run("fsview-check-edit", &args);
        assert!(r.code < 2, "{r:?}");
        (r.code, r.stdout)
    };
    let answers: Vec<[(i32, String); 2]> = (0..PATHS.len())
        .map(|p| [answer(p, false), answer(p, true)])
        .collect();
    assert_ne!(
        answers[0][1], answers[1][1],
        "the setup gives different verdicts"
    );

    let strategy = (
        prop::collection::vec(check_line(), 0..8),
        any::<bool>(),
        any::<bool>(),
    );
    let result = runner("proptest-regressions/check-requests.txt").run(
        &strategy,
        |(lines, crlf, final_newline)| {
            let input = stdin(&lines, crlf, final_newline);
            let run = env.run_stdin("fsview-check-edit", &["--requests"], input.as_bytes());
            let bad = bad_numbers(&lines);
            let mut stdout = String::new();
            let mut code = 0;
            for l in &lines {
                if let Line::Good { path, fields, .. } = l {
                    let write = fields.iter().any(|(k, v)| *k == "write" && v == "true");
                    let (c, line) = &answers[*path][usize::from(write)];
                    stdout.push_str(line);
                    code = code.max(*c);
                }
            }
            if !bad.is_empty() {
                code = 2;
            }
            prop_assert_eq!(run.code, code, "input {:?}: {}", input, run.stderr);
            prop_assert_eq!(&run.stdout, &stdout, "input {:?}", input);
            let (numbers, other) = named(&run, "fsview-check-edit");
            prop_assert_eq!(&numbers, &bad, "input {:?}: {}", input, run.stderr);
            prop_assert!(other.is_empty(), "{}", run.stderr);
            Ok::<(), TestCaseError>(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
