//! Property tests (the fuzzing of issue 5, on the stable toolchain): the
//! import scanner and the front matter parser get generated input, checked
//! against what the modules promise and against small reference models.
//!
//! `PROPTEST_CASES` raises the case count for a long run (`scripts/fuzz`);
//! failures found are kept as seeds in `proptest-regressions/` and replayed
//! first on every run.

use std::path::Path;

use fsview_context::comments::strip_block_comments;
use fsview_context::frontmatter::{expand_braces, parse, split_paths};
use fsview_context::imports::{find_imports, import_paths};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// The config of every property here: `default` cases (the `proptest!`
/// macro lets `PROPTEST_CASES` override it), seeds kept per property.
fn config(default: u32, seeds: &'static str) -> ProptestConfig {
    ProptestConfig {
        cases: default,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(seeds))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Generators

/// Markdown-ish text: the characters and sequences that mean something to a
/// CommonMark parser or to the scanner, mixed with arbitrary characters.
fn markdownish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => prop::sample::select(vec![
            "@", "@", "`", "``", "```", "~~~", "    ", "\t", "\\ ", "\\", "#", "# ",
            "\n", "\n", "\n\n", "\r\n", "\r", " ", "a.md", "./b.md", "../c", "~/d",
            "/e", "x", "é", "日本", "\u{a0}", "\u{2003}", "\u{85}", "\u{200b}",
            "<!--", "-->", "<div>", "</div>", "<pre>", "> ", "- ", "1. ", "*", "_",
            "[", "]", "(", ")", "]: ", "&amp;", "---", "===", "|", "<", ">",
        ])
        .prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(token, 0..60).prop_map(|v| v.concat())
}

/// Text for a paragraph line: no markup that could open a code span, HTML,
/// a link reference definition, a fence or an escape, so whatever a line
/// next to it holds stays what it was generated as.
fn filler() -> impl Strategy<Value = String> {
    "[a-z0-9 .,@#/é日\u{a0}-]{0,16}".prop_map(|s| {
        // A line opening with `#` followed by text is a heading: still text.
        s.trim_start().to_string()
    })
}

/// One block of a generated document, with what the scanner must find in
/// it (`plain`) and must not (`hidden`).
#[derive(Debug, Clone)]
enum Block {
    /// Lines of a paragraph; `true` marks a line that starts with a plain
    /// import.
    Paragraph(Vec<Line>),
    Heading(Line),
    Quote(Vec<Line>),
    Fenced {
        fence: String,
        info: String,
        body: Vec<CodeLine>,
        closed: bool,
    },
    Indented(Vec<CodeLine>),
    Comment(Vec<CodeLine>),
}

#[derive(Debug, Clone)]
enum Line {
    Filler(String),
    /// `@plain.md` at the start of the line, then a tail.
    StartImport {
        tail: Tail,
        escaped: bool,
    },
    /// filler, space, `@plain.md`, tail.
    MidImport {
        before: String,
        tail: Tail,
    },
    /// filler, a code span around a hidden import, filler.
    Span {
        before: String,
        ticks: usize,
        after: String,
    },
}

#[derive(Debug, Clone)]
enum Tail {
    End,
    Words(String),
    Fragment(String),
}

#[derive(Debug, Clone)]
enum CodeLine {
    Hidden { indent: usize },
    Junk(String),
}

fn tail() -> impl Strategy<Value = Tail> {
    prop_oneof![
        Just(Tail::End),
        filler().prop_map(Tail::Words),
        "[a-z0-9-]{0,6}".prop_map(Tail::Fragment),
    ]
}

fn line() -> BoxedStrategy<Line> {
    prop_oneof![
        2 => filler().prop_map(Line::Filler),
        2 => (tail(), any::<bool>()).prop_map(|(tail, escaped)| Line::StartImport { tail, escaped }),
        1 => (filler(), tail()).prop_map(|(before, tail)| Line::MidImport { before, tail }),
        1 => (filler(), 1..4usize, filler()).prop_map(|(before, ticks, after)| Line::Span {
            before,
            ticks,
            after
        }),
    ]
    .boxed()
}

fn code_line() -> BoxedStrategy<CodeLine> {
    prop_oneof![
        (0..6usize).prop_map(|indent| CodeLine::Hidden { indent }),
        // Anything at all inside code, markup included.
        "[ -~é\u{a0}]{0,20}".prop_map(CodeLine::Junk),
    ]
    .boxed()
}

fn block() -> impl Strategy<Value = Block> {
    let lines = prop::collection::vec(line(), 1..5);
    let code = prop::collection::vec(code_line(), 0..5);
    prop_oneof![
        3 => lines.clone().prop_map(Block::Paragraph),
        1 => line().prop_map(Block::Heading),
        1 => lines.prop_map(Block::Quote),
        2 => (
            prop::sample::select(vec!["```", "````", "~~~", "~~~~~"]),
            "[a-z]{0,4}",
            code.clone(),
            prop::bool::weighted(0.9),
        )
            .prop_map(|(fence, info, body, closed)| Block::Fenced {
                fence: fence.to_string(),
                info,
                body,
                closed,
            }),
        1 => code.clone().prop_map(Block::Indented),
        1 => code.prop_map(Block::Comment),
    ]
}

/// Renders blocks as a document; returns the text, the import paths that
/// must be found, and those that must not.
fn render(blocks: &[Block]) -> (String, Vec<String>, Vec<String>) {
    let mut text = String::new();
    let mut plain = Vec::new();
    let mut hidden = Vec::new();
    let plain_name = |plain: &mut Vec<String>, escaped: bool| {
        let n = plain.len();
        let (written, path) = if escaped {
            (format!("plain\\ {n}.md"), format!("plain {n}.md"))
        } else {
            (format!("plain{n}.md"), format!("plain{n}.md"))
        };
        plain.push(path);
        written
    };
    let hidden_name = |hidden: &mut Vec<String>| {
        let n = hidden.len();
        hidden.push(format!("hidden{n}.md"));
        format!("@hidden{n}.md")
    };
    let render_tail = |t: &Tail| match t {
        Tail::End => String::new(),
        Tail::Words(w) => format!(" {w}"),
        Tail::Fragment(f) => format!("#{f} after"),
    };
    let render_line = |l: &Line, plain: &mut Vec<String>, hidden: &mut Vec<String>| match l {
        Line::Filler(f) => f.clone(),
        Line::StartImport { tail, escaped } => {
            format!("@{}{}", plain_name(plain, *escaped), render_tail(tail))
        }
        Line::MidImport { before, tail } => {
            format!(
                "{before} @{}{}",
                plain_name(plain, false),
                render_tail(tail)
            )
        }
        Line::Span {
            before,
            ticks,
            after,
        } => {
            let t = "`".repeat(*ticks);
            format!("{before} {t}{}{t} {after}", hidden_name(hidden))
        }
    };
    let render_code = |l: &CodeLine, hidden: &mut Vec<String>, fence: &str| match l {
        CodeLine::Hidden { indent } => format!("{}{}", " ".repeat(*indent), hidden_name(hidden)),
        CodeLine::Junk(j) => {
            // A junk line must not close the fence it is in.
            let c = fence.chars().next().unwrap_or('`');
            if j.trim_start().starts_with(&c.to_string().repeat(3)) {
                format!("x{j}")
            } else {
                j.clone()
            }
        }
    };
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Paragraph(lines) => {
                for l in lines {
                    text.push_str(&render_line(l, &mut plain, &mut hidden));
                    text.push('\n');
                }
            }
            Block::Heading(l) => {
                text.push_str("## ");
                text.push_str(&render_line(l, &mut plain, &mut hidden));
                text.push('\n');
            }
            Block::Quote(lines) => {
                for l in lines {
                    text.push_str("> ");
                    text.push_str(&render_line(l, &mut plain, &mut hidden));
                    text.push('\n');
                }
            }
            Block::Fenced {
                fence,
                info,
                body,
                closed,
            } => {
                text.push_str(&format!("{fence}{info}\n"));
                for l in body {
                    text.push_str(&render_code(l, &mut hidden, fence));
                    text.push('\n');
                }
                // An unclosed fence runs to the end: only the last may be.
                if *closed || i + 1 < blocks.len() {
                    text.push_str(fence);
                    text.push('\n');
                }
            }
            Block::Indented(lines) => {
                // A heading ends any list before, so the indent is code.
                text.push_str("# code\n");
                for l in lines {
                    text.push_str("    ");
                    text.push_str(&render_code(l, &mut hidden, "x"));
                    text.push('\n');
                }
            }
            Block::Comment(lines) => {
                text.push_str("<!--\n");
                for l in lines {
                    let l = render_code(l, &mut hidden, "x").replace("-->", "- ->");
                    text.push_str(&l);
                    text.push('\n');
                }
                text.push_str("-->\n");
            }
        }
        text.push('\n');
    }
    (text, plain, hidden)
}

// ---------------------------------------------------------------------------
// A reference scanner for text without markup

/// The imports of text that is nothing but paragraphs of words, by the
/// module's rules: `@` at a line start or after white space, the path runs
/// to white space or a backslash not before a space, `\ ` is a space, a
/// `#fragment` is dropped, and the forms are checked.
fn reference_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split(['\n', '\r']) {
        // A paragraph line's surrounding spaces and tabs are not its text.
        let line: Vec<char> = line.trim_matches([' ', '\t']).chars().collect();
        let mut i = 0;
        while i < line.len() {
            if line[i] == '@' && (i == 0 || line[i - 1].is_whitespace()) {
                let mut path = String::new();
                let mut j = i + 1;
                while j < line.len() && !line[j].is_whitespace() {
                    if line[j] == '\\' {
                        if line.get(j + 1) == Some(&' ') {
                            path.push(' ');
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    path.push(line[j]);
                    j += 1;
                }
                let path = path.split('#').next().unwrap_or("").to_string();
                let ok = match path.chars().next() {
                    None => false,
                    Some(c) => {
                        path.starts_with("./")
                            || path.starts_with("~/")
                            || (path.starts_with('/') && path != "/")
                            || c.is_ascii_alphanumeric()
                            || matches!(c, '.' | '_' | '-')
                    }
                };
                if ok {
                    out.push(path);
                }
                i = j.max(i + 1);
                continue;
            }
            i += 1;
        }
    }
    out
}

/// Words and separators that make plain paragraphs only: no emphasis, no
/// code, no HTML, no escapes but `\ `.
fn plain_text() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "@", "@", "@", "a", "b.md", "./", "../", "~/", "/", ".", "-", "#", "#x", "0", "é", "日",
        " ", " ", "  ", "\t", "\n", "\n", "\r\n", "\\ ", "\u{a0}", "\u{2003}", "\u{85}",
        "\u{200b}", "x@y",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
}

/// The text with `a` put before every line CommonMark would not take as
/// paragraph text: one starting with white space (indented code), a
/// heading, a fence or a bullet.
fn only_paragraphs(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut at_line_start = true;
    for (i, c) in text.char_indices() {
        if at_line_start {
            let rest = &text[i..];
            if rest.starts_with([' ', '\t', '#', '-']) || rest.starts_with("~~~") {
                out.push('a');
            }
        }
        out.push(c);
        at_line_start = c == '\n' || c == '\r';
    }
    out
}

// ---------------------------------------------------------------------------
// Import scanner

proptest! {
    #![proptest_config(config(512, "proptest-regressions/imports-no-panic.txt"))]

    /// No input makes the scanner, the comment stripper or the front matter
    /// parser panic, and what the scanner returns obeys its own rules.
    #[test]
    fn scanning_any_text_never_panics(text in markdownish()) {
        let found = find_imports(&text, Path::new("/base"), Some(Path::new("/home/u")));
        for i in &found {
            prop_assert!(!i.written.is_empty());
            prop_assert!(!i.written.contains('#'), "fragment kept: {:?}", i.written);
            prop_assert!(i.target.is_some());
        }
        for p in import_paths(&text) {
            prop_assert!(!p.contains('#'), "fragment kept: {p:?}");
            prop_assert!(!p.starts_with(char::is_whitespace), "{p:?}");
        }
        let (stripped, any) = strip_block_comments(&text);
        if !any {
            prop_assert_eq!(&stripped, &text);
        }
        let fm = parse(&text);
        prop_assert!(text.is_char_boundary(fm.body_start));
    }
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/imports-code.txt"))]

    /// In a document of paragraphs, headings, quotes, fenced and indented
    /// code, code spans and comments: every import written at the start of
    /// a line or after a space in text is found, none written in code or a
    /// comment is, and a fragment never comes back.
    #[test]
    fn imports_in_text_are_found_and_in_code_never(
        blocks in prop::collection::vec(block(), 0..8),
        crlf in any::<bool>(),
    ) {
        let (mut text, plain, hidden) = render(&blocks);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let found = import_paths(&text);
        for p in &plain {
            prop_assert!(found.contains(p), "{p:?} not found in {text:?}: {found:?}");
        }
        for h in &hidden {
            prop_assert!(!found.contains(h), "{h:?} found in code in {text:?}");
        }
        for p in &found {
            prop_assert!(!p.contains('#'), "{p:?}");
        }
    }
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/imports-reference.txt"))]

    /// On text that is only paragraphs of words, the scanner agrees exactly
    /// with a line-by-line reference scanner: the markdown parser's events,
    /// and their merging into runs, lose and invent nothing.
    #[test]
    fn plain_paragraphs_agree_with_the_reference(text in plain_text().prop_map(|t| only_paragraphs(&t))) {
        prop_assert_eq!(import_paths(&text), reference_imports(&text), "text: {:?}", text);
    }
}

// ---------------------------------------------------------------------------
// Front matter and `paths:`

/// Text around front matter: delimiters, YAML punctuation, line endings.
fn frontmatterish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => prop::sample::select(vec![
            "---", "---\n", "--- \n", "---\r\n", "\n", "\r\n", "paths:", "paths: ", " - ",
            "- ", "  ", "{", "}", ",", "*", "**", "/**", "\"", "'", ":", ": ", "[", "]", "#",
            "&", "!", "|", ">", "%", "@", "`", "\\", "\t", "a", "src/*.ts", "é", "{a,b}",
            "{,}", "{{", "}}", "~", "null", "true", "1", "- - ",
        ])
        .prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(token, 0..50).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/frontmatter-no-panic.txt"))]

    /// Front matter parsing never panics, and its result is coherent: the
    /// body starts on a character boundary after a `---` opening, an error
    /// keeps the whole text and gives no `paths:`, and patterns are never
    /// empty, never end in `/**`, and are never only `**`.
    #[test]
    fn front_matter_of_any_text_never_panics(text in frontmatterish(), crlf in any::<bool>()) {
        let text = if crlf { text.replace('\n', "\r\n") } else { text };
        let fm = parse(&text);
        prop_assert!(fm.body_start <= text.len());
        prop_assert!(text.is_char_boundary(fm.body_start));
        if fm.body_start > 0 {
            prop_assert!(text.starts_with("---"));
        }
        if fm.error.is_some() {
            prop_assert_eq!(fm.body_start, 0);
            prop_assert_eq!(&fm.paths, &None);
        }
        if let Some(paths) = &fm.paths {
            prop_assert!(!paths.is_empty());
            prop_assert!(!paths.iter().all(|p| p == "**"));
            for p in paths {
                prop_assert!(!p.is_empty() && !p.ends_with("/**"), "{p:?}");
            }
        }
        for s in [text.as_str(), "", "{", "}", ",{"] {
            let _ = split_paths(&[s.to_string()]);
            let _ = expand_braces(s);
        }
    }
}

/// A brace pattern without nesting, as segments: a literal, or a group of
/// alternatives (two or more: one alone is a literal `{x}`).
#[derive(Debug, Clone)]
enum Segment {
    Literal(String),
    Single(String),
    Group(Vec<String>),
}

fn segment() -> impl Strategy<Value = Segment> {
    let word = "[a-z0-9./*_-]{0,3}";
    prop_oneof![
        2 => word.prop_map(Segment::Literal),
        1 => word.prop_map(Segment::Single),
        2 => prop::collection::vec(word, 2..8).prop_map(Segment::Group),
    ]
}

fn pattern_of(segments: &[Segment]) -> String {
    segments
        .iter()
        .map(|s| match s {
            Segment::Literal(l) => l.clone(),
            Segment::Single(l) => format!("{{{l}}}"),
            Segment::Group(alts) => format!("{{{}}}", alts.join(",")),
        })
        .collect()
}

/// Every combination, first group slowest; more than the limit of 1000
/// leaves the pattern as written.
fn reference_expansion(segments: &[Segment]) -> Vec<String> {
    let mut out = vec![String::new()];
    for s in segments {
        let alts = match s {
            Segment::Literal(l) => vec![l.clone()],
            Segment::Single(l) => vec![format!("{{{l}}}")],
            Segment::Group(alts) => alts.clone(),
        };
        out = out
            .iter()
            .flat_map(|prefix| alts.iter().map(move |a| format!("{prefix}{a}")))
            .collect();
    }
    if out.len() > 1000 {
        vec![pattern_of(segments)]
    } else {
        out
    }
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/frontmatter-braces.txt"))]

    /// Brace expansion of a pattern without nesting gives every
    /// combination, in order.
    #[test]
    fn braces_expand_as_the_reference(segments in prop::collection::vec(segment(), 0..6)) {
        let pattern = pattern_of(&segments);
        prop_assert_eq!(expand_braces(&pattern), reference_expansion(&segments), "pattern: {}", pattern);
    }
}

/// A glob as `paths:` takes it: no white space, comma, quote or `#`.
fn glob() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => "[a-z0-9./*_-]{1,6}",
            1 => prop::collection::vec("[a-z0-9.*]{0,3}", 2..4).prop_map(|a| format!("{{{}}}", a.join(","))),
        ],
        1..3,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/frontmatter-paths.txt"))]

    /// `paths:` as a comma-separated string (quoted or not) and as a YAML
    /// list of the same globs give the same patterns, with LF or CRLF line
    /// endings, as `split_paths` gives; and the body starts right after the
    /// closing delimiter.
    #[test]
    fn comma_string_and_list_give_the_same_patterns(
        globs in prop::collection::vec(glob(), 1..5),
        body in "[a-z#\n -]{0,20}",
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let joined = globs.join(", ");
        let list: String = globs.iter().map(|g| format!("  - \"{g}\"{nl}")).collect();
        let mut docs = vec![
            format!("---{nl}paths: \"{joined}\"{nl}---{nl}{body}"),
            format!("---{nl}description: x{nl}paths:{nl}{list}---{nl}{body}"),
        ];
        // Unquoted, a lone `-` is a YAML sequence entry, not a glob.
        if joined != "-" {
            docs.push(format!("---{nl}paths: {joined}{nl}---{nl}{body}"));
        }
        let expected = split_paths(std::slice::from_ref(&joined));
        prop_assert_eq!(&split_paths(&globs), &expected);
        let expected = (!expected.iter().all(|p| p == "**")).then_some(expected);
        for doc in &docs {
            let fm = parse(doc);
            prop_assert_eq!(&fm.error, &None, "doc: {:?}", doc);
            prop_assert_eq!(&fm.paths, &expected, "doc: {:?}", doc);
            prop_assert_eq!(&doc[fm.body_start..], body.as_str(), "doc: {:?}", doc);
        }
    }
}
