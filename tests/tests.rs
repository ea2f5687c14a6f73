//! Integration tests: the built binaries, run in temp directories with a
//! cleared environment, as a user or a shell pipeline would run them.

mod bad_input;
mod check_edit;
mod concurrency;
mod ctx;
mod demo;
mod edit;
mod edit_races;
mod freshness;
mod harness;
mod hook;
mod props;
mod read;
mod session_cmd;
mod session_file;
mod stress;
mod torture;
