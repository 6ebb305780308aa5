//! Adding a stovepipe design is one constant and `check --bless`: in a
//! temporary copy of the tree, a new design (owner-keyed with the fenced
//! claim and the cancelling DLQ, parts every other design already uses) is
//! added to `DESIGNS`, the tool is built, `check --bless --design` writes
//! its expectations into the scenario files, and then the guard passes, the
//! SQL runs it with no edit in `sql/` (its parts test), and `compare` shows
//! it. Nightly only (`--ignored`): it builds the workspace again, in a
//! target folder of its own under `target/` that later runs reuse.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

const NEW_DESIGN: &str = "owner-keyed-fenced-claim-dlq-cancels";

/// The one constant, and its place in the list.
const CONSTANT: &str = r#"
/// Added by tests/add_a_design.rs in a temporary copy.
pub const OWNER_KEYED_FENCED_CLAIM_DLQ_CANCELS: Design = Design {
    name: "owner-keyed-fenced-claim-dlq-cancels",
    summary: "PR #966 with the fenced claim and the cancelling DLQ",
    change: "owner-keyed-fenced-claim and owner-keyed-dlq-cancels together.",
    cost: "as the two repairs",
    admit: Admit::FencedClaim,
    dlq: Dlq::CancelFirst,
    ..OWNER_KEYED
};
"#;

/// The working tree's files as git lists them (tracked and new), copied.
fn copy_tree(from: &Path, to: &Path) {
    let listed = Command::new("git")
        .current_dir(from)
        .args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
        ])
        .output()
        .expect("git runs");
    assert!(listed.status.success());
    for name in listed.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let source = from.join(name);
        if !source.is_file() {
            continue;
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&source, &target).unwrap();
    }
}

/// Adds the constant before the list and names it at the list's end.
fn add_the_design(root: &Path) {
    let path = root.join("models/src/stovepipe/design.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = text
        .split_once("pub static DESIGNS: [Design; ")
        .expect("design.rs lists DESIGNS");
    let (count, rest) = rest.split_once(']').unwrap();
    let count: usize = count.parse().unwrap();
    let (list, tail) = rest.split_once("];").unwrap();
    let text = format!(
        "{head}{CONSTANT}\npub static DESIGNS: [Design; {}]{list}    OWNER_KEYED_FENCED_CLAIM_DLQ_CANCELS,\n];{tail}",
        count + 1
    );
    std::fs::write(&path, text).unwrap();
}

fn run(root: &Path, target: &Path, program: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(program)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[test]
#[ignore = "nightly: builds the workspace again in a temporary copy"]
fn adding_a_design_is_one_constant_and_a_bless() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let copy = common::scratch("add-a-design", "tree");
    let root = copy.as_path();
    copy_tree(&here, root);
    add_the_design(root);
    let target = here.join("target/add-a-design");
    let cargo = env!("CARGO");
    let (code, out) = run(root, &target, cargo, &["build", "--release", "--offline"]);
    assert_eq!(code, 0, "the copy builds with the new design:\n{out}");
    let bin = target.join("release/slotcheck");
    let bin = bin.to_str().unwrap();

    // Before the bless the whole guard (no file named) refuses a design no
    // scenario expects.
    let (code, out) = run(
        root,
        &target,
        bin,
        &["check", "--skip-slow", "--threads", "2"],
    );
    assert_ne!(code, 0, "the guard refuses the unexpected design:\n{out}");
    assert!(out.contains(NEW_DESIGN), "{out}");

    let (code, out) = run(
        root,
        &target,
        bin,
        &[
            "check",
            "--bless",
            "--skip-slow",
            "--threads",
            "2",
            "--design",
            NEW_DESIGN,
            "scenarios",
        ],
    );
    assert_eq!(code, 0, "the bless runs:\n{out}");
    assert!(out.contains(&format!("[expect.{NEW_DESIGN}]")), "{out}");

    let (code, out) = run(
        root,
        &target,
        bin,
        &["check", "--skip-slow", "--threads", "2"],
    );
    assert_eq!(code, 0, "after the bless the guard passes:\n{out}");

    let (code, out) = run(
        root,
        &target,
        bin,
        &["compare", "--quiet", "--threads", "2"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(NEW_DESIGN), "compare shows the design:\n{out}");

    // The SQL reads the design's parts: nothing to edit in sql/.
    let (code, out) = run(
        root,
        &target,
        cargo,
        &[
            "test",
            "--release",
            "--offline",
            "-p",
            "slotcheck-sql",
            "--lib",
            "parts",
        ],
    );
    assert_eq!(code, 0, "sql/ runs the new design unedited:\n{out}");
}
