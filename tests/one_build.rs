//! The README's two commands share one build: `cargo run --release --
//! compare` (the binary and its dependencies) and `cargo test --release`
//! (every member, with the dev-dependencies) resolve the same features for
//! every crate both build, so the second compiles only the test targets. A
//! dev-dependency that turns on a feature of a shared crate would rebuild
//! that crate and everything above it; Cargo.toml names such features
//! (its "one build" block) and this test names any it misses.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package's features, as `cargo tree` resolves them for one command.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "--prefix",
            "none",
            "-f",
            "{p}|{f}",
        ])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let entry = map.entry(package.trim().to_string()).or_default();
        entry.extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(String::from),
        );
    }
    map
}

#[test]
fn run_and_test_resolve_the_same_features() {
    let run = features(&["-p", "slotcheck", "-e", "normal,build"]);
    let test = features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(
        run.len() > 50,
        "cargo tree listed the binary's dependencies"
    );
    let differ: Vec<String> = run
        .iter()
        .filter_map(|(package, features)| {
            let other = test.get(package)?;
            (features != other).then(|| {
                let only_test: Vec<_> = other.difference(features).collect();
                format!("{package}: the tests add {only_test:?}")
            })
        })
        .collect();
    assert!(
        differ.is_empty(),
        "`cargo test` would rebuild these crates that `cargo run` built; name the features in Cargo.toml's one-build block:\n{}",
        differ.join("\n")
    );
}
