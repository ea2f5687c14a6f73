fn main() -> std::process::ExitCode {
    fsview::edit::main()
}
