//! `simulate`, `replay` and `check --out` on the link model: the source's
//! duplicate run found from a fixed seed, the same bytes twice, saved traces
//! that replay, shards that add up to the single run.

use crate::common;

use crate::common::slotcheck;
use slotcheck::models::link::DEFAULT_BOUNDS;
use slotcheck::models::ModelBounds;
use slotcheck::simulate::replay::replay_file;
use slotcheck::simulate::{merge, simulate, simulate_all, swarm_ranges, Settings, Shard, Timing};
use slotcheck_models::link::{design_named, Link, NO_DOUBLE_RUN};
use std::path::PathBuf;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("link", name)
}

fn link(design: &str) -> Link {
    Link::new(design_named(design).unwrap(), DEFAULT_BOUNDS)
}

fn swarm(seed: u64, runs: u64, shard: Shard, out: Option<PathBuf>) -> Settings {
    Settings {
        swarm: Some(swarm_ranges(&link("before-1649"), &[]).unwrap()),
        shard,
        shrink: true,
        shrink_states: 20_000,
        out,
        ..Settings::new(seed, runs, 500)
    }
}

/// Swarm runs from seed 0 within which before-1649's duplicate run must show
/// (it first does at run 224; uniform walks on the default bounds end builds
/// too soon to meet it in 2,000).
const RUNS: u64 = 1000;

#[test]
fn a_fixed_seed_finds_the_duplicate_run_of_before_1649_and_its_trace_replays() {
    let dir = scratch("double-run");
    let model = link("before-1649");
    let run = simulate(
        &model,
        &swarm(0, RUNS, Shard::WHOLE, Some(dir.to_path_buf())),
        &mut Timing::default(),
    )
    .unwrap();
    let found = run
        .report
        .violations
        .iter()
        .find(|v| v.property == NO_DOUBLE_RUN)
        .unwrap_or_else(|| panic!("no-double-run not found in {RUNS} swarm runs"));
    assert_eq!(found.first_run, 224);
    assert!(found.shrunk_steps <= found.original_steps);
    assert!(found.explanation.contains("is built by b"), "{found:?}");
    // The saved trace replays to the same violation, from its own clock
    // offsets.
    let trace = PathBuf::from(found.trace.as_ref().expect("saved"));
    let replayed = replay_file(&trace).unwrap();
    assert!(replayed.violates, "{}", replayed.text);
    assert!(!replayed.text.contains("note:"), "{}", replayed.text);
    let out = slotcheck(&["replay", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("no-double-run violated at t="));
}

#[test]
fn the_same_seed_gives_byte_identical_output_and_traces_that_replay() {
    let dir = scratch("determinism");
    let out = dir.to_str().unwrap();
    let args = [
        "simulate",
        "--model",
        "link",
        "--swarm",
        "--design",
        "before-1649",
        "--design",
        "after-1649",
        "--runs",
        "600",
        "--seed",
        "0",
        "--shrink-states",
        "20000",
        "--out",
        out,
    ];
    let first = slotcheck(&args);
    let second = slotcheck(&args);
    assert_eq!(first.status.code(), Some(1), "these runs find violations");
    assert_eq!(first.stdout, second.stdout);
    let text = String::from_utf8(first.stdout).unwrap();
    assert!(
        text.starts_with("slotcheck simulate: link, seed 0"),
        "{text}"
    );
    assert!(
        text.contains("--model link"),
        "reproduce commands name the model"
    );
    let traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!traces.is_empty());
    for trace in traces {
        let replayed = slotcheck(&["replay", trace.to_str().unwrap()]);
        assert_eq!(replayed.status.code(), Some(1), "{}", trace.display());
    }
}

#[test]
fn check_out_saves_link_traces_that_replay() {
    let dir = scratch("check-out");
    let checked = slotcheck(&[
        "check",
        "--model",
        "link",
        "--design",
        "before-1649",
        "--property",
        "no-double-run",
        "--skew",
        "0",
        "--late-heartbeats",
        "0",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(checked.status.code(), Some(1));
    let trace = dir.join("before-1649-no-double-run-check.itf.json");
    let replayed = slotcheck(&["replay", trace.to_str().unwrap()]);
    assert_eq!(replayed.status.code(), Some(1));
}

#[test]
fn four_merged_shards_equal_the_single_run() {
    let models = [link("before-1649"), link("check-only")];
    let report = |shard: Shard| {
        simulate_all(&models, &swarm(5, 400, shard, None), &mut Timing::default())
            .unwrap()
            .0
    };
    let whole = report(Shard::WHOLE);
    assert!(whole.designs.iter().any(|d| !d.violations.is_empty()));
    let shards: Vec<_> = (1..=4)
        .map(|index| report(Shard { index, count: 4 }))
        .collect();
    assert_eq!(merge(&shards).unwrap(), whole);
}

#[test]
fn flags_of_the_other_model_and_stovepipe_bounds_are_refused() {
    let fails = |args: &[&str], says: &str| {
        let out = slotcheck(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: {err}");
    };
    fails(
        &["simulate", "--model", "link", "--requests", "3"],
        "--requests only for --model stovepipe",
    );
    fails(&["simulate", "--skew", "5"], "--skew only for --model link");
    fails(
        &[
            "simulate", "--model", "link", "--swarm", "--range", "stalls=0",
        ],
        "unknown bound `stalls`",
    );
    fails(
        &["simulate", "--model", "link", "--design", "claim-first"],
        "unknown design `claim-first`",
    );
    // A time bound is drawn in ticks; the model's own limit still applies.
    fails(
        &[
            "simulate",
            "--model",
            "link",
            "--swarm",
            "--range",
            "skew_ticks=30",
        ],
        "skew must be at most 120 s",
    );
    assert!(link("after-1649").with_bounds(&[("skew_ticks", 7)]).is_ok());
}
