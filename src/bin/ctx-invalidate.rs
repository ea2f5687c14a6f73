fn main() -> std::process::ExitCode {
    fsview::ctx_invalidate::main()
}
