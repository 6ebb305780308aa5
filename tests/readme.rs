//! Every figure and sample output in README.md and in the book under docs/
//! (every page `common::doc_pages` lists) comes from a command that this
//! file re-runs, so neither can go stale unnoticed.
//!
//! A generated part of a page sits between a marker that names its
//! command and `<!-- end -->`:
//!
//! ````text
//! <!-- generated: slotcheck check --design claim-first --requests 1 --stalls 0 -->
//! ```text
//! $ slotcheck check --design claim-first --requests 1 --stalls 0
//! ...what it prints...
//! ```
//! <!-- end -->
//! ````
//!
//! - `generated: COMMAND`: a fenced block holding what COMMAND prints on
//!   standard output, after a `$ COMMAND` line (a block fenced as a file
//!   type, ```` ```toml ````, holds the output alone). Deterministic: the
//!   test re-runs it and wants the same bytes.
//! - `timing: COMMAND`: the same for an output with times, rates or memory
//!   in it. The test compares it with those figures masked (every number
//!   with a decimal point, a number followed by `runs/s` or `states/s`, a
//!   number under a column headed `.../s`), so state counts, verdicts and
//!   run counts are still checked; `scripts/readme.sh` refreshes the times.
//! - `counts: COMMAND`: the same for the output of a live run on a real
//!   system, whose counts the scheduler decides: every number is masked, so
//!   what is compared is the words (which designs, which verdicts, which
//!   variants keep every invariant). Written and refreshed as a timing block.
//! - `generated markdown: COMMAND`: Markdown that COMMAND prints, as it is
//!   (a table, a page of stories), with no fence.
//! - `generated verdicts`: a Markdown table with a `command` column (a code
//!   span) and a `verdicts` column, which is what the command prints for
//!   each property (`` `no-wedge` violated (8 steps); ... ``).
//! - `, slow` after the kind (`generated, slow: ...`, `timing, slow: ...`,
//!   `generated verdicts, slow`): too heavy for the test suite (more than a
//!   few seconds). The test checks only that the block is well formed;
//!   `scripts/readme.sh` regenerates it and `scripts/readme.sh --check` (the
//!   nightly run) compares it.
//! - `, big` instead: too heavy for the nightly run too (more memory than a
//!   CI runner has, or most of an hour). Only `scripts/readme.sh --big`
//!   regenerates or checks it, on a machine that can afford it.
//!
//! Commands run under `sh` from the repository root, with the `slotcheck`
//! this test was built with first on `PATH` and `NO_COLOR` set, so a block
//! may pipe its output through `sed` to leave out what the text does not
//! need. Exit status 0, 1 (a violation) and 3 (inconclusive) are outputs
//! like any other; anything else (2: bad arguments) fails the test.
//!
//! `SLOTCHECK_README_PAGE=docs/x.md` limits the test to that page.
//! `SLOTCHECK_README` chooses what the test does: unset, it checks the fast
//! parts; `check-all` checks every part; `write` rewrites each page with what
//! every command prints now, `write-fast` the fast parts only. A write leaves
//! a timing block whose times alone changed, unless
//! `SLOTCHECK_README_TIMINGS=refresh`. `scripts/readme.sh` sets these.

use crate::common;
#[path = "readme/masks.rs"]
mod masks;

use masks::{diff, mask_counts, mask_timing};

use std::path::Path;
use std::process::Command;

/// A part of the README: plain text, or a generated part with its lines.
#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Block(Block),
    Verdicts(Verdicts),
}

#[derive(Clone, Debug, PartialEq)]
struct Block {
    /// The marker line, as written.
    marker: String,
    timing: bool,
    /// A live run: every number masked.
    counts: bool,
    /// Markdown as the command prints it, not in a fenced block.
    raw: bool,
    weight: Weight,
    command: String,
    /// The fence's info string (`text`, `toml`...).
    info: String,
    body: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct Verdicts {
    marker: String,
    weight: Weight,
    /// The table's lines: header, separator, rows.
    table: Vec<String>,
}

const END: &str = "<!-- end -->";

/// How heavy a part is to regenerate, lightest first: which runs check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// The test suite.
    Fast,
    /// `scripts/readme.sh` and the nightly `--check`.
    Slow,
    /// Only `scripts/readme.sh --big`.
    Big,
}

/// The kind, weight and command of a marker line, if it is one.
fn marker(line: &str) -> Option<Result<(String, Weight, String), String>> {
    let inner = line.strip_prefix("<!-- ")?.strip_suffix(" -->")?;
    let (head, command) = match inner.split_once(": ") {
        Some((head, command)) => (head, command.trim().to_string()),
        None => (inner, String::new()),
    };
    let (kind, weight) = match (head.strip_suffix(", slow"), head.strip_suffix(", big")) {
        (Some(kind), _) => (kind, Weight::Slow),
        (_, Some(kind)) => (kind, Weight::Big),
        _ => (head, Weight::Fast),
    };
    match kind {
        "generated" | "timing" | "counts" if command.is_empty() => {
            Some(Err(format!("`{line}`: a {kind} block names its command")))
        }
        "generated" | "timing" | "counts" | "generated markdown" => {
            Some(Ok((kind.to_string(), weight, command)))
        }
        "generated verdicts" if command.is_empty() => Some(Ok((kind.to_string(), weight, command))),
        _ if ["generated", "timing", "counts"]
            .iter()
            .any(|k| kind.starts_with(k)) =>
        {
            Some(Err(format!("`{line}`: not a marker this test knows")))
        }
        _ => None,
    }
}

/// The README cut into its parts; the error names the line.
fn parse(page: &str, readme: &str) -> Result<Vec<Part>, String> {
    let lines: Vec<&str> = readme.split_inclusive('\n').collect();
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\n');
        let Some(found) = marker(line) else {
            if line == END {
                return Err(format!("{page}:{}: `{END}` without a marker", i + 1));
            }
            text.push_str(lines[i]);
            i += 1;
            continue;
        };
        let (kind, weight, command) = found.map_err(|e| format!("{page}:{}: {e}", i + 1))?;
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&j| lines[j].trim_end() == END)
            .ok_or_else(|| format!("{page}:{}: `{line}` has no `{END}`", i + 1))?;
        let inside: Vec<String> = lines[start..end]
            .iter()
            .map(|l| l.trim_end_matches('\n').to_string())
            .collect();
        if inside.iter().any(|l| marker(l).is_some()) {
            return Err(format!("{page}:{}: a marker inside `{line}`", i + 1));
        }
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        if kind == "generated verdicts" {
            let header = inside.first().map(|h| cells(h)).unwrap_or_default();
            let has = |name: &str| header.iter().any(|c| c == name);
            if inside.len() < 3 || !has("command") || !has("verdicts") {
                return Err(format!(
                    "{page}:{}: a verdicts table has a header with `command` and `verdicts` columns and at least one row",
                    i + 1
                ));
            }
            parts.push(Part::Verdicts(Verdicts {
                marker: line.to_string(),
                weight,
                table: inside,
            }));
        } else if kind == "generated markdown" {
            parts.push(Part::Block(Block {
                marker: line.to_string(),
                timing: false,
                counts: false,
                raw: true,
                weight,
                command,
                info: String::new(),
                body: inside,
            }));
        } else {
            let fenced = inside.len() >= 2
                && inside[0].starts_with("```")
                && inside[inside.len() - 1] == "```";
            if !fenced {
                return Err(format!(
                    "{page}:{}: `{line}` holds one fenced block and nothing else",
                    i + 1
                ));
            }
            parts.push(Part::Block(Block {
                marker: line.to_string(),
                timing: kind == "timing",
                counts: kind == "counts",
                raw: false,
                weight,
                command,
                info: inside[0].trim_start_matches('`').to_string(),
                body: inside[1..inside.len() - 1].to_vec(),
            }));
        }
        i = end + 1;
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

/// The README again, from its parts.
fn render(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Text(text) => out.push_str(text),
            Part::Block(b) if b.raw => {
                out.push_str(&format!("{}\n", b.marker));
                for line in &b.body {
                    out.push_str(&format!("{line}\n"));
                }
                out.push_str(&format!("{END}\n"));
            }
            Part::Block(b) => {
                out.push_str(&format!("{}\n```{}\n", b.marker, b.info));
                for line in &b.body {
                    out.push_str(&format!("{line}\n"));
                }
                out.push_str(&format!("```\n{END}\n"));
            }
            Part::Verdicts(v) => {
                out.push_str(&format!("{}\n", v.marker));
                for line in &v.table {
                    out.push_str(&format!("{line}\n"));
                }
                out.push_str(&format!("{END}\n"));
            }
        }
    }
    out
}

/// The cells of a Markdown table row (`\|` inside a cell is no separator).
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in inner.chars() {
        if c == '|' && !escaped {
            cells.push(String::new());
        } else {
            cells.last_mut().unwrap().push(c);
        }
        escaped = c == '\\';
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

/// The slotcheck this test was built with, first on `PATH`.
fn path_with_slotcheck() -> String {
    let bin = Path::new(common::BIN).parent().unwrap().to_path_buf();
    let mut paths = vec![bin];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// What `command` prints, each line without trailing spaces (which an
/// editor would strip from the README) and without trailing blank lines.
fn run(command: &str) -> Result<Vec<String>, String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(common::ROOT)
        .env("PATH", path_with_slotcheck())
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| format!("`{command}`: {e}"))?;
    match output.status.code() {
        Some(0 | 1 | 3) => {}
        code => {
            return Err(format!(
                "`{command}` failed ({code:?}): {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }
    let text = String::from_utf8(output.stdout).map_err(|e| format!("`{command}`: {e}"))?;
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return Err(format!("`{command}` printed nothing"));
    }
    Ok(lines)
}

/// A block as its command fills it now.
fn regenerate(block: &Block) -> Result<Vec<String>, String> {
    let output = run(&block.command)?;
    let shows_command = !block.raw && matches!(block.info.as_str(), "" | "text" | "console");
    Ok(if shows_command {
        std::iter::once(format!("$ {}", block.command))
            .chain(output)
            .collect()
    } else {
        output
    })
}

/// The verdict lines of a `check` output (`  no-wedge   violated (8 steps)`)
/// as one cell: `` `no-wedge` violated (8 steps); ... ``.
fn verdict_cell(output: &[String]) -> Result<String, String> {
    let mut verdicts = Vec::new();
    for line in output.iter().skip_while(|l| !l.starts_with("  ")) {
        let Some(rest) = line.strip_prefix("  ") else {
            break;
        };
        let Some((property, verdict)) = rest.split_once("  ") else {
            break;
        };
        let (property, verdict) = (property.trim(), verdict.trim());
        let named = !property.is_empty()
            && property
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        const VERDICTS: [&str; 5] = [
            "holds",
            "violated",
            "reached",
            "NOT reached",
            "inconclusive",
        ];
        if !named || !VERDICTS.iter().any(|v| verdict.starts_with(v)) {
            break;
        }
        verdicts.push(format!("`{property}` {verdict}"));
    }
    if verdicts.is_empty() {
        return Err(format!("no verdict lines in:\n{}", output.join("\n")));
    }
    Ok(verdicts.join("; "))
}

/// A verdicts table with its `verdicts` column as the commands fill it now.
fn regenerate_table(table: &[String]) -> Result<Vec<String>, String> {
    let header = cells(&table[0]);
    let at = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (command_at, verdicts_at) = (at("command"), at("verdicts"));
    let mut out = table[..2].to_vec();
    for line in &table[2..] {
        let mut row_cells = cells(line);
        let command = row_cells
            .get(command_at)
            .map(|c| c.trim_matches('`').to_string())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("a row without a command: {line}"))?;
        let cell = verdict_cell(&run(&command)?).map_err(|e| format!("`{command}`: {e}"))?;
        while row_cells.len() <= verdicts_at {
            row_cells.push(String::new());
        }
        row_cells[verdicts_at] = cell;
        out.push(row(&row_cells));
    }
    Ok(out)
}

/// What the test does, from `SLOTCHECK_README` (`check`, the default;
/// `check-all`; `write`; `write-fast`) and `SLOTCHECK_README_TIMINGS`.
#[derive(Clone, Copy, PartialEq)]
struct Mode {
    /// Rewrite each page instead of failing on a difference.
    write: bool,
    /// The heaviest parts it runs.
    most: Weight,
    /// Rewrite a timing block whose times alone changed (`refresh`); else
    /// the write leaves it, so that a run does not churn every time.
    timings: bool,
}

fn mode() -> Mode {
    let timings = std::env::var("SLOTCHECK_README_TIMINGS").as_deref() == Ok("refresh");
    let big = std::env::var("SLOTCHECK_README_BIG").as_deref() == Ok("1");
    let all = if big { Weight::Big } else { Weight::Slow };
    let (write, most) = match std::env::var("SLOTCHECK_README").as_deref() {
        Err(_) | Ok("") | Ok("check") => (false, Weight::Fast),
        Ok("check-all") => (false, all),
        Ok("write") => (true, all),
        Ok("write-fast") => (true, Weight::Fast),
        Ok(other) => {
            panic!("SLOTCHECK_README={other}: use check, check-all, write or write-fast")
        }
    };
    Mode {
        write,
        most,
        timings,
    }
}

/// A page of the README or the book, read whole.
fn read_page(page: &str) -> String {
    std::fs::read_to_string(Path::new(common::ROOT).join(page))
        .unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Every page, README and book alike (a page with no marker has nothing to
/// re-run, so a new page is covered the day it gets its first figure).
#[test]
fn every_generated_part_of_the_readme_is_what_its_command_prints() {
    // `SLOTCHECK_README_PAGE`: that page alone (`scripts/readme.sh --page`).
    let only = std::env::var("SLOTCHECK_README_PAGE")
        .ok()
        .filter(|p| !p.is_empty());
    let pages = common::doc_pages();
    if let Some(page) = &only {
        assert!(
            pages.contains(page),
            "SLOTCHECK_README_PAGE={page}: not one of {pages:?}"
        );
    }
    let pages: Vec<&String> = pages
        .iter()
        .filter(|p| only.as_ref().is_none_or(|o| o == *p))
        .collect();
    // The commands run one thread each (`--threads` defaults to 1), so the
    // pages are shared out among the cores: each page is its own file, and
    // a page's panic (a stale part, with its diff) is told once every page
    // has been looked at.
    let failed: Vec<&String> = common::par_map(&pages, |page| {
        let path = Path::new(common::ROOT).join(page);
        std::panic::catch_unwind(|| generated_parts_are_what_their_commands_print(&path, page))
            .is_err()
            .then_some(*page)
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(
        failed.is_empty(),
        "stale generated parts in {failed:?} (each diff above)"
    );
}

fn generated_parts_are_what_their_commands_print(path: &Path, page: &str) {
    let mode = mode();
    let readme = std::fs::read_to_string(path).unwrap();
    let mut parts = parse(page, &readme).unwrap_or_else(|e| panic!("{e}"));
    let mut stale = Vec::new();
    let mut skipped = 0;
    for part in &mut parts {
        match part {
            Part::Text(_) => {}
            Part::Block(block) => {
                if block.weight > mode.most {
                    skipped += 1;
                    continue;
                }
                let fresh = regenerate(block).unwrap_or_else(|e| panic!("{e}"));
                let mask = match (block.timing, block.counts) {
                    (true, _) => Some(mask_timing as fn(&[String]) -> Vec<String>),
                    (_, true) => Some(mask_counts as fn(&[String]) -> Vec<String>),
                    _ => None,
                };
                let changed = if let Some(mask) = mask {
                    let masked = (mask(&block.body), mask(&fresh));
                    let refresh = mode.write && mode.timings && block.body != fresh;
                    (masked.0 != masked.1 || refresh).then_some(masked)
                } else {
                    (block.body != fresh).then(|| (block.body.clone(), fresh.clone()))
                };
                if let Some((old, new)) = changed {
                    stale.push(format!("{}\n{}", block.marker, diff(&old, &new)));
                    block.body = fresh;
                }
            }
            Part::Verdicts(table) => {
                if table.weight > mode.most {
                    skipped += 1;
                    continue;
                }
                let fresh = regenerate_table(&table.table).unwrap_or_else(|e| panic!("{e}"));
                if fresh != table.table {
                    stale.push(format!("{}\n{}", table.marker, diff(&table.table, &fresh)));
                    table.table = fresh;
                }
            }
        }
    }
    if mode.write {
        let text = render(&parts);
        if text != readme {
            write_whole(path, &text);
        }
        eprintln!("{page}: {} part(s) rewritten", stale.len());
        return;
    }
    if skipped > 0 {
        eprintln!("{page}: {skipped} slow or big part(s) left to scripts/readme.sh");
    }
    assert!(
        stale.is_empty(),
        "{page} differs from what its commands print now; run scripts/readme.sh to regenerate it ({} part(s); - page, + now):\n\n{}",
        stale.len(),
        stale.join("\n")
    );
}

/// Writes a page whole (a temporary file renamed over it).
fn write_whole(path: &Path, text: &str) {
    let tmp = path.with_extension("md.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn every_figure_and_sample_of_the_readme_is_generated() {
    let (mut generated, mut timing) = (0, 0);
    let mut loose = Vec::new();
    for page in common::doc_pages() {
        let text = read_page(&page);
        let parts = parse(&page, &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(render(&parts), text, "the parts are the whole of {page}");
        let page_generated = parts.iter().filter(|p| !matches!(p, Part::Text(_))).count();
        if page == "README.md" {
            // The front door's what-to-merge tables, one per model.
            assert!(
                page_generated >= 2,
                "README.md: {page_generated} generated parts"
            );
        }
        generated += page_generated;
        timing += parts
            .iter()
            .filter(|p| matches!(p, Part::Block(b) if b.timing))
            .count();
        loose.extend(loose_figures(&page, &parts));
        // A clone stands alone: nothing outside the repository is pointed to.
        for outside in ["../shared", "shared/docs", "shared/seeds"] {
            assert!(!text.contains(outside), "{page} points to {outside}");
        }
    }
    assert!(generated >= 10, "{generated} generated parts");
    assert!(timing >= 2, "the benchmarks are timing blocks: {timing}");
    assert!(
        loose.is_empty(),
        "figures outside a generated part (mark them with their command):\n{}",
        loose.join("\n")
    );
    // Each model's page is one link from the front door.
    let readme = read_page("README.md");
    for page in ["docs/stovepipe.md", "docs/link.md"] {
        assert!(
            readme.contains(&format!("]({page})")),
            "README.md links {page}"
        );
    }
}

/// Outside the generated parts: no sample output, no step count, no rate
/// (what went stale before). A figure belongs in a generated part.
fn loose_figures(page: &str, parts: &[Part]) -> Vec<String> {
    let mut loose = Vec::new();
    let mut line_number = 1;
    for part in parts {
        if let Part::Text(text) = part {
            for line in text.lines() {
                let sample = line.starts_with("$ slotcheck");
                let steps = line.contains(" steps)") && line.contains('(') && {
                    let before = line.split(" steps)").next().unwrap();
                    before.ends_with(|c: char| c.is_ascii_digit())
                };
                let rate = line.contains(" runs/s") || line.contains(" states/s");
                if sample || steps || rate {
                    loose.push(format!("{page}:{line_number}: {line}"));
                }
                line_number += 1;
            }
        } else {
            line_number += render(std::slice::from_ref(part)).lines().count();
        }
    }
    loose
}

#[test]
fn markers_tables_masks_and_diffs_work_as_documented() {
    let readme = "intro\n<!-- generated: echo hi -->\n```text\n$ echo hi\nhi\n```\n<!-- end -->\n\
<!-- timing, slow: printf '1.5 s\\n' -->\n```text\nold\n```\n<!-- end -->\n\
<!-- generated verdicts -->\n| claim | command | verdicts |\n|---|---|---|\n| a | `x` | old |\n<!-- end -->\nend\n";
    let parts = parse("test.md", readme).unwrap();
    assert_eq!(render(&parts), readme);
    let Part::Block(block) = &parts[1] else {
        panic!("{parts:?}")
    };
    assert_eq!(regenerate(block).unwrap(), block.body, "hi is still hi");
    let Part::Block(slow) = &parts[2] else {
        panic!("{parts:?}")
    };
    assert!(slow.weight == Weight::Slow && slow.timing);
    assert_eq!(regenerate(slow).unwrap()[1], "1.5 s");
    assert!(
        matches!(&parts[3], Part::Verdicts(v) if v.weight == Weight::Fast && v.table.len() == 3)
    );
    let big = parse(
        "test.md",
        "<!-- timing, big: x -->\n```text\n```\n<!-- end -->\n",
    )
    .unwrap();
    assert!(matches!(&big[0], Part::Block(b) if b.weight == Weight::Big && b.command == "x"));

    assert!(parse("test.md", "<!-- generated: x -->\n```\n```\n")
        .unwrap_err()
        .contains("no `<!-- end -->`"));
    assert!(
        parse("test.md", "<!-- generated: x -->\ntext\n<!-- end -->\n")
            .unwrap_err()
            .contains("one fenced block")
    );
    assert!(parse("test.md", "<!-- timing -->\n")
        .unwrap_err()
        .contains("names its command"));
    assert!(parse("test.md", "<!-- generated sometimes: x -->\n")
        .unwrap_err()
        .contains("not a marker"));
    assert!(parse("test.md", "<!-- end -->\n")
        .unwrap_err()
        .contains("without a marker"));
    assert!(run("exit 2").unwrap_err().contains("failed"));

    let output: Vec<String> = [
        "slotcheck check: claim-first on stovepipe, requests 1",
        "",
        "  no-wedge              violated (8 steps)",
        "  some-held             reached",
        "  (why a witness matters: not a verdict line)",
        "",
        "design                states      unique",
        "  1. not a verdict",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        verdict_cell(&output).unwrap(),
        "`no-wedge` violated (8 steps); `some-held` reached"
    );
    assert_eq!(
        cells("| a | `--format mermaid\\|svg` | c |"),
        ["a", "`--format mermaid\\|svg`", "c"]
    );

    let lines = |text: &str| -> Vec<String> { text.lines().map(str::to_string).collect() };
    assert_eq!(
        mask_timing(&lines(
            "simulate: 80000 runs, 1436972 states in 0.24 s (327589 runs/s, 5884208 states/s); shrinking 0.73 s\n\
design        mode        runs      states      runs/s      states/s\n\
claim-first   plain       2000       51690      175352       4531976\n\
\n\
after-1649            103887       68427      22      0.03    R2 1,566,124\n\
\n\
bounds    design            unique      states    states/s  peak MiB verdict s 1st viol. s\n\
N1 c1 s0  owner-keyed           93         156     1084049       4.9      0.00           -"
        )),
        lines(
            "simulate: 80000 runs, 1436972 states in # s (# runs/s, # states/s); shrinking # s\n\
design mode runs states runs/s states/s\n\
claim-first plain 2000 51690 # #\n\
\n\
after-1649 103887 68427 22 # R2 1,566,124\n\
\n\
bounds design unique states states/s peak MiB verdict s 1st viol. s\n\
N1 c1 s0 owner-keyed 93 156 # # # -"
        ),
        "counts stay, times and rates go"
    );

    assert_eq!(
        mask_counts(&lines(
            "claim-first   3   60   1,234  2  run 2: no-wedge\nafter-1649 R3 0.5 s"
        )),
        lines("claim-first # # # # run #: no-wedge\nafter-1649 R3 # s"),
        "every count goes, names stay"
    );
    assert_eq!(
        mask_counts(&lines("fail-open  none in 20   run 5")),
        mask_counts(&lines("fail-open  run 8   run 1")),
        "a steer table's cell: the run, or none within the runs"
    );
    let counts = parse(
        "test.md",
        "<!-- counts, slow: x -->\n```text\n```\n<!-- end -->\n",
    )
    .unwrap();
    assert!(
        matches!(&counts[0], Part::Block(b) if b.counts && !b.timing && b.weight == Weight::Slow)
    );

    assert_eq!(
        diff(&lines("a\nb\nc"), &lines("a\nB\nc\nd")),
        "- b\n+ B\n+ d\n"
    );
}
