fn main() -> std::process::ExitCode {
    fsview::hook::main()
}
