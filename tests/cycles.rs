//! No two files of a source tree import each other in a circle, directly or
//! through others: in each tree below, the graph of which file names which
//! other module's file has no strongly connected component of more than one
//! file. (A circle makes the files one lump: none can be read, tested or
//! moved without the others.)
//!
//! The reading is by text and approximate: a path that starts with
//! `crate::`, `super::` or `self::` (in a `use`, a `use` group or the code)
//! lands in the file of the longest module it names (`crate::a::b::F` in
//! `a/b.rs` or `a/b/mod.rs`, else in `a.rs` or `a/mod.rs`). A parent's bare
//! `child::` paths are not read: declaring children and showing their items
//! is what a parent module is for.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source trees: the models crate, the two real-system crates and the
/// tool.
const TREES: [&str; 4] = ["models/src", "sql/src", "nats/src", "src"];

type Module = Vec<String>;

/// The module a file defines: `a/b.rs` and `a/b/mod.rs` are `a::b`,
/// `lib.rs` the crate root. `main.rs` is a crate of its own (it names the
/// library as `slotcheck::`), so it has none here.
fn module_of(tree: &Path, file: &Path) -> Option<Module> {
    let relative = file.strip_prefix(tree).ok()?.with_extension("");
    let mut module: Module = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    match module.last().map(String::as_str) {
        Some("main") if module.len() == 1 => return None,
        Some("lib") if module.len() == 1 => module.clear(),
        Some("mod") => {
            module.pop();
        }
        _ => {}
    }
    Some(module)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads a path or `use` tree from the start of `text` (`a::b`, `a::{b,
/// c::d}`), adding each whole path to `out`; returns what is left after it.
fn read_tree<'t>(text: &'t str, prefix: &[String], out: &mut Vec<Module>) -> &'t str {
    let mut path = prefix.to_vec();
    let mut rest = text.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            rest = group;
            loop {
                rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix('}') {
                    return after;
                }
                rest = read_tree(rest, &path, out).trim_start();
                match rest.strip_prefix(',') {
                    Some(after) => rest = after,
                    None => return rest.strip_prefix('}').unwrap_or(rest),
                }
            }
        }
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end > 0 {
            path.push(rest[..end].to_string());
        }
        rest = &rest[end..];
        match rest.trim_start().strip_prefix("::") {
            Some(after) if end > 0 => rest = after.trim_start(),
            _ => {
                out.push(path);
                // `a::B as C`: the new name is not a path.
                return match rest.trim_start().strip_prefix("as ") {
                    Some(renamed) => renamed.trim_start().trim_start_matches(is_ident),
                    None => rest,
                };
            }
        }
    }
}

/// The modules (and the items in them) a file's code names, made absolute:
/// `module` is the file's own. Inside an inline `mod name {` (a file's
/// tests), `super::` is the file's module again.
fn named(module: &[String], code: &str) -> Vec<Module> {
    let mut out = Vec::new();
    let mut here = module.to_vec();
    let mut start = 0;
    for line in code.split_inclusive('\n') {
        let at = start;
        start += line.len();
        let line = line.trim_end();
        if line.starts_with("mod ") || line.starts_with("pub mod ") {
            if let Some(name) = line.strip_suffix('{') {
                here.push(name.split_whitespace().last().unwrap().to_string());
            }
        } else if line == "}" {
            here.truncate(module.len());
        }
        for keyword in ["crate::", "super::", "self::"] {
            for (i, _) in line.match_indices(keyword) {
                let before = line[..i].chars().next_back();
                if before.is_some_and(|c| is_ident(c) || c == '$') {
                    continue;
                }
                // From the line on: a `use` group may span lines.
                let mut paths = Vec::new();
                read_tree(&code[at + i..], &[], &mut paths);
                out.extend(paths.iter().map(|path| absolute(&here, path)));
            }
        }
    }
    out
}

/// A path as the crate sees it, from the module it is written in.
fn absolute(here: &[String], path: &[String]) -> Module {
    let mut module = here.to_vec();
    for segment in path {
        match segment.as_str() {
            "crate" => module.clear(),
            "super" => {
                module.pop();
            }
            "self" => {}
            _ => module.push(segment.clone()),
        }
    }
    module
}

/// The circles of a tree: each group of two or more files that reach each
/// other through what they name, each file with the others it names.
fn circles(tree: &Path) -> Vec<Vec<(PathBuf, Vec<PathBuf>)>> {
    let mut all = Vec::new();
    common::rust_files(tree, &mut all);
    let modules: BTreeMap<Module, PathBuf> = all
        .iter()
        .filter_map(|f| Some((module_of(tree, f)?, f.clone())))
        .collect();
    // Which file names which: each path lands in its longest module.
    let mut names: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> = BTreeMap::new();
    for (module, file) in &modules {
        let used = names.entry(file).or_default();
        for path in named(module, &common::code_without_comments(file)) {
            let landed = (0..=path.len())
                .rev()
                .find_map(|n| modules.get(&path[..n]))
                .unwrap();
            if landed != file {
                used.insert(landed);
            }
        }
    }
    // The files each file reaches; two that reach each other share a
    // circle. (A few hundred files: a walk from each is quick enough.)
    let reach = |from: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut next = vec![from];
        while let Some(file) = next.pop() {
            for &used in &names[file] {
                if seen.insert(used) {
                    next.push(used);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> =
        names.keys().map(|&f| (f, reach(f))).collect();
    let mut circles = Vec::new();
    let mut placed = BTreeSet::new();
    for (&file, reaches) in &reached {
        if placed.contains(file) || !reaches.contains(file) {
            continue;
        }
        let circle: BTreeSet<&PathBuf> = reaches
            .iter()
            .copied()
            .filter(|other| reached[other].contains(file))
            .collect();
        placed.extend(circle.iter().copied());
        let named_in_circle = |f: &PathBuf| -> Vec<PathBuf> {
            names[f].intersection(&circle).map(|&g| g.clone()).collect()
        };
        circles.push(
            circle
                .iter()
                .map(|&f| (f.clone(), named_in_circle(f)))
                .collect(),
        );
    }
    circles
}

#[test]
fn no_two_files_of_a_tree_import_each_other_in_a_circle() {
    let root = Path::new(common::ROOT);
    let mut found = Vec::new();
    for tree in TREES {
        for circle in circles(&root.join(tree)) {
            let shown = |f: &PathBuf| f.strip_prefix(root).unwrap().display().to_string();
            let lines: Vec<String> = circle
                .iter()
                .map(|(file, names)| {
                    let names: Vec<String> = names.iter().map(shown).collect();
                    format!("  {} names {}", shown(file), names.join(", "))
                })
                .collect();
            found.push(lines.join("\n"));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other in a circle (move what one needs \
         from the other so the names run one way):\n{}",
        found.join("\n\n")
    );
}

#[test]
fn paths_groups_and_super_are_read() {
    let here = ["a".to_string(), "b".to_string()];
    let found = named(
        &here,
        "use crate::{\n    x::Y as X,\n    z::{self, w::V},\n};\nlet v = super::c::f(1);\nuse self::d::*;",
    );
    let found: Vec<String> = found.iter().map(|m| m.join("::")).collect();
    assert_eq!(found, ["x::Y", "z", "z::w::V", "a::c::f", "a::b::d"]);
}

#[test]
fn inside_a_files_tests_super_is_the_file() {
    let here = ["a".to_string()];
    let found = named(&here, "mod tests {\n    use super::F;\n}\nuse super::G;");
    let found: Vec<String> = found.iter().map(|m| m.join("::")).collect();
    assert_eq!(found, ["a::F", "G"]);
}

#[test]
fn a_circle_through_three_files_is_found() {
    let tree = common::scratch("cycles", "three");
    std::fs::create_dir_all(tree.join("a")).unwrap();
    // a/mod.rs names c.rs, which names a/b.rs, which names a/mod.rs back;
    // lib.rs only declares them.
    for (file, code) in [
        ("lib.rs", "mod a;\nmod c;\n"),
        ("a/mod.rs", "mod b;\nuse crate::c::C;\n"),
        ("a/b.rs", "pub fn f() -> u8 {\n    super::A\n}\n"),
        ("c.rs", "use crate::a::b::f;\n"),
    ] {
        std::fs::write(tree.join(file), code).unwrap();
    }
    let found: Vec<Vec<String>> = circles(&tree)
        .into_iter()
        .map(|circle| {
            let files = circle.into_iter().map(|(file, _)| file);
            files
                .map(|f| f.strip_prefix(&tree).unwrap().display().to_string())
                .collect()
        })
        .collect();
    assert_eq!(found, [["a/b.rs", "a/mod.rs", "c.rs"]]);
}
