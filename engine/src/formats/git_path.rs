//! The patch paths `git apply` refuses as unsafe: a path with a component that is, or that a file
//! system reads as, `.git`. A file written there (a hook, `config` with `core.fsmonitor`) makes git run
//! a command the patch chose on the next `git status` or `checkout`, so a patch from a stranger must
//! never reach it.
//!
//! Restated from git's `verify_path` and its helpers (read-cache.c, path.c, utf8.c), whose rules are:
//! - a component equal to `.git` in any letter case;
//! - with `core.protectNTFS` (git's default everywhere since 2.24): a component that Windows reads as
//!   `.git`: `.git` or its 8.3 short name `git~1` (any case), followed only by dots and spaces (which
//!   Windows drops from the end of a name), or by `:` (an alternate data stream such as
//!   `.git::$INDEX_ALLOCATION`); there a backslash separates components as well as a slash;
//! - with `core.protectHFS` (git's default on macOS): a component that HFS+ reads as `.git` because
//!   it ignores certain invisible code points in names (joiners, direction marks, U+206A to U+206F,
//!   the byte order mark) when they fall between its letters.
//!
//! A patch may be written on one system and applied on another, and the release runs on all three, so
//! all three rules hold everywhere. git's rules for `.gitmodules` apply only to symbolic links, which no
//! patch format here creates.

/// Why a component is refused, worded to follow "the component `X` ".
fn reading(rule: Rule) -> &'static str {
    match rule {
        Rule::DotGit => "is .git (in any letter case)",
        Rule::Ntfs => "is what Windows reads as .git (.git or its short name git~1, followed by dots, spaces or a `:` stream)",
        Rule::Hfs => "is what macOS reads as .git (it holds invisible characters that macOS ignores in names)",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    DotGit,
    Ntfs,
    Hfs,
}

/// The first component of `path` that git refuses, and why (to complete "the component `X` …"), or
/// `None` when every component is allowed. Components are split at `/` and `\`.
pub fn refused_component(path: &str) -> Option<(&str, &'static str)> {
    path.split(['/', '\\'])
        .find_map(|c| rule_of(c).map(|r| (c, reading(r))))
}

fn rule_of(component: &str) -> Option<Rule> {
    if component.eq_ignore_ascii_case(".git") {
        return Some(Rule::DotGit);
    }
    if ntfs_dot_git(component) {
        return Some(Rule::Ntfs);
    }
    if hfs_dot_git(component) {
        return Some(Rule::Hfs);
    }
    None
}

/// `.git` or `git~1` (any case), then nothing but dots and spaces up to the end or a `:`.
fn ntfs_dot_git(component: &str) -> bool {
    let lower = component.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix(".git")
        .or_else(|| lower.strip_prefix("git~1"))
    else {
        return false;
    };
    let name_end = rest.find(':').unwrap_or(rest.len());
    rest[..name_end].chars().all(|c| c == '.' || c == ' ')
}

/// Code points HFS+ leaves out when it compares names.
fn hfs_ignored(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

/// `.git` once the ignored code points are left out, letters compared without case.
fn hfs_dot_git(component: &str) -> bool {
    let mut kept = component.chars().filter(|&c| !hfs_ignored(c));
    let word: String = kept.by_ref().take(4).collect();
    word.eq_ignore_ascii_case(".git") && kept.next().is_none()
}

/// The refusal text for a patch path `git apply` would refuse, `None` when it is allowed: names the
/// path and the rule.
pub fn refusal_text(path: &str) -> Option<String> {
    let (component, why) = refused_component(path)?;
    Some(format!(
        "Cannot apply the patch: its path {path} has the component `{component}`, which {why}. Like git apply, \
         multiedit refuses a patch path inside a .git folder, where a planted file (a hook, the config) makes git \
         run commands. Nothing was changed."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_git_refuses_and_what_it_allows() {
        for bad in [
            ".git/config",
            "sub/.GIT/hooks/post-checkout",
            ".Git",
            ".git./config",
            ".git ./hooks/x",
            "GIT~1/config",
            ".git::$INDEX_ALLOCATION/config",
            "a\\.git\\config",
            ".g\u{200c}it/config",
            "\u{feff}.git/hooks/pre-commit",
            ".GI\u{206f}T",
        ] {
            assert!(
                refused_component(bad).is_some(),
                "{bad:?} should be refused"
            );
        }
        for good in [
            ".gitignore",
            ".github/workflows/ci.yml",
            "git/config",
            ".gitx",
            "x.git",
            ".git~1",
            "git~2",
            "src/.gitkeep",
            "my.git/a",
        ] {
            assert_eq!(refused_component(good), None, "{good:?} should be allowed");
        }
        assert_eq!(
            refusal_text("sub/.GIT/hooks/post-checkout").unwrap(),
            "Cannot apply the patch: its path sub/.GIT/hooks/post-checkout has the component `.GIT`, which is .git (in \
             any letter case). Like git apply, multiedit refuses a patch path inside a .git folder, where a planted \
             file (a hook, the config) makes git run commands. Nothing was changed."
        );
    }
}
