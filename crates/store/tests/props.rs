//! Property tests (the fuzzing of issue 5, on the stable toolchain): how
//! `show` reads and numbers a file, against a reference model built from
//! `split` on `\n`, for generated contents and requests.
//!
//! `PROPTEST_CASES` raises the case count for a long run (`scripts/fuzz`);
//! failures found are kept as seeds in `proptest-regressions/` and replayed
//! first on every run.

use std::path::Path;

use fsview_store::show::{count_lines, number_lines, read, ReadError, Request, Shown};
use fsview_store::Kind;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

/// `default` cases (the `proptest!` macro lets `PROPTEST_CASES` override
/// it), seeds kept per property.
fn config(default: u32, seeds: &'static str) -> ProptestConfig {
    ProptestConfig {
        cases: default,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(seeds))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// The reference model

/// The lines of `content`, each with its `\n` (the last may have none).
fn ref_lines(content: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    for (i, _) in content.iter().enumerate().filter(|(_, &b)| b == b'\n') {
        lines.push(&content[start..=i]);
        start = i + 1;
    }
    if start < content.len() {
        lines.push(&content[start..]);
    }
    lines
}

/// `bytes` cut to at most `cap` bytes, and back to the start of a character
/// the cut left incomplete: a lead byte in the last three bytes followed
/// only by continuation bytes, fewer than it announces. (The generated
/// contents hold no overlong or surrogate prefixes, which `from_utf8` would
/// call invalid rather than incomplete.)
fn ref_cut(bytes: &[u8], cap: usize) -> &[u8] {
    let end = cap.min(bytes.len());
    for start in end.saturating_sub(3)..end {
        let len = match bytes[start] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => continue,
        };
        let continued = bytes[start + 1..end]
            .iter()
            .all(|b| (0x80..0xC0).contains(b));
        if continued && start + len > end {
            return &bytes[..start];
        }
    }
    &bytes[..end]
}

/// What a read should show: (kind, first line, lines, bytes, capped,
/// cut_line).
#[derive(Debug, PartialEq)]
struct Expected<'a> {
    kind: Kind,
    offset: u64,
    lines: u64,
    bytes: &'a [u8],
    capped: bool,
    cut_line: bool,
}

fn expected<'a>(content: &'a [u8], req: &Request) -> Expected<'a> {
    let lines = ref_lines(content);
    let cap = req.cap.max(1) as usize;
    let range = req.is_range();
    let offset = req.offset.unwrap_or(1).max(1);
    let limit = req.limit.unwrap_or(u64::MAX);
    // Lines offset..offset+limit-1, 1-based.
    let first = (offset - 1).min(lines.len() as u64) as usize;
    let last = (offset - 1).saturating_add(limit).min(lines.len() as u64) as usize;
    let selected = &lines[first..last];
    let start: usize = lines[..first].iter().map(|l| l.len()).sum();
    let len: usize = selected.iter().map(|l| l.len()).sum();
    let asked = &content[start..start + len];
    let (shown, capped, cut_line) = if asked.len() <= cap {
        (asked, false, false)
    } else {
        // Whole lines within the cap, or the first line cut.
        let mut end = 0;
        for l in selected {
            if end + l.len() > cap {
                break;
            }
            end += l.len();
        }
        if end > 0 {
            (&asked[..end], true, false)
        } else {
            (ref_cut(asked, cap), true, true)
        }
    };
    // An empty file is all shown by any read of it.
    let offset = if content.is_empty() { 1 } else { offset };
    let every_byte = offset == 1 && shown == content;
    let kind = match (every_byte, range) {
        (true, _) => Kind::Full,
        (false, true) => Kind::Range,
        (false, false) => Kind::Start,
    };
    Expected {
        kind,
        offset,
        lines: ref_lines(shown).len() as u64,
        bytes: shown,
        capped,
        cut_line,
    }
}

/// `N<TAB>line` per line of `bytes`, invalid UTF-8 as U+FFFD, a `\r`
/// ending a line dropped (before `\n`, and at the end: a line cut between
/// `\r` and `\n` shows no stray `\r`).
fn ref_numbered(bytes: &[u8], first: u64) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    for (i, line) in lines.into_iter().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(&format!("{}\t{line}\n", first + i as u64));
    }
    out
}

// ---------------------------------------------------------------------------
// Generators

/// File contents: short lines, empty lines, `\r\n`, long lines, multi-byte
/// and invalid UTF-8, with or without a final newline; rarely a NUL.
fn content() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        6 => "[a-z ]{0,8}".prop_map(String::into_bytes),
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => prop::sample::select(vec!["é", "日本", "🦀", "\u{a0}"]).prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec![
            vec![0xff], vec![0xc3], vec![0xe6, 0x97], vec![0xf0, 0x9f, 0xa6], vec![0x80],
        ]),
        1 => (1..300usize).prop_map(|n| vec![b'x'; n]),
        1 => (1..40usize).prop_map(|n| "é".repeat(n).into_bytes()),
    ];
    (
        prop::collection::vec(piece, 0..30),
        prop::bool::weighted(0.02),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(pieces, nul, at)| {
            let mut c = pieces.concat();
            if nul {
                let i = at.index(c.len() + 1);
                c.insert(i, 0);
            }
            c
        })
}

fn request() -> impl Strategy<Value = Request> {
    let offset = prop_oneof![
        2 => Just(None),
        1 => Just(Some(0)),
        4 => (1..12u64).prop_map(Some),
        1 => Just(Some(u64::MAX)),
    ];
    let limit = prop_oneof![
        2 => Just(None),
        1 => Just(Some(0)),
        4 => (1..12u64).prop_map(Some),
        1 => Just(Some(u64::MAX)),
    ];
    let cap = prop_oneof![
        1 => Just(0u64),
        4 => 1..64u64,
        2 => 64..2000u64,
        1 => Just(u64::MAX),
    ];
    (offset, limit, cap).prop_map(|(offset, limit, cap)| Request { offset, limit, cap })
}

fn write(dir: &Path, content: &[u8]) -> std::path::PathBuf {
    let p = dir.join("f");
    std::fs::write(&p, content).unwrap();
    p
}

fn check(content: &[u8], req: &Request, shown: &Shown) -> Result<(), TestCaseError> {
    let want = expected(content, req);
    let got = Expected {
        kind: shown.kind,
        offset: shown.offset,
        lines: shown.lines,
        bytes: &shown.bytes,
        capped: shown.capped,
        cut_line: shown.cut_line,
    };
    prop_assert_eq!(
        &got,
        &want,
        "content {:?}, {:?}",
        String::from_utf8_lossy(content),
        req
    );
    prop_assert_eq!(shown.total_lines, Some(ref_lines(content).len() as u64));
    prop_assert_eq!(count_lines(content), ref_lines(content).len() as u64);
    // The bytes shown are where the model says, in the file.
    let start: usize = ref_lines(content)
        .iter()
        .take((shown.offset - 1).min(u64::MAX - 1) as usize)
        .map(|l| l.len())
        .sum();
    prop_assert!(content[start.min(content.len())..].starts_with(&shown.bytes));
    prop_assert_eq!(shown.numbered(), ref_numbered(&shown.bytes, shown.offset));
    if shown.kind == Kind::Full {
        prop_assert_eq!(
            shown.fingerprint.hash,
            Some(fsview_store::fingerprint::hash_bytes(content))
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/show.txt"))]

    /// Any file and any request: `read` shows exactly the lines the model
    /// selects, cut by the cap as documented, numbered from the offset, with
    /// the file's line count, `full` exactly when every byte was shown from
    /// line 1; a NUL in the first 8 KiB is refused as binary.
    #[test]
    fn read_agrees_with_the_line_model(content in content(), req in request()) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), &content);
        let result = read(&path, &req);
        if content.iter().take(8 * 1024).any(|&b| b == 0) {
            prop_assert!(matches!(result, Err(ReadError::Binary)), "{:?}", result.map(|s| s.kind));
            return Ok(());
        }
        check(&content, &req, &result.unwrap())?;
    }
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/number-lines.txt"))]

    /// Numbering any bytes from any first line agrees with the model, and
    /// gives one output line per counted line.
    #[test]
    fn numbering_agrees_with_the_model(content in content(), first in 1..u64::MAX / 2) {
        let numbered = number_lines(&content, first);
        prop_assert_eq!(&numbered, &ref_numbered(&content, first));
        prop_assert_eq!(numbered.matches('\n').count() as u64, count_lines(&content));
    }
}

/// A file larger than one read chunk (256 KiB): lines that straddle
/// chunks are counted, selected and cut as in a small file. A case costs
/// tens of milliseconds: 8 cases, or `PROPTEST_CASES / 50` (the runner is
/// built by hand because the `proptest!` macro would take `PROPTEST_CASES`
/// as it is).
#[test]
fn big_files_agree_with_the_line_model() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .map_or(8, |n| (n / 50).max(1));
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        ..config(0, "proptest-regressions/show-big.txt")
    });
    let strategy = (content(), 1..3000usize, request(), 0..40_000u64);
    let result = runner.run(&strategy, |(unit, repeat, req, skip)| {
        prop_assume!(!unit.contains(&0) && !unit.is_empty());
        let times = (300 * 1024 + repeat * 100) / unit.len() + 1;
        let content = unit.repeat(times);
        let req = Request {
            offset: req.offset.map(|o| o.saturating_add(skip)),
            ..req
        };
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), &content);
        check(&content, &req, &read(&path, &req).unwrap())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
