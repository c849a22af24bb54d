//! Unified diffs for dry runs and previews.

use similar::TextDiff;

pub fn unified(path: &str, before: &str, after: &str) -> String {
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a{path}"), &format!("b{path}"))
        .to_string()
}
