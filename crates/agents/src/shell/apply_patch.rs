//! The patch Codex takes from a command line ([`apply_patch`]).

use std::path::PathBuf;

use brush_parser::ast;

use super::parse::{literal, plain_words, program};

/// The patch a command line sends to `apply_patch` (or `applypatch`) as a
/// here-document, in the forms Codex takes from a command line and applies
/// itself instead of running it: the whole line is `apply_patch <<DELIM`
/// and the patch, after an optional `cd DIR &&` (the directory quoted or
/// not, with or without spaces around `&&`). Returns the directory and the
/// patch text. A here-document inside another command's here-document is
/// that command's input, not a patch.
pub fn apply_patch(command: &str) -> Option<(Option<PathBuf>, String)> {
    let p = program(command)?;
    let [list] = p.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, ast::SeparatorOperator::Sequence)] = list.0.as_slice()
    else {
        return None;
    };
    let (dir, patch) = match and_or.additional.as_slice() {
        [] => (None, &and_or.first),
        [ast::AndOr::And(next)] => {
            let words = plain_words(&and_or.first)?;
            match words.as_slice() {
                [cd, d] if cd == "cd" => (Some(PathBuf::from(d)), next),
                _ => return None,
            }
        }
        _ => return None,
    };
    let [ast::Command::Simple(s)] = patch.seq.as_slice() else {
        return None;
    };
    if s.prefix.is_some() || patch.bang {
        return None;
    }
    let name = literal(&s.word_or_name.as_ref()?.value)?;
    if !matches!(name.as_str(), "apply_patch" | "applypatch") {
        return None;
    }
    let [ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(
        None | Some(0),
        doc,
    ))] = s.suffix.as_ref()?.0.as_slice()
    else {
        return None;
    };
    Some((dir, doc.doc.value.clone()))
}
