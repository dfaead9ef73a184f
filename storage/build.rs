//! Builds csrc/util_float.c: Redis's long double and strtod() helpers, which
//! need C's `long double` (80-bit on x86_64) and libc's parser (see the
//! comment at the top of the C file and `util.rs`).

fn main() {
    println!("cargo:rerun-if-changed=csrc/util_float.c");
    cc::Build::new()
        .file("csrc/util_float.c")
        .flag_if_supported("-std=c11")
        .warnings(true)
        .compile("redislite_util_float");
}
