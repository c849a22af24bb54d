//! What the benches share.

/// A code-like text of about `bytes` bytes whose every line is unique.
pub fn source(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 100);
    let mut i = 0u64;
    while s.len() < bytes {
        s.push_str(&format!(
            "    let value_{i} = compute({i}, \"{:x}\"); // step {i}\n",
            i.wrapping_mul(0x9e3779b97f4a7c15)
        ));
        i += 1;
    }
    s
}
