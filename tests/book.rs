//! The book under docs/ holds together without mdbook installed: every page
//! is in `docs/SUMMARY.md` (a page left out is a page no reader of the built
//! book finds), every entry there is a page, and every relative link of the
//! README and the book leads to a file that exists and, with a `#`, to a
//! heading or an anchor on that page. `mdbook build docs` builds it; no test
//! needs mdbook.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SUMMARY: &str = "docs/SUMMARY.md";

fn read(page: &str) -> String {
    std::fs::read_to_string(Path::new(common::ROOT).join(page))
        .unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The lines of a page outside its fenced code blocks, numbered from 1.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let marker = ["````", "```", "~~~"]
            .into_iter()
            .find(|m| line.trim_start().starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(_)) if line.trim() == f => fence = None,
            (None, None) => lines.push((i + 1, line)),
            _ => {}
        }
    }
    lines
}

/// The targets of the Markdown links `[text](target)` of a line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        if !target.is_empty() && !target.contains(char::is_whitespace) {
            targets.push(target);
        }
        rest = &after[end..];
    }
    targets
}

/// A heading's anchor as GitHub and mdBook make it: lower case, letters,
/// digits, `-` and `_` kept, a space made `-`, anything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page: its headings' (a repeated one numbered `-1`,
/// `-2` as GitHub does) and any `<a id="...">` or `<a name="...">`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut seen = std::collections::HashMap::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..].replace(['`', '*'], ""));
            let n = seen.entry(base.clone()).or_insert(0);
            anchors.insert(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
        for attribute in ["<a id=\"", "<a name=\""] {
            for (at, _) in line.match_indices(attribute) {
                let value = &line[at + attribute.len()..];
                if let Some(end) = value.find('"') {
                    anchors.insert(value[..end].to_string());
                }
            }
        }
    }
    anchors
}

/// `docs/SUMMARY.md`'s entries: the `(page.md)` of each `[title](page.md)`.
fn summary_entries() -> Vec<String> {
    let text = read(SUMMARY);
    prose(&text)
        .into_iter()
        .flat_map(|(_, line)| link_targets(line))
        .map(|target| format!("docs/{target}"))
        .collect()
}

#[test]
fn the_summary_lists_every_page_of_the_book_and_nothing_else() {
    let toml = read("docs/book.toml");
    assert!(
        toml.lines().any(|l| l.replace(' ', "") == "src=\".\""),
        "docs/book.toml: the book's pages are docs/ itself (src = \".\")"
    );
    let entries = summary_entries();
    assert!(entries.len() >= 10, "{SUMMARY}: {entries:?}");
    let mut missing = Vec::new();
    let mut listed = BTreeSet::new();
    for entry in &entries {
        if !Path::new(common::ROOT).join(entry).is_file() {
            missing.push(entry.clone());
        }
        assert!(
            listed.insert(entry.clone()),
            "{SUMMARY} lists {entry} twice"
        );
    }
    assert!(
        missing.is_empty(),
        "{SUMMARY} lists pages that do not exist: {missing:?}"
    );
    let unlisted: Vec<String> = common::doc_pages()
        .into_iter()
        .filter(|page| page != "README.md" && page != SUMMARY && !listed.contains(page))
        .collect();
    assert!(
        unlisted.is_empty(),
        "pages under docs/ that {SUMMARY} does not list (add a line for each): {unlisted:?}"
    );
}

#[test]
fn every_link_of_the_readme_and_the_book_leads_somewhere() {
    let root = PathBuf::from(common::ROOT);
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in common::doc_pages() {
        let text = read(&page);
        let dir = Path::new(&page).parent().unwrap().to_path_buf();
        for (number, line) in prose(&text) {
            for target in link_targets(line) {
                let external = target.split_once(':').is_some_and(|(scheme, _)| {
                    !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic())
                });
                if external {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let to = if file.is_empty() {
                    page.clone()
                } else {
                    let joined = dir.join(file);
                    match normalise(&joined) {
                        Some(path) => path,
                        None => {
                            broken.push(format!("{page}:{number}: {target} leaves the repository"));
                            continue;
                        }
                    }
                };
                // The built book holds docs/ alone: a link of a book page
                // out of it is broken in the HTML (issue 32 item 21).
                if page.starts_with("docs/") && !to.starts_with("docs/") {
                    broken.push(format!(
                        "{page}:{number}: {target} leaves the book (docs/), which the built HTML book does not hold: name the file in prose"
                    ));
                    continue;
                }
                if !root.join(&to).exists() {
                    broken.push(format!("{page}:{number}: {target}: no {to}"));
                } else if !anchor.is_empty()
                    && to.ends_with(".md")
                    && !anchors(&read(&to)).contains(anchor)
                {
                    broken.push(format!(
                        "{page}:{number}: {target}: no heading #{anchor} in {to}"
                    ));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `docs/../scenarios/x.toml` as `scenarios/x.toml`; `None` above the root.
fn normalise(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            std::path::Component::CurDir => {}
            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    Some(parts.join("/"))
}

#[test]
fn anchors_and_links_are_read_as_github_reads_them() {
    assert_eq!(slug("What to merge for link"), "what-to-merge-for-link");
    assert_eq!(slug("claim-first, SP-OCT-003"), "claim-first-sp-oct-003");
    assert_eq!(
        slug("Seeing it: explorer, diagrams, HTML report"),
        "seeing-it-explorer-diagrams-html-report"
    );
    let page = "# A\n```text\n# not a heading\n```\n## A\n<a id=\"x\"></a>\n";
    assert_eq!(
        anchors(page),
        ["a", "a-1", "x"].map(String::from).into_iter().collect()
    );
    assert_eq!(
        link_targets("see [a](b.md#c) and [d](https://e) and [f] (g)"),
        ["b.md#c", "https://e"]
    );
    assert_eq!(
        normalise(Path::new("docs/../scenarios/x.toml")).unwrap(),
        "scenarios/x.toml"
    );
    assert_eq!(normalise(Path::new("../x")), None);
}
