fn main() -> std::process::ExitCode {
    fsview::ctx_build::main()
}
