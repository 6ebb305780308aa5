//! docs/logging.md ("Logging your service") runs its examples: every
//! ```ndjson block is a log that `slotcheck validate` is run on, with the
//! arguments and the verdict its `<!-- validate: ARGS => EXIT [at line N]
//! -->` line states just above it; every ```go block is the sample
//! worker's code, found line for line, in order, in the file its `<!--
//! from: PATH -->` line names.

use crate::common;

use crate::common::{code, scratch, stdout, ROOT};

const PAGE: &str = "docs/logging.md";

/// A fenced block: its info string, its text, and the marker line above it
/// (the last non-blank line before the fence), with the fence's line.
struct Block {
    line: usize,
    info: String,
    text: String,
    marker: String,
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines: Vec<&str> = page.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let start = i;
            let mut text = String::new();
            i += 1;
            while i < lines.len() && lines[i] != "```" {
                text.push_str(lines[i]);
                text.push('\n');
                i += 1;
            }
            let marker = lines[..start]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map_or(String::new(), |l| l.trim().to_string());
            out.push(Block {
                line: start + 1,
                info: info.trim().to_string(),
                text,
                marker,
            });
        }
        i += 1;
    }
    out
}

/// `<!-- validate: ARGS => EXIT [at line N] -->`.
fn validate_marker(marker: &str) -> Option<(Vec<String>, i32, Option<usize>)> {
    let inner = marker
        .strip_prefix("<!-- validate:")?
        .strip_suffix("-->")?
        .trim();
    let (args, verdict) = inner.split_once("=>")?;
    let mut verdict = verdict.split_whitespace();
    let exit: i32 = verdict.next()?.parse().ok()?;
    let line = match (verdict.next(), verdict.next(), verdict.next()) {
        (Some("at"), Some("line"), Some(n)) => Some(n.parse().ok()?),
        (None, _, _) => None,
        _ => return None,
    };
    Some((
        args.split_whitespace().map(String::from).collect(),
        exit,
        line,
    ))
}

#[test]
fn every_example_log_of_the_chapter_gets_the_verdict_it_states() {
    let page = std::fs::read_to_string(format!("{ROOT}/{PAGE}")).unwrap();
    let dir = scratch("logging", "examples");
    let mut run = 0;
    for block in blocks(&page).iter().filter(|b| b.info == "ndjson") {
        let Some((args, exit, line)) = validate_marker(&block.marker) else {
            panic!(
                "{PAGE}:{}: an example log without a `<!-- validate: ARGS => EXIT [at line N] -->` line above it",
                block.line
            );
        };
        let log = dir.join(format!("example-{}.ndjson", block.line));
        std::fs::write(&log, &block.text).unwrap();
        let mut argv = vec!["validate".to_string(), log.to_string_lossy().into_owned()];
        argv.extend(args);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = common::slotcheck(&argv);
        assert_eq!(
            code(&out),
            exit,
            "{PAGE}:{}: validate {:?} exits {}, the page says {exit}:\n{}",
            block.line,
            &argv[2..],
            code(&out),
            stdout(&out)
        );
        if let Some(n) = line {
            assert!(
                stdout(&out).contains(&format!("departs at line {n}:")),
                "{PAGE}:{}: not at line {n}:\n{}",
                block.line,
                stdout(&out)
            );
        }
        run += 1;
    }
    assert!(run >= 6, "only {run} example logs");
}

#[test]
fn every_go_excerpt_of_the_chapter_is_the_sample_workers_code() {
    let page = std::fs::read_to_string(format!("{ROOT}/{PAGE}")).unwrap();
    let mut checked = 0;
    for block in blocks(&page).iter().filter(|b| b.info == "go") {
        let path = block
            .marker
            .strip_prefix("<!-- from:")
            .and_then(|m| m.strip_suffix("-->"))
            .map(str::trim)
            .unwrap_or_else(|| {
                panic!(
                    "{PAGE}:{}: a Go excerpt without a `<!-- from: PATH -->` line above it",
                    block.line
                )
            });
        let source = std::fs::read_to_string(format!("{ROOT}/{path}"))
            .unwrap_or_else(|e| panic!("{PAGE}:{}: {path}: {e}", block.line));
        let source: Vec<&str> = source.lines().collect();
        let excerpt: Vec<&str> = block.text.lines().collect();
        let found = source
            .windows(excerpt.len())
            .any(|window| window == excerpt.as_slice());
        assert!(
            found,
            "{PAGE}:{}: the excerpt is not in {path} as it stands:\n{}",
            block.line, block.text
        );
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} Go excerpts");
}

#[test]
fn the_markers_are_read_as_written() {
    assert_eq!(
        validate_marker("<!-- validate: --design x => 4 at line 8 -->"),
        Some((vec!["--design".into(), "x".into()], 4, Some(8)))
    );
    assert_eq!(
        validate_marker("<!-- validate: --design x => 0 -->"),
        Some((vec!["--design".into(), "x".into()], 0, None))
    );
    assert_eq!(validate_marker("<!-- validate: => at -->"), None);
}
