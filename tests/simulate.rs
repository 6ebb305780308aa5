//! `simulate`, `replay` and `merge` end to end: determinism, the contract's
//! claims found from a fixed seed, shards that add up to the single run.

use crate::common;

use crate::common::slotcheck;
use slotcheck::check::{check, Limits};
use slotcheck::commands::simulate_bench::claims;
use slotcheck::simulate::replay::{replay_document, replay_file};
use slotcheck::simulate::{merge, simulate, swarm_ranges, Report, Settings, Timing};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
use std::path::PathBuf;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("sim", name)
}

fn plain(seed: u64, runs: u64, out: Option<PathBuf>) -> Settings {
    Settings {
        shrink: true,
        shrink_states: 50_000,
        out,
        ..Settings::new(seed, runs, 500)
    }
}

#[test]
fn the_same_seed_and_options_give_byte_identical_output() {
    let dir = scratch("determinism");
    let out = dir.to_str().unwrap();
    let args = [
        "simulate",
        "--swarm",
        "--runs",
        "400",
        "--seed",
        "11",
        "--shrink-states",
        "5000",
        "--out",
        out,
    ];
    let first = slotcheck(&args);
    let second = slotcheck(&args);
    assert_eq!(first.status.code(), Some(1), "these runs find violations");
    assert!(!first.stdout.is_empty());
    assert_eq!(first.stdout, second.stdout);
    let text = String::from_utf8(first.stdout).unwrap();
    assert!(text.contains("seed 11"), "the seed is printed: {text}");
    let json = |extra: &str| {
        let mut a = args.to_vec();
        a.push("--json");
        if !extra.is_empty() {
            a.push(extra);
        }
        slotcheck(&a).stdout
    };
    assert_eq!(json(""), json(""));
    // Another seed walks elsewhere.
    let other = slotcheck(&[
        "simulate",
        "--swarm",
        "--runs",
        "400",
        "--seed",
        "12",
        "--shrink-states",
        "5000",
        "--out",
        out,
    ]);
    assert_ne!(other.stdout, text.as_bytes());
}

/// Runs from seed 0 within which each claim must be found (SP-OCT-005's
/// stolen slot first shows at run 14,489).
const RUNS_PER_CLAIM: u64 = 30_000;

#[test]
fn a_fixed_seed_finds_every_claim_of_the_contract_within_a_fixed_number_of_runs() {
    let dir = scratch("claims");
    // claim-first's over-admission on three requests (SP-OCT-005's second
    // half) is left to `simulate --bench`: uniform walks meet it about once
    // in 300,000 runs, too many for a test (README, "Simulation").
    let claims = claims()
        .into_iter()
        .filter(|c| !(c.design == "claim-first" && c.property == "builds-within-limit"));
    for claim in claims {
        let model = Stovepipe::new(design_named(claim.design).unwrap(), claim.bounds);
        let settings = plain(0, RUNS_PER_CLAIM, Some(dir.to_path_buf()));
        let run = simulate(&model, &settings, &mut Timing::default()).unwrap();
        let found = run
            .report
            .violations
            .iter()
            .find(|v| v.property == claim.property)
            .unwrap_or_else(|| {
                panic!(
                    "{}: {} not found in {RUNS_PER_CLAIM} runs",
                    claim.name, claim.property
                )
            });
        // Shrinking ends no longer than the exhaustive check's shortest
        // counterexample on the claim's bounds.
        let shortest = check(model, &[claim.property], &Limits::default());
        let shortest = shortest
            .result(claim.property)
            .unwrap()
            .trace
            .as_ref()
            .unwrap()
            .steps();
        assert!(found.shrunk_steps <= found.original_steps);
        assert!(
            found.shrunk_steps <= shortest,
            "{}: shrunk to {} steps, the shortest is {shortest}",
            claim.name,
            found.shrunk_steps
        );
        // The saved trace replays and still violates.
        let replayed = replay_file(found.trace.as_ref().unwrap().as_ref()).unwrap();
        assert!(replayed.violates, "{}: {}", claim.name, replayed.text);
    }
}

#[test]
fn sp_oct_003_is_shrunk_to_the_shortest_story() {
    // From the default bounds (two requests, a stall), the first wedge is
    // shrunk to the one-request, one-crash story the source tells.
    let model = Stovepipe::new(
        design_named("claim-first").unwrap(),
        slotcheck::models::stovepipe::DEFAULT_BOUNDS,
    );
    let run = simulate(&model, &plain(0, 200, None), &mut Timing::default()).unwrap();
    let wedge = run
        .report
        .violations
        .iter()
        .find(|v| v.property == "no-wedge")
        .unwrap();
    let smallest = Stovepipe::new(
        design_named("claim-first").unwrap(),
        Bounds {
            requests: 1,
            max_concurrent: 1,
            crashes: 1,
            stalls: 0,
            max_deliveries: 2,
        },
    );
    let shortest = check(smallest, &["no-wedge"], &Limits::default());
    let shortest = shortest
        .result("no-wedge")
        .unwrap()
        .trace
        .as_ref()
        .unwrap()
        .steps();
    assert_eq!(wedge.shrunk_steps, shortest);
    assert!(wedge.original_steps > wedge.shrunk_steps, "{wedge:?}");
    assert_eq!(wedge.bounds["requests"], 1);
    assert_eq!(wedge.bounds["stalls"], 0);
    assert!(wedge.steps.iter().any(|s| s.starts_with("crash worker")));
}

#[test]
fn owner_keyed_survives_a_long_swarm_run_under_crashes_alone() {
    let model = Stovepipe::new(design_named("owner-keyed").unwrap(), Bounds::default());
    let mut settings = plain(5, 20_000, None);
    settings.swarm = Some(swarm_ranges(&model, &["stalls=0".to_string()]).unwrap());
    settings.shrink = false;
    let run = simulate(&model, &settings, &mut Timing::default()).unwrap();
    assert_eq!(run.report.runs, 20_000);
    // The contract's claim for the fix. (builds-within-limit is not part of
    // it: a dead-lettered build still runs; see the README's findings.)
    for property in ["no-wedge", "count-not-low", "count-not-high"] {
        assert!(
            !run.report.violations.iter().any(|v| v.property == property),
            "owner-keyed violates {property} under crashes alone: {:?}",
            run.report.violations
        );
    }
    // And the runs did reach the interesting places.
    for w in &run.report.witnesses {
        assert!(w.runs > 0, "{} never reached", w.property);
    }
}

#[test]
fn four_merged_shards_equal_the_single_run() {
    let dir = scratch("shards");
    let out = dir.to_str().unwrap();
    let base = [
        "simulate",
        "--swarm",
        "--runs",
        "300",
        "--seed",
        "9",
        "--shrink-states",
        "5000",
        "--json",
        "--out",
        out,
    ];
    let single = slotcheck(&base);
    let mut files = Vec::new();
    for i in 1..=4 {
        let shard = format!("{i}/4");
        let mut args = base.to_vec();
        args.extend(["--shard", shard.as_str()]);
        let output = slotcheck(&args);
        let file = dir.join(format!("shard{i}.json"));
        std::fs::write(&file, &output.stdout).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = slotcheck(&args);
    assert_eq!(
        String::from_utf8(merged.stdout).unwrap(),
        String::from_utf8(single.stdout.clone()).unwrap()
    );
    let report: Report = serde_json::from_slice(&single.stdout).unwrap();
    assert!(report.designs.iter().any(|d| !d.violations.is_empty()));
    // A shard given twice, or shards of other runs, are refused.
    let mut twice = vec!["merge", files[0].as_str(), files[0].as_str()];
    assert_eq!(slotcheck(&twice).status.code(), Some(2));
    twice.truncate(2);
    // Three of four shards merge into a partial report that says so.
    let partial: Vec<Report> = files[..3]
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect();
    let partial = merge(&partial).unwrap();
    assert_eq!(partial.shard.unwrap().covered, vec![1, 2, 3]);
}

#[test]
fn seed_and_run_reproduce_one_run_exactly() {
    let model = Stovepipe::new(
        design_named("fail-open").unwrap(),
        slotcheck::models::stovepipe::DEFAULT_BOUNDS,
    );
    let mut settings = plain(4, 500, None);
    settings.swarm = Some(swarm_ranges(&model, &[]).unwrap());
    let all = simulate(&model, &settings, &mut Timing::default()).unwrap();
    let first = &all.report.violations[0];
    settings.only_run = Some(first.first_run);
    let one = simulate(&model, &settings, &mut Timing::default()).unwrap();
    let again = one
        .report
        .violations
        .iter()
        .find(|v| v.property == first.property)
        .expect("the run alone finds it again");
    assert_eq!(again.steps, first.steps);
    assert_eq!(again.original_steps, first.original_steps);
    assert_eq!(one.report.runs, 1);
}

#[test]
fn replay_exits_1_when_violated_0_when_no_longer_and_2_on_a_bad_file() {
    let dir = scratch("replay");
    let out = dir.to_str().unwrap();
    let saved = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--property",
        "count-not-high",
        "--out",
        out,
    ]);
    assert_eq!(saved.status.code(), Some(1));
    let file = dir.join("claim-first-count-not-high-check.itf.json");
    let replayed = slotcheck(&["replay", file.to_str().unwrap()]);
    assert_eq!(replayed.status.code(), Some(1));
    let text = String::from_utf8(replayed.stdout).unwrap();
    assert!(text.contains("count-not-high violated"), "{text}");
    assert!(text.contains("also violates: no-wedge"), "{text}");
    assert!(!text.contains("differ"), "{text}");

    // The same steps on the fixed design: they still run, but no longer
    // violate.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doc["#meta"]["design"] = "owner-keyed".into();
    let fixed = replay_document(&doc);
    if let Ok(fixed) = &fixed {
        assert!(!fixed.violates);
        assert!(fixed.text.contains("no longer violated"));
    }
    let moved = dir.join("fixed.itf.json");
    std::fs::write(&moved, serde_json::to_vec(&doc).unwrap()).unwrap();
    let code = slotcheck(&["replay", moved.to_str().unwrap()])
        .status
        .code();
    assert_eq!(code, Some(if fixed.is_ok() { 0 } else { 2 }));

    // A step that is not enabled is refused, by its number.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doc["states"][3]["action"] = "step worker 7".into();
    let bad = dir.join("bad.itf.json");
    std::fs::write(&bad, serde_json::to_vec(&doc).unwrap()).unwrap();
    let refused = slotcheck(&["replay", bad.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    let error = String::from_utf8(refused.stderr).unwrap();
    assert!(error.contains("step 3"), "{error}");

    std::fs::write(&bad, b"not json").unwrap();
    assert_eq!(
        slotcheck(&["replay", bad.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

#[test]
fn a_trace_that_cannot_be_saved_does_not_lose_the_run() {
    let dir = scratch("unsaved");
    // A file where the traces' directory must go.
    let blocked = dir.join("file");
    std::fs::write(&blocked, b"in the way").unwrap();
    let bounds = Bounds {
        requests: 1,
        stalls: 0,
        ..Bounds::default()
    };
    let model = Stovepipe::new(design_named("claim-first").unwrap(), bounds);
    let settings = plain(0, 200, Some(blocked.join("traces")));
    let run = simulate(&model, &settings, &mut Timing::default()).unwrap();
    assert!(!run.report.violations.is_empty(), "the run still reports");
    assert!(run.report.violations.iter().all(|v| v.trace.is_none()));
    assert_eq!(run.write_errors.len(), run.report.violations.len());
    assert!(
        run.write_errors[0].contains("is a file, not a directory"),
        "{:?}",
        run.write_errors
    );
}

/// The cells guided runs miss within `POWER_RUNS` from seed 0, listed as
/// PCT's are. Since the link model's fetch became nats.go's (a fetch that
/// returns an earlier request's answer, the open request answered later: two
/// steps where one was), the slow answer's double run of
/// after-1649-done-key takes a step more to reach, and seed 0's ten
/// thousand runs no longer reach it; the exhaustive check does.
const NOT_YET_FOUND_BY_GUIDED: [(&str, &str); 1] =
    [("link-slow-answer-double-run", "after-1649-done-key")];

/// The cells of the what-to-merge table that the PCT scheduler does not
/// find within `POWER_RUNS` from seed 0 (README, "The simulator's power"):
/// each is found by the exhaustive check, and listed here so that this test
/// fails when one is found (remove it) or another is lost.
const NOT_YET_FOUND_BY_PCT: [(&str, &str); 2] = [
    ("SP-OCT-005-three-requests", "claim-first"),
    ("owner-keyed-stall-crash", "owner-keyed-reaping-gate"),
];

#[test]
fn pct_finds_every_finding_within_ten_thousand_runs_from_seed_0_but_the_listed_ones() {
    use slotcheck::commands::simulate_bench::{power_schedulers, POWER_RUNS};
    let dir = std::path::Path::new(common::ROOT).join("scenarios");
    let files = slotcheck::scenario::files(&[dir]).unwrap();
    let scenarios = slotcheck::scenario::load_all(&files, &Default::default()).unwrap();
    let (_, pct) = power_schedulers(0)
        .into_iter()
        .find(|(name, _)| *name == "pct")
        .unwrap();
    let mut missed = Vec::new();
    let mut cells = 0;
    // The link findings are hunted too (`simulate --power`), but not yet
    // pinned: PCT misses a quarter of their cells (README, "The simulator's
    // power").
    for scenario in scenarios.iter().filter(|s| s.heading.model == "stovepipe") {
        for (design, first) in scenario.hunt(&pct, POWER_RUNS).unwrap() {
            cells += 1;
            if first.is_none() {
                missed.push((scenario.heading.id.clone(), design));
            }
        }
    }
    assert!(cells > 40, "only {cells} finding cells hunted");
    let expected: Vec<(String, String)> = NOT_YET_FOUND_BY_PCT
        .iter()
        .map(|(s, d)| (s.to_string(), d.to_string()))
        .collect();
    assert_eq!(
        missed, expected,
        "finding cells PCT misses within {POWER_RUNS} runs"
    );
}

/// Coverage-guided runs with swarm weights and PCT (`guided+all` of
/// `simulate --power`) find every finding cell of docs/findings.md and
/// docs/findings-link.md within `POWER_RUNS` from seed 0 (docs/power.md)
/// but the listed ones.
#[test]
fn guided_runs_find_every_finding_within_ten_thousand_runs_from_seed_0() {
    use slotcheck::commands::simulate_bench::{power_schedulers, POWER_RUNS};
    let dir = std::path::Path::new(common::ROOT).join("scenarios");
    let files = slotcheck::scenario::files(&[dir]).unwrap();
    let scenarios = slotcheck::scenario::load_all(&files, &Default::default()).unwrap();
    let (_, guided) = power_schedulers(0)
        .into_iter()
        .find(|(name, _)| *name == "guided+all")
        .unwrap();
    let mut missed = Vec::new();
    let mut cells = [0, 0];
    for scenario in &scenarios {
        for (design, first) in scenario.hunt(&guided, POWER_RUNS).unwrap() {
            cells[usize::from(scenario.heading.model == "link")] += 1;
            if first.is_none() {
                missed.push((scenario.heading.id.clone(), design));
            }
        }
    }
    assert!(
        cells[0] > 40 && cells[1] > 40,
        "finding cells hunted: {cells:?}"
    );
    let expected: Vec<(String, String)> = NOT_YET_FOUND_BY_GUIDED
        .iter()
        .map(|(s, d)| (s.to_string(), d.to_string()))
        .collect();
    assert_eq!(
        missed, expected,
        "finding cells guided runs miss within {POWER_RUNS} runs"
    );
}

/// A guided run depends on the runs before it: `--run N` walks them first
/// and finds what the whole range found at run N, with the same story.
#[test]
fn a_guided_run_is_reproduced_by_its_seed_and_number() {
    let model = Stovepipe::new(
        design_named("claim-first").unwrap(),
        Bounds {
            requests: 3,
            max_concurrent: 1,
            crashes: 1,
            stalls: 0,
            max_deliveries: 2,
        },
    );
    let settings = Settings {
        guided: true,
        shrink: false,
        ..plain(0, 4000, None)
    };
    let all = simulate(&model, &settings, &mut Timing::default()).unwrap();
    let again = simulate(&model, &settings, &mut Timing::default()).unwrap();
    assert_eq!(
        all.report, again.report,
        "the same seed gives the same report"
    );
    let resumed = all
        .report
        .violations
        .iter()
        .find(|v| v.drawn.contains("guided: resumed"))
        .expect("some violation is first found by a resumed run");
    let one = Settings {
        only_run: Some(resumed.first_run),
        ..settings
    };
    let one = simulate(&model, &one, &mut Timing::default()).unwrap();
    let found = one
        .report
        .violations
        .iter()
        .find(|v| v.property == resumed.property)
        .expect("the run alone finds it again");
    assert_eq!(found.steps, resumed.steps);
    assert_eq!(found.drawn, resumed.drawn);
    assert_eq!(one.report.runs, 1);
}

fn with_liveness(seed: u64, runs: u64, liveness: usize) -> Settings {
    Settings {
        liveness: Some(liveness),
        shrink: false,
        ..plain(seed, runs, None)
    }
}

#[test]
fn after_its_fault_phase_a_walk_takes_no_fault_and_a_wedge_is_a_liveness_finding() {
    use slotcheck::simulate::{run_rng, walk_live, Schedule, SETTLES};
    use stateright::Model;
    let model = Stovepipe::new(
        design_named("claim-first").unwrap(),
        Bounds {
            requests: 2,
            crashes: 2,
            stalls: 1,
            ..Bounds::default()
        },
    );
    let properties = model.properties();
    let mut unsettled = 0;
    for run in 0..300 {
        let mut rng = run_rng(5, run);
        let w = walk_live(
            &model,
            &properties,
            &mut Schedule::Uniform,
            500,
            Some(20),
            &mut rng,
        );
        let off = w.fault_phase.unwrap();
        assert!(off <= 20);
        assert!(
            w.actions.iter().skip(off).all(|a| !a.is_fault()),
            "run {run}: a fault after step {off}"
        );
        unsettled += usize::from(w.unsettled.is_some());
    }
    // claim-first wedges under a crash (SP-OCT-003): some walks cannot settle.
    assert!(unsettled > 0);
    let run = simulate(&model, &with_liveness(5, 300, 20), &mut Timing::default()).unwrap();
    let v = run
        .report
        .violations
        .iter()
        .find(|v| v.property == SETTLES)
        .expect("a liveness finding");
    assert!(v.explanation.contains("not terminal"), "{}", v.explanation);
    assert!(v.drawn.contains("faults off after step"), "{}", v.drawn);
}

#[test]
fn the_recommended_design_settles_after_every_fault_phase_of_a_swarm() {
    let model = Stovepipe::new(
        design_named("owner-keyed-atomic-admit-dlq-cancels").unwrap(),
        Bounds::default(),
    );
    let settings = Settings {
        swarm: Some(swarm_ranges(&model, &[]).unwrap()),
        ..with_liveness(0, 3000, 60)
    };
    let run = simulate(&model, &settings, &mut Timing::default()).unwrap();
    let broken: Vec<&str> = run
        .report
        .violations
        .iter()
        .map(|v| v.property.as_str())
        .collect();
    assert!(broken.is_empty(), "{broken:?}");
    assert_eq!(run.report.runs, 3000);
}
