//! Usage errors: what is wrong with a command line, in one line.
//!
//! clap reports a bad command line in four to seven lines (the error, a tip,
//! a usage line, "for more information"), and some of its tips are wrong for
//! fsview (`--limit -1`: "to pass '-1' as a value, use '-- -1'") or say
//! nothing useful (`--offset 0`: "0 is not in 1..18446744073709551615").
//! Every fsview binary parses its arguments through [`crate::common::parse`],
//! which turns clap's error into the one line [`message`] phrases here:
//! `TOOL: what is wrong; what to do`, then exit 2.
//!
//! A value that came from the environment (`FSVIEW_SESSION=` set but empty,
//! `FSVIEW_READ_CAP=lots`) is named by its variable, not by a flag the user
//! never typed. The value parsers below phrase their own refusals so that
//! they read after the argument's name: "--offset counts from 1 (the first
//! line), not 0".

use std::ffi::OsString;
use std::fmt;

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Why an fsview value parser refused a value, phrased to follow the
/// argument's name: `--offset` + " counts from 1 (the first line), not 0".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// A line number: 1 is the first line.
pub fn line_number(s: &str) -> Result<u64, Refused> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 && n <= u64::MAX as i128 => Ok(n as u64),
        Ok(n) if n < 1 => Err(Refused(format!("counts from 1 (the first line), not {n}"))),
        _ => Err(Refused(format!(
            "takes a line number (1 for the first line), not {s:?}"
        ))),
    }
}

/// A count of at least 1 (lines, events).
pub fn at_least_one(s: &str) -> Result<u64, Refused> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 && n <= u64::MAX as i128 => Ok(n as u64),
        Ok(n) if n < 1 => Err(Refused(format!("must be 1 or more, not {n}"))),
        _ => Err(Refused(format!(
            "takes a whole number, 1 or more, not {s:?}"
        ))),
    }
}

/// The one line that says what is wrong with the command line and what to
/// do, without the tool's name. `args` are the arguments as given (without
/// the program name), to tell a value typed on the command line from one
/// that came from an environment variable.
///
/// A name is suggested only when it is close to what was typed (a typo:
/// one letter wrong, missing, extra or two swapped; two in a name of five
/// or more): clap's own measure takes "cline" for "claude", and a user
/// who named another program would be sent to the wrong one.
pub fn message(cmd: &clap::Command, err: &clap::Error, args: &[OsString]) -> String {
    let tool = cmd.get_name();
    let help = format!("see {tool} --help");
    let one = |k: ContextKind| match err.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let many = |k: ContextKind| match err.get(k) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    match err.kind() {
        ErrorKind::InvalidValue => {
            let arg = named(cmd, &one(ContextKind::InvalidArg).unwrap_or_default(), args);
            let value = one(ContextKind::InvalidValue).unwrap_or_default();
            if value.is_empty() {
                return match &arg.env {
                    Some(var) => format!(
                        "{var} is set but empty; give it a value, as for {} {}, or unset it",
                        arg.flag, arg.value
                    ),
                    None => format!("{} needs a value ({})", arg.name, arg.value),
                };
            }
            let valid = many(ContextKind::ValidValue);
            let hint = match nearest(&value, many(ContextKind::SuggestedValue)) {
                Some(s) if valid.len() > 1 => {
                    format!("did you mean {s:?}? (one of {})", or_list(&valid))
                }
                Some(s) => format!("did you mean {s:?}?"),
                None if !valid.is_empty() => format!("use {}", or_list(&valid)),
                None => help,
            };
            format!("{} cannot be {value:?}; {hint}", arg.name)
        }
        ErrorKind::ValueValidation => {
            let arg = named(cmd, &one(ContextKind::InvalidArg).unwrap_or_default(), args);
            let value = one(ContextKind::InvalidValue).unwrap_or_default();
            let source = std::error::Error::source(err);
            if let Some(r) = source.and_then(|s| s.downcast_ref::<Refused>()) {
                return format!("{} {r}", arg.name);
            }
            if source.is_some_and(|s| s.is::<std::num::ParseIntError>()) {
                if value.trim().parse::<i128>().is_ok_and(|n| n < 0) {
                    return format!("{} cannot be negative ({value})", arg.name);
                }
                return format!("{} takes a whole number, not {value:?}", arg.name);
            }
            let text = source.map(|s| s.to_string()).unwrap_or_default();
            if let Some(least) = open_range_start(&text) {
                return format!("{} must be {least} or more, not {value}", arg.name);
            }
            format!("{} cannot be {value:?}: {text}; {help}", arg.name)
        }
        ErrorKind::UnknownArgument => {
            let bad = one(ContextKind::InvalidArg).unwrap_or_default();
            let what = if bad.starts_with('-') {
                format!("unknown option {bad}")
            } else {
                format!("unexpected argument {bad:?}")
            };
            let suggested: Vec<String> = match err.get(ContextKind::Suggested) {
                Some(ContextValue::StyledStrs(v)) => v.iter().map(|s| s.to_string()).collect(),
                _ => Vec::new(),
            }
            .into_iter()
            // clap's "to pass '-x' as a value, use '-- -x'" is wrong for a
            // value of an option and useless for an unknown flag.
            .filter(|s| !s.starts_with("to pass"))
            .collect();
            let hint = match (one(ContextKind::SuggestedArg), suggested.first()) {
                (Some(s), _) => format!("did you mean {s}? ({help})"),
                // "'events --limit' exists": the option of a subcommand.
                (None, Some(s)) => match s.strip_suffix("' exists") {
                    Some(there) => format!(
                        "it goes after its command: {} ({help})",
                        there.trim_start_matches('\'')
                    ),
                    None => format!("{} ({help})", s.replace('\'', "")),
                },
                (None, None) => help,
            };
            format!("{what}; {hint}")
        }
        ErrorKind::InvalidSubcommand => {
            let bad = one(ContextKind::InvalidSubcommand).unwrap_or_default();
            let hint = match nearest(&bad, many(ContextKind::SuggestedSubcommand)) {
                Some(s) => format!("did you mean {s:?}? ({help})"),
                None => format!("the commands are {}", or_list(&commands(cmd))),
            };
            format!("unknown command {bad:?}; {hint}")
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            if cmd.has_subcommands() =>
        {
            format!("name a command: {} ({help})", or_list(&commands(cmd)))
        }
        ErrorKind::MissingRequiredArgument => {
            let missing: Vec<Named> = many(ContextKind::InvalidArg)
                .iter()
                .map(|a| named(cmd, a, args))
                .collect();
            let names: Vec<String> = missing
                .iter()
                .map(|a| match a.values.is_empty() || !a.takes_value {
                    true => a.name.clone(),
                    false => format!("{} ({})", a.name, or_list(&a.values)),
                })
                .collect();
            if missing.iter().all(|a| a.required) {
                return format!("missing {}; {help}", names.join(" and "));
            }
            // Needed because of an option given (`requires`), or unless
            // another is given (`required_unless_present`): clap says which
            // when asked with one option at a time.
            let wanted = many(ContextKind::InvalidArg);
            let (needers, instead) = why_needed(cmd, &wanted, args);
            if !needers.is_empty() {
                let verb = if needers.len() == 1 { "needs" } else { "need" };
                format!(
                    "{} {verb} {}; {help}",
                    needers.join(" and "),
                    names.join(" and ")
                )
            } else if !instead.is_empty() {
                format!(
                    "missing {} (or give {}); {help}",
                    names.join(" and "),
                    or_list(&instead)
                )
            } else {
                format!("missing {}; {help}", names.join(" and "))
            }
        }
        ErrorKind::ArgumentConflict => {
            let first = match (
                one(ContextKind::InvalidArg),
                one(ContextKind::InvalidSubcommand),
            ) {
                (Some(a), _) => named(cmd, &a, args).as_operand(),
                (None, Some(sub)) => format!("the command {sub}"),
                (None, None) => "an option given".to_string(),
            };
            let others: Vec<String> = many(ContextKind::PriorArg)
                .iter()
                .map(|a| named(cmd, a, args).as_operand())
                .collect();
            let others = if others.is_empty() {
                "the other options given".to_string()
            } else {
                others.join(" or ")
            };
            format!("{first} cannot be used with {others}; drop one of them ({help})")
        }
        _ => {
            // The rest (too many or too few values, `--opt=` required, bad
            // UTF-8): clap's own first line is clear enough.
            let rendered = err.render().to_string();
            let first = rendered.lines().next().unwrap_or("bad arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            format!("{}; {help}", first.trim_end_matches('.'))
        }
    }
}

/// An argument as a message names it.
struct Named {
    /// What the message calls it: `--offset`, `PATH`, or the environment
    /// variable its value came from.
    name: String,
    /// The flag (`--session`) or the positional's name (`PATH`).
    flag: String,
    /// Its value's name (`FILE`, `N`).
    value: String,
    /// Set when the value came from this environment variable.
    env: Option<String>,
    /// The values it accepts, when it lists them.
    values: Vec<String>,
    positional: bool,
    many: bool,
    takes_value: bool,
    required: bool,
}

impl Named {
    /// As the object of "cannot be used with": `PATH arguments`, `--write`.
    fn as_operand(&self) -> String {
        if self.positional && self.many {
            format!("{} arguments", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// Why clap wants the arguments it displays as `wanted` (`--old <OLD>`):
/// the options of `args` that need them, each alone on a command line
/// wanting them too; or, when none does, the flags that would do instead,
/// each alone making them unnecessary.
fn why_needed(
    cmd: &clap::Command,
    wanted: &[String],
    args: &[OsString],
) -> (Vec<String>, Vec<String>) {
    let still_wanted = |tokens: &[OsString]| -> Option<bool> {
        let line = std::iter::once(OsString::from(cmd.get_name())).chain(tokens.iter().cloned());
        match cmd.clone().try_get_matches_from(line) {
            Ok(_) => Some(false),
            Err(e) if e.kind() == ErrorKind::MissingRequiredArgument => {
                let now = match e.get(ContextKind::InvalidArg) {
                    Some(ContextValue::Strings(v)) => v.clone(),
                    Some(ContextValue::String(s)) => vec![s.clone()],
                    _ => Vec::new(),
                };
                Some(wanted.iter().any(|w| now.contains(w)))
            }
            Err(_) => None,
        }
    };
    // Wanted on an empty command line: needed unless another option
    // stands in; else some option given needs it.
    let alone = still_wanted(&[]) == Some(true);
    let mut needers = Vec::new();
    let mut i = 0;
    while i < args.len() && !alone {
        let t = args[i].to_string_lossy().into_owned();
        i += 1;
        let Some(a) = cmd.get_arguments().find(|a| {
            let name = t.split('=').next().unwrap_or(&t);
            a.get_long().is_some_and(|l| name == format!("--{l}"))
                || a.get_short().is_some_and(|s| name == format!("-{s}"))
        }) else {
            continue;
        };
        let mut tokens = vec![args[i - 1].clone()];
        if a.get_action().takes_values() && !t.contains('=') && i < args.len() {
            tokens.push(args[i].clone());
            i += 1;
        }
        if still_wanted(&tokens) == Some(true) {
            let flag = t.split('=').next().unwrap_or(&t).to_string();
            if !needers.contains(&flag) {
                needers.push(flag);
            }
        }
    }
    if !alone {
        return (needers, Vec::new());
    }
    let instead = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.get_action().takes_values())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .filter(|flag| still_wanted(&[OsString::from(flag)]) == Some(false))
        .collect();
    (needers, instead)
}

/// Find the argument clap displays as `shown` (`--offset <N>`, `[PATH]...`,
/// `<AGENT>`) in `cmd` or its subcommands.
fn named(cmd: &clap::Command, shown: &str, args: &[OsString]) -> Named {
    let head = shown.split_whitespace().next().unwrap_or(shown);
    let bare = head
        .trim_end_matches("...")
        .trim_matches(|c| matches!(c, '<' | '>' | '[' | ']'));
    let found = find_arg(cmd, head, bare);
    let Some(a) = found else {
        return Named {
            name: bare.to_string(),
            flag: bare.to_string(),
            value: "value".to_string(),
            env: None,
            values: Vec::new(),
            positional: !head.starts_with('-'),
            many: shown.ends_with("..."),
            takes_value: true,
            required: true,
        };
    };
    let flag = match (a.get_long(), a.get_short()) {
        (Some(l), _) => format!("--{l}"),
        (None, Some(s)) => format!("-{s}"),
        (None, None) => bare.to_string(),
    };
    let value = a
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| "value".to_string());
    let typed = on_command_line(a, args);
    let env = a
        .get_env()
        .filter(|_| !typed)
        .map(|e| e.to_string_lossy().into_owned());
    let values = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    Named {
        name: env.clone().unwrap_or_else(|| flag.clone()),
        flag,
        value,
        env,
        values,
        positional: a.is_positional(),
        many: shown.ends_with("..."),
        takes_value: a.get_action().takes_values(),
        required: a.is_required_set(),
    }
}

fn find_arg<'a>(cmd: &'a clap::Command, head: &str, bare: &str) -> Option<&'a clap::Arg> {
    let hit = cmd.get_arguments().find(|a| {
        if let Some(l) = head.strip_prefix("--") {
            a.get_long() == Some(l)
        } else if let Some(s) = head.strip_prefix('-') {
            s.chars().next() == a.get_short() && s.chars().count() == 1
        } else {
            a.is_positional()
                && a.get_value_names()
                    .and_then(|v| v.first())
                    .is_some_and(|v| v.as_str() == bare)
        }
    });
    hit.or_else(|| {
        cmd.get_subcommands()
            .find_map(|sc| find_arg(sc, head, bare))
    })
}

/// Whether `a` was typed on the command line (as `--long`, `--long=V`,
/// `-s` or `-sV`), so its value did not come from its environment variable.
fn on_command_line(a: &clap::Arg, args: &[OsString]) -> bool {
    args.iter().take_while(|t| *t != "--").any(|t| {
        let t = t.to_string_lossy();
        if let Some(l) = a.get_long() {
            if let Some(rest) = t.strip_prefix("--") {
                if rest == l || rest.starts_with(&format!("{l}=")) {
                    return true;
                }
            }
        }
        match a.get_short() {
            Some(s) if !t.starts_with("--") => {
                t.strip_prefix('-').and_then(|r| r.chars().next()) == Some(s)
            }
            _ => false,
        }
    })
}

fn commands(cmd: &clap::Command) -> Vec<String> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect()
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The start of clap's "V is not in A..B" when B is the type's maximum (an
/// open range such as `1..`).
/// Of clap's suggestions, the nearest to `typed` that is near enough to be
/// what was meant, if any.
fn nearest(typed: &str, suggested: Vec<String>) -> Option<String> {
    let typed = typed.to_lowercase();
    suggested
        .into_iter()
        .map(|s| (strsim::osa_distance(&typed, &s.to_lowercase()), s))
        .filter(|(d, s)| *d <= if s.chars().count() >= 5 { 2 } else { 1 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, s)| s)
}

fn open_range_start(text: &str) -> Option<String> {
    let (_, range) = text.split_once(" is not in ")?;
    let (lo, hi) = range.split_once("..")?;
    let hi = hi.trim_start_matches('=');
    let open = hi.is_empty()
        || hi == u64::MAX.to_string()
        || hi == i64::MAX.to_string()
        || hi == usize::MAX.to_string()
        || hi == u32::MAX.to_string()
        || hi == i32::MAX.to_string();
    (open && lo.parse::<i128>().is_ok()).then(|| lo.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    fn tool() -> Command {
        Command::new("t")
            .arg(
                Arg::new("offset")
                    .long("offset")
                    .short('o')
                    .value_name("N")
                    .allow_negative_numbers(true)
                    .value_parser(line_number),
            )
            .arg(
                Arg::new("limit")
                    .long("limit")
                    .value_name("N")
                    .allow_negative_numbers(true)
                    .value_parser(clap::value_parser!(u64).range(1..)),
            )
            .arg(
                Arg::new("session")
                    .long("session")
                    .value_name("FILE")
                    .env("T_SESSION")
                    .value_parser(clap::value_parser!(std::path::PathBuf)),
            )
            .arg(
                Arg::new("changed")
                    .long("changed")
                    .action(ArgAction::SetTrue)
                    .conflicts_with("paths"),
            )
            .arg(
                Arg::new("mode")
                    .long("mode")
                    .value_parser(["open", "closed"]),
            )
            .arg(
                Arg::new("paths")
                    .value_name("PATH")
                    .num_args(0..)
                    .value_parser(clap::value_parser!(std::path::PathBuf)),
            )
    }

    fn said(args: &[&str]) -> String {
        let err = tool()
            .try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))
            .unwrap_err();
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        message(&tool(), &err, &args)
    }

    #[test]
    fn one_line_for_each_kind() {
        assert_eq!(
            said(&["--offset", "0"]),
            "--offset counts from 1 (the first line), not 0"
        );
        assert_eq!(
            said(&["-o", "-1"]),
            "--offset counts from 1 (the first line), not -1"
        );
        assert_eq!(
            said(&["--offset", "x"]),
            "--offset takes a line number (1 for the first line), not \"x\""
        );
        assert_eq!(said(&["--limit", "0"]), "--limit must be 1 or more, not 0");
        assert_eq!(
            said(&["--limit", "ten"]),
            "--limit takes a whole number, not \"ten\""
        );
        assert_eq!(said(&["--bogus"]), "unknown option --bogus; see t --help");
        assert_eq!(
            said(&["--chnged"]),
            "unknown option --chnged; did you mean --changed? (see t --help)"
        );
        assert_eq!(
            said(&["--changed", "a.rs"]),
            "--changed cannot be used with PATH arguments; drop one of them (see t --help)"
        );
        assert_eq!(
            said(&["--mode", "opn"]),
            "--mode cannot be \"opn\"; did you mean \"open\"? (one of open or closed)"
        );
        assert_eq!(said(&["--session="]), "--session needs a value (FILE)");
    }

    #[test]
    fn every_message_is_one_line() {
        for args in [
            &["--offset", "0"][..],
            &["--bogus"],
            &["--changed", "x"],
            &["--limit"],
            &["--mode", "x"],
        ] {
            let m = said(args);
            assert!(!m.contains('\n'), "{m:?}");
        }
    }

    #[test]
    fn open_ranges() {
        assert_eq!(
            open_range_start("0 is not in 1..18446744073709551615"),
            Some("1".to_string())
        );
        assert_eq!(open_range_start("9 is not in 1..=5"), None);
    }
}
