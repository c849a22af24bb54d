fn main() -> std::process::ExitCode {
    multiedit::cli::main()
}
