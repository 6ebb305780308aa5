//! The rooms of `src/` and the one way data flows through them: each room
//! uses only the rooms before it in `ROOMS` (so no two import each other in
//! a circle), and no generic room names a specific model.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom up, as `src/lib.rs`'s module comment lists them.
const ROOMS: [&str; 9] = [
    "check", "report", "models", "simulate", "mutate", "scenario", "explore", "validate",
    "commands",
];

/// The rooms that use no other room at all.
const GROUND: [&str; 2] = ["check", "models"];

/// The rooms that may not name a model (they reach one through the
/// `ToolModel` trait and the registry).
const GENERIC: [&str; 6] = [
    "check", "report", "simulate", "mutate", "scenario", "validate",
];

/// The room a file of `src/` belongs to (`src/simulate/swarm.rs`: simulate).
fn room_of(src: &Path, file: &Path) -> Option<&'static str> {
    let first = file.strip_prefix(src).ok()?.components().next()?;
    let name = first.as_os_str().to_str()?.trim_end_matches(".rs");
    ROOMS.iter().copied().find(|&r| r == name)
}

/// The rooms a file's code names after `crate::` (in paths and in `use
/// crate::{...}` groups).
fn rooms_used(code: &str) -> BTreeSet<&'static str> {
    let mut used = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group
                .split(',')
                .map(|item| item.trim().split("::").next().unwrap_or("").trim())
                .collect()
        } else {
            vec![rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")]
        };
        used.extend(ROOMS.iter().copied().filter(|r| names.contains(r)));
    }
    used
}

#[test]
fn each_room_uses_only_the_rooms_below_it() {
    let src = Path::new(common::ROOT).join("src");
    let mut all = Vec::new();
    common::rust_files(&src, &mut all);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &all {
        let Some(room) = room_of(&src, file) else {
            continue;
        };
        seen.insert(room);
        let rank = ROOMS.iter().position(|&r| r == room).unwrap();
        for used in rooms_used(&common::code_without_comments(file)) {
            let below = ROOMS.iter().position(|&r| r == used).unwrap();
            if below > rank {
                wrong.push(format!("{} uses {used}", file.display()));
            }
        }
    }
    assert_eq!(seen.len(), ROOMS.len(), "every room has a file: {seen:?}");
    assert!(
        wrong.is_empty(),
        "a room uses one above it:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_ground_rooms_use_no_other_room() {
    let src = Path::new(common::ROOT).join("src");
    let mut all = Vec::new();
    common::rust_files(&src, &mut all);
    let wrong: Vec<String> = all
        .iter()
        .filter(|f| room_of(&src, f).is_some_and(|r| GROUND.contains(&r)))
        .flat_map(|f| {
            let room = room_of(&src, f).unwrap();
            rooms_used(&common::code_without_comments(f))
                .into_iter()
                .filter(move |&used| used != room)
                .map(move |used| format!("{} uses {used}", f.display()))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_generic_room_names_a_model() {
    let src = Path::new(common::ROOT).join("src");
    let mut all = Vec::new();
    common::rust_files(&src, &mut all);
    let mut named = Vec::new();
    for file in &all {
        if !room_of(&src, file).is_some_and(|r| GENERIC.contains(&r)) {
            continue;
        }
        // Unit tests may take a model as a fixture; the room's code may not.
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code = common::code_without_comments(file);
        let code = code.split("#[cfg(test)]\nmod tests {").next().unwrap_or("");
        for model in ["stovepipe", "link"] {
            for path in [
                format!("models::{model}"),
                format!("slotcheck_models::{model}"),
            ] {
                if code.contains(&path) {
                    named.push(format!("{} names {path}", file.display()));
                }
            }
        }
    }
    assert!(named.is_empty(), "{}", named.join("\n"));
}

#[test]
fn a_use_group_and_a_path_are_both_read() {
    let used =
        rooms_used("use crate::{check::Limits, report::whole};\nlet x = crate::models::MODELS;");
    assert_eq!(used, BTreeSet::from(["check", "models", "report"]));
}
