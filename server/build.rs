//! Links the `multiedit` executable non-PIE on Linux with glibc. A run of `multiedit apply` is a short
//! process, and starting a position-independent executable of this size costs the dynamic loader 10,600
//! relocations over 42 pages of `.data.rel.ro` (45 of a dry run's 200 page faults, about 0.1 ms):
//! the difference between 1.2x and 1.07x `git apply --check` for `multiedit apply --dry-run` on the
//! median commit of this repository (whole process; README, Performance). The price is the
//! address randomisation of the executable's own image (libraries, stack and heap keep theirs), in a
//! program written in safe Rust. musl builds are static already; other systems are left as they are.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
