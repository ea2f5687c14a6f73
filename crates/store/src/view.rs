//! The words of a view: its kind, its source, and why the conversation no
//! longer holds it.
//!
//! These strings are part of the contract (`--json` output, the session
//! file), so they are spelled in one place.

/// What the agent was shown of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Every byte of the file, unprocessed.
    Full,
    /// An explicit offset/limit slice.
    Range,
    /// The whole file was asked for, but only its start was shown.
    Start,
    /// Not the disk text: stripped or truncated by an injector.
    Processed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Full => "full",
            Kind::Range => "range",
            Kind::Start => "start",
            Kind::Processed => "processed",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "full" => Kind::Full,
            "range" => Kind::Range,
            "start" => Kind::Start,
            "processed" => Kind::Processed,
            _ => return None,
        })
    }
}

/// Who showed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// fsview-read, as the agent's Read tool.
    Read,
    /// The agent's own write, recorded after it.
    Write,
    /// Context injected by ctx-build or a pipeline.
    Inject,
    /// A file pulled in by an `@import` of an injected file.
    Import,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Read => "read",
            Source::Write => "write",
            Source::Inject => "inject",
            Source::Import => "import",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "read" => Source::Read,
            "write" => Source::Write,
            "inject" => Source::Inject,
            "import" => Source::Import,
            _ => return None,
        })
    }
}

/// Why the conversation no longer holds a view: it was shown, and then
/// dropped from what the model has. The view stays for history and change
/// reports, but lets no change through and is never "unchanged".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// The conversation was compacted into a summary, and the message that
    /// showed it was not kept.
    Compaction,
    /// The conversation was rewound to an earlier message: the one that
    /// showed it is no longer on the live branch.
    Rewind,
}

impl Released {
    pub fn as_str(self) -> &'static str {
        match self {
            Released::Compaction => "compaction",
            Released::Rewind => "rewind",
        }
    }

    pub fn parse(s: &str) -> Option<Released> {
        Some(match s {
            "compaction" => Released::Compaction,
            "rewind" => Released::Rewind,
            _ => return None,
        })
    }
}
