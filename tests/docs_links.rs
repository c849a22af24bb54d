//! Every link of the README and the docs resolves: a relative link names a file of the repository, and
//! an `#anchor` a heading of the page it points to (as GitHub makes anchors from headings).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The pages whose links are checked: the top-level ones, docs/ and the extension's README.
fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut out: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "extension-vscode/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, only letters, digits, `-`, `_` and spaces kept, spaces
/// made `-`; a repeated heading gets `-1`, `-2`, ...
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

struct Page {
    links: Vec<String>,
    anchors: BTreeSet<String>,
}

fn read_page(path: &Path) -> Page {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut links, mut anchors, mut seen) = (
        Vec::new(),
        BTreeSet::new(),
        BTreeMap::<String, usize>::new(),
    );
    let mut heading: Option<String> = None;
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => links.push(dest_url.to_string()),
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_default();
                anchors.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    Page { links, anchors }
}

#[test]
fn every_link_of_the_readme_and_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut cache: BTreeMap<PathBuf, Page> = BTreeMap::new();
    let pages = pages();
    for page in &pages {
        let links = read_page(page).links;
        for link in links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match link.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let name = format!("{}: {link}", page.strip_prefix(repo()).unwrap().display());
            if !target.exists() {
                broken.push(format!("{name} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                if target.extension().is_some_and(|e| e == "md") {
                    let target = target.canonicalize().unwrap();
                    let anchors = &cache
                        .entry(target.clone())
                        .or_insert_with(|| read_page(&target))
                        .anchors;
                    if !anchors.contains(anchor) {
                        broken.push(format!("{name} (no heading with that anchor)"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("The MCP server: `multiedit mcp`"),
        "the-mcp-server-multiedit-mcp"
    );
    assert_eq!(
        slug("Diagnostics: what the edit introduced and resolved"),
        "diagnostics-what-the-edit-introduced-and-resolved"
    );
    assert_eq!(
        slug("1b. Tolerant matching writes"),
        "1b-tolerant-matching-writes"
    );
}

#[test]
fn the_readme_stays_short() {
    let lines = std::fs::read_to_string(repo().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(lines <= 200, "README.md has {lines} lines; a newcomer reads it to the end under 200: move detail to docs/");
}
