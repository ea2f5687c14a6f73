fn main() -> std::process::ExitCode {
    fsview::read::main()
}
