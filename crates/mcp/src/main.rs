fn main() -> std::process::ExitCode {
    fsview_mcp::main()
}
