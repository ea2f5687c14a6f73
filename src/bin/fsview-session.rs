fn main() -> std::process::ExitCode {
    fsview::session::main()
}
