fn main() -> std::process::ExitCode {
    fsview::check_edit::main()
}
