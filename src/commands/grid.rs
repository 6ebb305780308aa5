//! The grids of the coverage plan (`crate::scenario::grid`): for each
//! model, the axes of its bounds the nightly scenario set must cover, and
//! the cells left out as too large for it. `slotcheck check --grid` prints
//! the coverage; a scenario run says how many cells it covers.

use crate::scenario::grid::{coverage, coverage_text, Axis, Grid, LeftOut, Level, Want};
use crate::scenario::{self, Scenario};
use std::path::PathBuf;

/// Stovepipe: slots 1 and 2; crashes only, stalls only, both; one delivery
/// and two; two and three requests (one crash and one stall are enough for
/// every finding; more multiply the states); the read one snapshot or
/// split (`--option split-read`).
pub const STOVEPIPE: Grid = Grid {
    model: "stovepipe",
    axes: &[
        Axis {
            name: "slots",
            levels: &[
                Level {
                    name: "1 slot",
                    bounds: &[("max_concurrent", Want::Is(1))],
                },
                Level {
                    name: "2 slots",
                    bounds: &[("max_concurrent", Want::Is(2))],
                },
            ],
        },
        Axis {
            name: "faults",
            levels: &[
                Level {
                    name: "crashes only",
                    bounds: &[("crashes", Want::AtLeast(1)), ("stalls", Want::Is(0))],
                },
                Level {
                    name: "stalls only",
                    bounds: &[("crashes", Want::Is(0)), ("stalls", Want::AtLeast(1))],
                },
                Level {
                    name: "crashes and stalls",
                    bounds: &[("crashes", Want::AtLeast(1)), ("stalls", Want::AtLeast(1))],
                },
            ],
        },
        Axis {
            name: "deliveries",
            levels: &[
                Level {
                    name: "1 delivery",
                    bounds: &[("max_deliveries", Want::Is(1))],
                },
                Level {
                    name: "2 deliveries",
                    bounds: &[("max_deliveries", Want::Is(2))],
                },
            ],
        },
        Axis {
            name: "requests",
            levels: &[
                Level {
                    name: "2 requests",
                    bounds: &[("requests", Want::Is(2))],
                },
                Level {
                    name: "3 requests",
                    bounds: &[("requests", Want::Is(3))],
                },
            ],
        },
        Axis {
            name: "reads",
            levels: &[
                Level {
                    name: "one snapshot",
                    bounds: &[("split-read", Want::Option(false))],
                },
                Level {
                    name: "split reads",
                    bounds: &[("split-read", Want::Option(true))],
                },
            ],
        },
    ],
    left_out: &[LEFT_OUT_SPLIT_THREE],
};

/// Split reads with three requests: each read three steps, so more states
/// than the nightly budget holds for every design; the two-request cells
/// under split reads, and every finding's bounds under split reads
/// (`compare --findings`, both readings), are checked instead.
const LEFT_OUT_SPLIT_THREE: LeftOut = LeftOut {
    cell: &["*", "*", "*", "3 requests", "split reads"],
    why: SPLIT_THREE_WHY,
};

const SPLIT_THREE_WHY: &str = "three requests under split reads: each read three steps, about one and a half times the states even with the reads reduced (two requests and a stall: 33,821 against 21,681 for the recommendation), where one snapshot already takes one to two minutes a design; the two-request cells and every finding under split reads stand in";

/// Link: one ask and two; which fault (none, crashes only, and each of the
/// other fault budgets, with or without a crash); no skew and some.
pub const LINK: Grid = Grid {
    model: "link",
    axes: &[
        Axis {
            name: "asks",
            levels: &[
                Level {
                    name: "1 ask",
                    bounds: &[("asks", Want::Is(1))],
                },
                Level {
                    name: "2 asks",
                    bounds: &[("asks", Want::Is(2))],
                },
            ],
        },
        Axis {
            name: "faults",
            levels: &[
                Level {
                    name: "no fault",
                    bounds: &[
                        ("crashes", Want::Is(0)),
                        ("late_heartbeats", Want::Is(0)),
                        ("slow_answers", Want::Is(0)),
                        ("lost_acks", Want::Is(0)),
                        ("naks", Want::Is(0)),
                    ],
                },
                Level {
                    name: "crashes only",
                    bounds: &[
                        ("crashes", Want::AtLeast(1)),
                        ("late_heartbeats", Want::Is(0)),
                        ("slow_answers", Want::Is(0)),
                        ("lost_acks", Want::Is(0)),
                        ("naks", Want::Is(0)),
                    ],
                },
                Level {
                    name: "late heartbeats",
                    bounds: &[("late_heartbeats", Want::AtLeast(1))],
                },
                Level {
                    name: "slow answers",
                    bounds: &[("slow_answers", Want::AtLeast(1))],
                },
                Level {
                    name: "lost acks",
                    bounds: &[("lost_acks", Want::AtLeast(1))],
                },
                Level {
                    name: "naks",
                    bounds: &[("naks", Want::AtLeast(1))],
                },
            ],
        },
        Axis {
            name: "skew",
            levels: &[
                Level {
                    name: "no skew",
                    bounds: &[("skew_s", Want::Is(0))],
                },
                Level {
                    name: "skew",
                    bounds: &[("skew_s", Want::AtLeast(1))],
                },
            ],
        },
    ],
    left_out: &[],
};

/// Every model's grid.
pub const GRIDS: [&Grid; 2] = [&STOVEPIPE, &LINK];

/// The scenario files under `paths` (default: `scenarios/`), loaded.
fn scenarios_of(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let files = scenario::files(paths).map_err(|e| e.to_string())?;
    scenario::load_all(&files, &Default::default()).map_err(|e| e.to_string())
}

/// `slotcheck check --grid`: every grid's cells and what covers them, and
/// how many cells the plan wants covered are not.
pub fn report(paths: &[PathBuf]) -> Result<(String, usize), String> {
    let scenarios = scenarios_of(paths)?;
    let mut out = String::new();
    let mut missing = 0;
    for grid in GRIDS {
        let cells = coverage(grid, &scenarios);
        missing += cells.iter().filter(|c| c.missing()).count();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&coverage_text(grid, &cells));
    }
    Ok((out, missing))
}

/// `slotcheck check --grid --json`: the same as [`report`], for programs:
/// per grid its axes and every cell with what covers it, why it is left
/// out, whether it is missing; and the missing cells of all grids.
pub fn report_json(paths: &[PathBuf]) -> Result<(serde_json::Value, usize), String> {
    let scenarios = scenarios_of(paths)?;
    let mut grids = Vec::new();
    let mut missing = 0;
    for grid in GRIDS {
        let cells = coverage(grid, &scenarios);
        let here = cells.iter().filter(|c| c.missing()).count();
        missing += here;
        grids.push(serde_json::json!({
            "model": grid.model,
            "axes": grid.axes.iter().map(|a| a.name).collect::<Vec<_>>(),
            "cells": cells.iter().map(|c| serde_json::json!({
                "levels": c.levels,
                "covered_by": c.covered_by,
                "left_out": c.left_out,
                "missing": c.missing(),
            })).collect::<Vec<_>>(),
            "missing": here,
        }));
    }
    Ok((
        serde_json::json!({ "grids": grids, "missing": missing }),
        missing,
    ))
}

/// One line per grid for the end of a scenario run: the cells covered, and
/// those missing by name.
pub fn summary(paths: &[PathBuf]) -> Result<String, String> {
    let scenarios = scenarios_of(paths)?;
    let mut out = String::new();
    for grid in GRIDS {
        let cells = coverage(grid, &scenarios);
        let covered = cells.iter().filter(|c| !c.covered_by.is_empty()).count();
        let left = cells
            .iter()
            .filter(|c| c.covered_by.is_empty() && c.left_out.is_some())
            .count();
        let missing: Vec<String> = cells
            .iter()
            .filter(|c| c.missing())
            .map(|c| format!("({})", c.name()))
            .collect();
        out.push_str(&format!(
            "grid {}: {covered} of {} cells covered, {left} left out as too large, {} missing{} (slotcheck check --grid)\n",
            grid.model,
            cells.len(),
            missing.len(),
            match missing.len() {
                0 => String::new(),
                1..=3 => format!(": {}", missing.join(" ")),
                _ => String::new(),
            }
        ));
    }
    Ok(out)
}
