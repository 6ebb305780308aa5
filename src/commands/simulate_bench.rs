//! `slotcheck simulate --bench` (and the end of `slotcheck bench`): the
//! stovepipe contract's claims as a simulation finds them, runs per second
//! per design, and the exhaustive check of the same bounds for comparison.
//! Stovepipe's own measurement, as `bench.rs` is.

use crate::check::{check, Limits};
use crate::models::ModelBounds;
use crate::models::{ModelArgs, ToolModel};
use crate::simulate::shrink;
use crate::simulate::{
    plan, run_rng, simulate, swarm_ranges, walk, PctSettings, Schedule, Settings, Timing,
};
use slotcheck_models::stovepipe::{
    design_named, Action, Bounds, Stovepipe, BUILDS_WITHIN_LIMIT, COUNT_NOT_HIGH, COUNT_NOT_LOW,
    DESIGNS, NO_WEDGE,
};
use stateright::{Model, Property};
use std::ops::RangeInclusive;
use std::time::Instant;

/// A claim of the contract, as a simulation finds it.
pub struct Claim {
    pub name: &'static str,
    pub design: &'static str,
    pub bounds: Bounds,
    pub property: &'static str,
}

/// The contract's claims, each on the smallest bounds the contract names.
pub const fn claims() -> [Claim; 6] {
    [
        Claim {
            name: "SP-OCT-003 wedge",
            design: "claim-first",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: NO_WEDGE,
        },
        Claim {
            name: "SP-OCT-003 count high",
            design: "claim-first",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: COUNT_NOT_HIGH,
        },
        Claim {
            name: "SP-OCT-005 count low",
            design: "claim-first",
            bounds: Bounds {
                requests: 2,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: COUNT_NOT_LOW,
        },
        Claim {
            name: "SP-OCT-005 over-admits",
            design: "claim-first",
            bounds: Bounds {
                requests: 3,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: BUILDS_WITHIN_LIMIT,
        },
        Claim {
            name: "fail-open two heads",
            design: "fail-open",
            bounds: Bounds {
                requests: 2,
                max_concurrent: 1,
                crashes: 0,
                stalls: 0,
                max_deliveries: 2,
            },
            property: BUILDS_WITHIN_LIMIT,
        },
        Claim {
            name: "fail-open residual",
            design: "fail-open",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 0,
                stalls: 1,
                max_deliveries: 2,
            },
            property: COUNT_NOT_HIGH,
        },
    ]
}

/// The first run (from `seed`, on the claim's bounds; with `swarm`, each
/// run draws its weights over action kinds) that violates the claim's
/// property within `max_runs`, with the walk up to the violation.
pub fn first_violating_run(
    claim: &Claim,
    seed: u64,
    swarm: bool,
    depth: usize,
    max_runs: u64,
) -> Option<(u64, Vec<Action>)> {
    let model = Stovepipe::new(design_named(claim.design)?, claim.bounds);
    let properties: Vec<Property<Stovepipe>> = model
        .properties()
        .into_iter()
        .filter(|p| p.name == claim.property)
        .collect();
    // The claim's bounds as one-value ranges: only the weights vary.
    let fixed: Vec<(String, RangeInclusive<u32>)> = model
        .bound_values()
        .into_iter()
        .map(|(n, v)| (n.to_string(), v..=v))
        .collect();
    (0..max_runs).find_map(|run| {
        let mut rng = run_rng(seed, run);
        let (model, weights) = plan(&model, swarm.then_some(&fixed[..]), &mut rng).ok()?;
        let mut schedule = Schedule::of_run(None, weights, &mut rng);
        let w = walk(&model, &properties, &mut schedule, depth, &mut rng);
        let at = w.violated[0]?;
        Some((run, w.actions[..at].to_vec()))
    })
}

/// Runs per claim at most in the benchmark.
const BENCH_MAX_RUNS: u64 = 1_000_000;

/// `simulate --bench`: runs per second per design (plain on the default
/// bounds, and swarm), and the runs and time to the first violation of each
/// claim. Timings vary; the run counts do not.
pub fn bench(seed: u64) -> Result<String, String> {
    let mut out = format!("slotcheck simulate --bench (seed {seed})\n\n");
    // The longest design name sets the first column, so that every row
    // keeps its columns (and the README's check masks the rates by column).
    let width = DESIGNS.iter().map(|d| d.name.len()).max().unwrap_or(0) + 2;
    out.push_str(&format!(
        "{:<width$}{:<8}{:>8}{:>12}{:>12}{:>14}\n",
        "design", "mode", "runs", "states", "runs/s", "states/s"
    ));
    const RUNS: u64 = 2000;
    for design in DESIGNS {
        for swarm in [false, true] {
            let model = Stovepipe::new(design, crate::models::stovepipe::DEFAULT_BOUNDS);
            let settings = Settings {
                swarm: swarm.then(|| swarm_ranges(&model, &[])).transpose()?,
                ..Settings::new(seed, RUNS, 500)
            };
            let mut timing = Timing::default();
            let run = simulate(&model, &settings, &mut timing)?;
            let per = |n: u64| n as f64 / timing.walk_seconds.max(1e-9);
            out.push_str(&format!(
                "{:<width$}{:<8}{:>8}{:>12}{:>12.0}{:>14.0}\n",
                design.name,
                if swarm { "swarm" } else { "plain" },
                run.report.runs,
                run.report.states,
                per(run.report.runs),
                per(run.report.states)
            ));
        }
    }
    out.push_str(&format!(
        "\n{:<24}{:<13}{:<21}{:<7}{:>8}{:>10}{:>10}\n",
        "claim", "design", "property", "mode", "runs", "ms", "shrunk"
    ));
    for claim in claims() {
        for swarm in [false, true] {
            let started = Instant::now();
            let found = first_violating_run(&claim, seed, swarm, 500, BENCH_MAX_RUNS);
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let shrunk = match &found {
                Some((_, actions)) => {
                    let model =
                        Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
                    let init = model.initial_state();
                    let s = shrink::shrink(
                        &model,
                        &init,
                        actions,
                        claim.property,
                        50_000,
                        &Limits::default(),
                    );
                    format!("{} -> {}", actions.len(), s.actions.len())
                }
                None => "-".into(),
            };
            out.push_str(&format!(
                "{:<24}{:<13}{:<21}{:<7}{:>8}{:>10.1}{:>10}\n",
                claim.name,
                claim.design,
                claim.property,
                if swarm { "swarm" } else { "plain" },
                found.map_or(format!(">{BENCH_MAX_RUNS}"), |(r, _)| (r + 1).to_string()),
                ms,
                shrunk
            ));
        }
    }
    out.push_str(&findings_power(seed)?);
    // The exhaustive check for comparison: time to the same verdict.
    out.push_str("\nexhaustive check of the same bounds, for comparison:\n");
    for claim in claims() {
        let model = Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
        let started = Instant::now();
        let outcome = check(model, &[claim.property], &Limits::default());
        let verdict = outcome
            .result(claim.property)
            .map_or("?", |r| r.verdict.word());
        out.push_str(&format!(
            "  {:<24}{:<14}{:>10.1} ms\n",
            claim.name,
            verdict,
            started.elapsed().as_secs_f64() * 1000.0
        ));
    }
    Ok(out)
}

/// The simulator's power on every finding: for each scenario under
/// `scenarios/` that names a finding, and each design it expects to violate
/// it, the runs from `seed` to the first violation on the finding's own
/// bounds, by each scheduler (plain walks; swarm weights on the same bounds;
/// PCT of depth up to [`POWER_PCT`]; coverage-guided runs, alone and with
/// both), within [`POWER_RUNS`].
pub fn findings_power(seed: u64) -> Result<String, String> {
    let files = crate::scenario::files(&[crate::scenario::SCENARIO_DIR.into()])
        .map_err(|e| e.to_string())?;
    let scenarios =
        crate::scenario::load_all(&files, &Default::default()).map_err(|e| e.to_string())?;
    let schedulers = power_schedulers(seed);
    let mut rows: Vec<(String, String, Vec<Option<u64>>)> = Vec::new();
    for scenario in &scenarios {
        let Some(property) = scenario.heading.finding else {
            continue;
        };
        for (k, (_, settings)) in schedulers.iter().enumerate() {
            for (design, first) in scenario.hunt(settings, POWER_RUNS)? {
                let column = format!("{} {property}", scenario.heading.id);
                match rows
                    .iter_mut()
                    .find(|(c, d, _)| *c == column && *d == design)
                {
                    Some(row) => row.2.push(first),
                    None => {
                        assert_eq!(k, 0, "every scheduler hunts the same cells");
                        rows.push((column, design, vec![first]));
                    }
                }
            }
        }
    }
    let wf = rows.iter().map(|r| r.0.len()).max().unwrap_or(0) + 2;
    let wd = rows.iter().map(|r| r.1.len()).max().unwrap_or(0) + 2;
    let mut out = format!(
        "\nruns to the first violation of every finding (its own bounds, seed {seed}, at most {POWER_RUNS}):\n{:<wf$}{:<wd$}",
        "finding", "design"
    );
    for (name, _) in &schedulers {
        out.push_str(&format!("{name:>11}"));
    }
    out.push('\n');
    let mut missed = vec![0; schedulers.len()];
    for (column, design, firsts) in &rows {
        out.push_str(&format!("{column:<wf$}{design:<wd$}"));
        for (k, first) in firsts.iter().enumerate() {
            let cell = match first {
                Some(run) => (run + 1).to_string(),
                None => {
                    missed[k] += 1;
                    format!(">{POWER_RUNS}")
                }
            };
            out.push_str(&format!("{cell:>11}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:<w$}", "not found", w = wf + wd));
    for m in missed {
        out.push_str(&format!("{:>11}", format!("{m} of {}", rows.len())));
    }
    out.push('\n');
    Ok(out)
}

/// The run budget the simulator's power is judged on.
pub const POWER_RUNS: u64 = 10_000;
/// The PCT depth of the power table and its test.
pub const POWER_PCT: u32 = 3;

/// The schedulers the power table compares, by name: swarm and PCT keep
/// each scenario's bounds (every range one value), so only the schedule
/// differs. `guided+all` ([`crate::simulate::guided`] with swarm weights
/// and PCT) is the one judged on every finding.
pub fn power_schedulers(seed: u64) -> Vec<(&'static str, Settings)> {
    let base = Settings::new(seed, POWER_RUNS, 500);
    let fixed_swarm = |s: Settings| Settings {
        swarm: Some(Vec::new()),
        ..s
    };
    let pct = Settings {
        pct: Some(PctSettings {
            depth: POWER_PCT,
            horizon: crate::simulate::pct::DEFAULT_HORIZON,
        }),
        ..base.clone()
    };
    let guided = |s: Settings| Settings { guided: true, ..s };
    vec![
        ("plain", base.clone()),
        ("swarm", fixed_swarm(base.clone())),
        ("pct", pct.clone()),
        ("swarm+pct", fixed_swarm(pct.clone())),
        ("guided", guided(base.clone())),
        ("guided+all", guided(fixed_swarm(pct))),
    ]
}

/// `simulate --bench`: the stovepipe model's claims; under another model an
/// error, once its flags are read as every command reads them.
pub fn run<M: ToolModel>(flags: &ModelArgs, seed: u64) -> Result<u8, String> {
    if M::NAME != Stovepipe::NAME {
        M::from_flags(flags, M::design_names()[0])?;
        return Err(format!(
            "--bench measures the stovepipe model's claims; leave out --model {}",
            M::NAME
        ));
    }
    print!("{}", bench(seed)?);
    Ok(0)
}
