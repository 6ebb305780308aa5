//! `slotcheck bench`: a fixed matrix of bounds for each design, measured as
//! unique states, states per second, peak memory and time to verdict (and to
//! the first violation). Figures, never assertions: they vary by machine.

use crate::check::{check, Limits, Verdict};
use crate::stovepipe::DEFAULT_BOUNDS;
use serde_json::json;
use slotcheck_models::stovepipe::{Bounds, Stovepipe, DESIGNS};

/// The matrix: named bounds, from the smallest claim to the default.
pub fn matrix(large: bool) -> Vec<(&'static str, Bounds)> {
    let b = |requests, crashes, stalls| Bounds {
        requests,
        max_concurrent: 1,
        crashes,
        stalls,
        max_deliveries: 2,
    };
    let mut rows = vec![
        ("N1 c1 s0", b(1, 1, 0)),
        ("N2 c1 s0", b(2, 1, 0)),
        ("default", DEFAULT_BOUNDS),
        ("N3 c1 s0", b(3, 1, 0)),
    ];
    if large {
        rows.push(("N2 c2 s1", b(2, 2, 1)));
    }
    rows
}

/// The process's peak resident memory (VmHWM) in MiB, on Linux.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Resets the peak to the current resident size, so each run's peak is its
/// own (Linux: writing 5 to clear_refs).
fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

pub struct Measurement {
    pub bounds: &'static str,
    pub design: &'static str,
    pub unique: usize,
    pub states: usize,
    pub states_per_second: f64,
    pub peak_mib: Option<f64>,
    pub seconds: f64,
    /// Seconds to the first violation of any `always` property.
    pub first_violation: Option<f64>,
}

/// `progress`: a progress line on stderr during each run (it does not
/// change the figures beyond a poll every few milliseconds).
pub fn measure(threads: usize, large: bool, progress: bool) -> Vec<Measurement> {
    let limits = Limits {
        threads,
        progress,
        ..Limits::default()
    };
    let mut rows = Vec::new();
    for (name, bounds) in matrix(large) {
        for design in DESIGNS {
            let peak_is_own = reset_peak_memory();
            let outcome = check(Stovepipe::new(design, bounds), &[], &limits);
            let first_violation = outcome
                .results
                .iter()
                .filter(|r| r.verdict == Verdict::Violated)
                .filter_map(|r| r.found_after)
                .fold(None, |min: Option<f64>, t| {
                    Some(min.map_or(t, |m| m.min(t)))
                });
            rows.push(Measurement {
                bounds: name,
                design: design.name(),
                unique: outcome.stats.unique,
                states: outcome.stats.states,
                states_per_second: outcome.stats.states_per_second(),
                peak_mib: if peak_is_own { peak_memory_mib() } else { None },
                seconds: outcome.stats.seconds,
                first_violation,
            });
        }
    }
    rows
}

pub fn run(threads: usize, large: bool, as_json: bool, progress: bool) -> Result<u8, String> {
    let rows = measure(threads, large, progress);
    if as_json {
        let value: Vec<_> = rows
            .iter()
            .map(|m| {
                json!({
                    "bounds": m.bounds, "design": m.design, "unique": m.unique,
                    "states": m.states, "states_per_second": m.states_per_second.round(),
                    "peak_mib": m.peak_mib.map(|p| (p * 10.0).round() / 10.0),
                    "seconds": (m.seconds * 1000.0).round() / 1000.0,
                    "first_violation_seconds": m.first_violation.map(|t| (t * 1000.0).round() / 1000.0),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&value).expect("JSON"));
        return Ok(0);
    }
    println!(
        "{:<10}{:<13}{:>11}{:>12}{:>12}{:>10}{:>10}{:>12}",
        "bounds", "design", "unique", "states", "states/s", "peak MiB", "verdict s", "1st viol. s"
    );
    for m in &rows {
        println!(
            "{:<10}{:<13}{:>11}{:>12}{:>12.0}{:>10}{:>10.2}{:>12}",
            m.bounds,
            m.design,
            m.unique,
            m.states,
            m.states_per_second,
            m.peak_mib.map_or("-".into(), |p| format!("{p:.1}")),
            m.seconds,
            m.first_violation.map_or("-".into(), |t| format!("{t:.3}")),
        );
    }
    println!(
        "\nbounds: N requests, c crashes, s stalls (K 1, max_deliveries 2); default = compare's defaults.\n\
         verdict s: time until every verdict is known (the whole space); 1st viol. s: until the first violation.\n"
    );
    // The simulator's side: runs per second and runs to the first violation
    // of each claim of the contract (also `slotcheck simulate --bench`).
    print!("{}", crate::simulate::bench(0)?);
    Ok(0)
}
