//! `slotcheck simulate --bench` (and the end of `slotcheck bench`): the
//! stovepipe contract's claims as a simulation finds them, runs per second
//! per design, and the exhaustive check of the same bounds for comparison.
//! Stovepipe's own measurement, as `bench.rs` is.

use crate::check::budget::Watch;
use crate::check::{check, Cut, Limits};
use crate::models::ModelBounds;
use crate::models::{ModelArgs, ToolModel};
use crate::report::table::{Cell, Column, TextTable};
use crate::report::Style;
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

/// What of `budget` (the command's `--timeout`, `--max-memory`, a signal)
/// has run out, now. The measurements look between their runs and stop:
/// a figure a budget reached is left out, never printed cut.
fn over(budget: &Limits) -> Option<Cut> {
    Watch::new(budget, Instant::now()).over(0)
}

/// The line a measurement cut by a budget ends with.
fn cut_line(cut: Cut) -> String {
    format!(
        "inconclusive: {}: the rows above are whole, those not shown were not measured\n",
        cut.describe()
    )
}

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
    budget: &Limits,
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
    let mut watch = Watch::new(budget, Instant::now());
    (0..max_runs)
        .take_while(|_| watch.over(0).is_none())
        .find_map(|run| {
            let mut rng = run_rng(seed, run);
            let (model, weights) = plan(&model, swarm.then_some(&fixed[..]), &mut rng).ok()?;
            let mut schedule = Schedule::of_run(None, weights, &mut rng);
            let w = walk(&model, &properties, &mut schedule, depth, &mut rng);
            let at = w.violated[0]?;
            Some((run, w.actions[..at].to_vec()))
        })
}

fn mode(swarm: bool) -> &'static str {
    if swarm {
        "swarm"
    } else {
        "plain"
    }
}

/// Runs per claim at most in the benchmark.
const BENCH_MAX_RUNS: u64 = 1_000_000;

/// `simulate --bench`: runs per second per design (plain on the default
/// bounds, and swarm), and the runs and time to the first violation of each
/// claim. Timings vary; the run counts do not. Within `budget`: what it
/// cut short is left out, and the cut returned.
pub fn bench(seed: u64, budget: &Limits) -> Result<(String, Option<Cut>), String> {
    let mut out = format!("slotcheck simulate --bench (seed {seed})\n\n");
    // The rates right-aligned under their headings (the README's check
    // masks the rates by column).
    let mut rates = TextTable::new(vec![
        Column::left("design"),
        Column::left("mode").at_least(6),
        Column::right("runs").at_least(6),
        Column::right("states").at_least(10),
        Column::right("runs/s").at_least(10),
        Column::right("states/s").at_least(12),
    ]);
    const RUNS: u64 = 2000;
    for design in DESIGNS {
        for swarm in [false, true] {
            let model = Stovepipe::new(design, crate::models::stovepipe::DEFAULT_BOUNDS);
            let settings = Settings {
                swarm: swarm.then(|| swarm_ranges(&model, &[])).transpose()?,
                budget: *budget,
                ..Settings::new(seed, RUNS, 500)
            };
            if let Some(cut) = over(budget) {
                out.push_str(&rates.render(Style::plain()));
                out.push_str(&cut_line(cut));
                return Ok((out, Some(cut)));
            }
            let mut timing = Timing::default();
            let run = simulate(&model, &settings, &mut timing)?;
            if let Some(cut) = over(budget) {
                out.push_str(&rates.render(Style::plain()));
                out.push_str(&cut_line(cut));
                return Ok((out, Some(cut)));
            }
            let per = |n: u64| n as f64 / timing.walk_seconds.max(1e-9);
            rates.row(vec![
                design.name.into(),
                mode(swarm).into(),
                run.report.runs.to_string().into(),
                run.report.states.to_string().into(),
                format!("{:.0}", per(run.report.runs)).into(),
                format!("{:.0}", per(run.report.states)).into(),
            ]);
        }
    }
    out.push_str(&rates.render(Style::plain()));
    let mut firsts = TextTable::new(vec![
        Column::left("claim").at_least(22),
        Column::left("design").at_least(11),
        Column::left("property").at_least(19),
        Column::left("mode").at_least(5),
        Column::right("runs").at_least(6),
        Column::right("ms").at_least(8),
        Column::right("shrunk").at_least(8),
    ]);
    for claim in claims() {
        for swarm in [false, true] {
            let started = Instant::now();
            let found = first_violating_run(&claim, seed, swarm, 500, BENCH_MAX_RUNS, budget);
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let shrunk = match &found {
                Some((_, actions)) => {
                    let model =
                        Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
                    let init = model.initial_state();
                    let s = shrink::shrink(&model, &init, actions, claim.property, 50_000, budget);
                    format!("{} -> {}", actions.len(), s.actions.len())
                }
                None => "-".into(),
            };
            if let Some(cut) = over(budget) {
                out.push('\n');
                out.push_str(&firsts.render(Style::plain()));
                out.push_str(&cut_line(cut));
                return Ok((out, Some(cut)));
            }
            firsts.row(vec![
                claim.name.into(),
                claim.design.into(),
                claim.property.into(),
                mode(swarm).into(),
                found
                    .map_or(format!(">{BENCH_MAX_RUNS}"), |(r, _)| (r + 1).to_string())
                    .into(),
                format!("{ms:.1}").into(),
                shrunk.into(),
            ]);
        }
    }
    out.push('\n');
    out.push_str(&firsts.render(Style::plain()));
    let (power, cut) = findings_power(seed, budget)?;
    out.push_str(&power);
    if cut.is_some() {
        return Ok((out, cut));
    }
    // The exhaustive check for comparison: time to the same verdict.
    out.push_str("\nexhaustive check of the same bounds, for comparison:\n");
    let mut exhaustive = TextTable::new(vec![
        Column::left("claim").at_least(22),
        Column::left("verdict").at_least(12),
        Column::right("time").at_least(11),
    ]);
    exhaustive.margin = "  ".into();
    exhaustive.headless = true;
    for claim in claims() {
        let model = Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
        let started = Instant::now();
        let outcome = check(model, &[claim.property], budget);
        if let Some(cut) = outcome.stats.cut.or_else(|| over(budget)) {
            out.push_str(&exhaustive.render(Style::plain()));
            out.push_str(&cut_line(cut));
            return Ok((out, Some(cut)));
        }
        let verdict = outcome
            .result(claim.property)
            .map_or("?", |r| r.verdict.word());
        exhaustive.row(vec![
            claim.name.into(),
            verdict.into(),
            format!("{:.1} ms", started.elapsed().as_secs_f64() * 1000.0).into(),
        ]);
    }
    out.push_str(&exhaustive.render(Style::plain()));
    Ok((out, None))
}

/// The simulator's power on every finding: for each scenario under
/// `scenarios/` that names a finding, and each design it expects to violate
/// it, the runs from `seed` to the first violation on the finding's own
/// bounds, by each scheduler (plain walks; swarm weights on the same bounds;
/// PCT of depth up to [`POWER_PCT`]; coverage-guided runs, alone and with
/// both), within [`POWER_RUNS`]. Within `budget`: a finding whose hunts
/// it cut is left out (its row whole or absent), and the cut returned.
pub fn findings_power(seed: u64, budget: &Limits) -> Result<(String, Option<Cut>), String> {
    let files = crate::scenario::files(&[crate::scenario::SCENARIO_DIR.into()])
        .map_err(|e| e.to_string())?;
    let scenarios =
        crate::scenario::load_all(&files, &Default::default()).map_err(|e| e.to_string())?;
    let schedulers: Vec<(&str, Settings)> = power_schedulers(seed)
        .into_iter()
        .map(|(name, settings)| {
            let budget = *budget;
            (name, Settings { budget, ..settings })
        })
        .collect();
    let mut rows: Vec<(String, String, Vec<Option<u64>>)> = Vec::new();
    let mut cut = None;
    'scenarios: for scenario in &scenarios {
        let Some(property) = scenario.heading.finding else {
            continue;
        };
        let whole = rows.len();
        for (k, (_, settings)) in schedulers.iter().enumerate() {
            let hunted = scenario.hunt(settings, POWER_RUNS)?;
            // A hunt the budget reached may have stopped before its
            // violation: this finding's rows go, the table stops here.
            if let Some(c) = over(budget) {
                rows.truncate(whole);
                cut = Some(c);
                break 'scenarios;
            }
            for (design, first) in hunted {
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
    let mut out = format!(
        "\nruns to the first violation of every finding (its own bounds, seed {seed}, at most {POWER_RUNS}):\n"
    );
    let mut columns = vec![Column::left("finding"), Column::left("design")];
    columns.extend(
        schedulers
            .iter()
            .map(|(name, _)| Column::right(name).at_least(9)),
    );
    let mut table = TextTable::new(columns);
    let mut missed = vec![0; schedulers.len()];
    for (column, design, firsts) in &rows {
        let mut row: Vec<Cell> = vec![column.as_str().into(), design.as_str().into()];
        for (k, first) in firsts.iter().enumerate() {
            row.push(
                match first {
                    Some(run) => (run + 1).to_string(),
                    None => {
                        missed[k] += 1;
                        format!(">{POWER_RUNS}")
                    }
                }
                .into(),
            );
        }
        table.row(row);
    }
    let mut total: Vec<Cell> = vec!["not found".into(), "".into()];
    total.extend(
        missed
            .iter()
            .map(|m| format!("{m} of {}", rows.len()).into()),
    );
    table.row(total);
    out.push_str(&table.render(Style::plain()));
    if let Some(c) = cut {
        out.push_str(&cut_line(c));
    }
    Ok((out, cut))
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
pub fn run<M: ToolModel>(flags: &ModelArgs, seed: u64, budget: &Limits) -> Result<u8, String> {
    if M::NAME != Stovepipe::NAME {
        M::from_flags(flags, M::design_names()[0])?;
        return Err(format!(
            "--bench measures the stovepipe model's claims; leave out --model {}",
            M::NAME
        ));
    }
    let (text, cut) = bench(seed, budget)?;
    print!("{text}");
    Ok(if cut.is_some() { 3 } else { 0 })
}
