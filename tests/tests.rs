//! Integration tests: the built binaries, run in temp directories with a
//! cleared environment, as a user or a shell pipeline would run them.

mod agent;
mod bad_input;
mod check_edit;
mod completions;
mod concurrency;
mod ctx;
mod demo;
mod edit;
mod edit_races;
mod filesystems;
mod freshness;
mod harness;
mod hook;
mod hook_codex;
mod hook_copilot;
mod hook_fixtures;
mod hook_gemini;
mod hook_opencode;
mod hook_qwen;
mod layout;
mod misses;
mod props;
mod read;
mod readme;
mod remind;
mod session_cmd;
mod session_file;
mod stress;
mod subagents;
mod torture;
mod travel;
mod usage;
