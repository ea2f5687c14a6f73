fn main() -> std::process::ExitCode {
    fsview::write::main()
}
