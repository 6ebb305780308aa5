//! The coverage plan of the guard: a declared grid over a model's bounds
//! (slots, which faults, deliveries, requests...), and which of its cells
//! the scenario files cover. A scenario covers a cell when its bounds fall
//! in every level of the cell and it expects something of every design of
//! its model; a cell is left out only with a reason the grid declares (too
//! large for the nightly budget, say how large). The grids themselves are
//! the commands' (they name the models); this room only reads them.

use super::template::designs_of;
use super::Scenario;
use crate::report::table::{Column, TextTable};
use crate::report::Style;
use serde_json::Value as Json;

/// What a level asks of one bound (a bound a scenario leaves out is 0).
#[derive(Clone, Copy, Debug)]
pub enum Want {
    Is(u32),
    AtLeast(u32),
    /// The model option of this name is on (true) or off (false).
    Option(bool),
}

impl Want {
    fn holds(self, value: u32) -> bool {
        match self {
            Want::Is(n) => value == n,
            Want::AtLeast(n) => value >= n,
            Want::Option(_) => unreachable!("an option is no bound"),
        }
    }
}

/// One value of an axis: `stalls only` is `crashes = 0, stalls >= 1`.
pub struct Level {
    pub name: &'static str,
    pub bounds: &'static [(&'static str, Want)],
}

pub struct Axis {
    pub name: &'static str,
    pub levels: &'static [Level],
}

/// Cells the grid leaves out of the nightly set: the level names of the
/// cell (one per axis, `*` for any level), and why.
pub struct LeftOut {
    pub cell: &'static [&'static str],
    pub why: &'static str,
}

pub struct Grid {
    pub model: &'static str,
    pub axes: &'static [Axis],
    pub left_out: &'static [LeftOut],
}

/// A cell of a grid, and what covers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// A level name per axis.
    pub levels: Vec<&'static str>,
    /// The IDs of the scenarios that cover it (a `slow` one marked so).
    pub covered_by: Vec<String>,
    /// Why the grid leaves it out, if it does.
    pub left_out: Option<&'static str>,
}

impl Cell {
    /// Covered by a file of the regular (not `slow`) run.
    pub fn covered_regularly(&self) -> bool {
        self.covered_by.iter().any(|id| !id.ends_with(" (slow)"))
    }

    /// A cell the plan says must be covered and is not.
    pub fn missing(&self) -> bool {
        self.covered_by.is_empty() && self.left_out.is_none()
    }

    pub fn name(&self) -> String {
        self.levels.join(", ")
    }
}

fn bound(bounds: &Json, name: &str) -> u32 {
    bounds.get(name).and_then(Json::as_u64).unwrap_or(0) as u32
}

fn in_level(level: &Level, bounds: &Json) -> bool {
    level.bounds.iter().all(|(name, want)| match want {
        Want::Option(on) => {
            let set = bounds
                .get("options")
                .and_then(Json::as_array)
                .is_some_and(|o| o.iter().any(|o| o.as_str() == Some(name)));
            set == *on
        }
        _ => want.holds(bound(bounds, name)),
    })
}

/// Every cell of `grid`, in the order of its axes, with what covers it.
pub fn coverage(grid: &Grid, scenarios: &[Scenario]) -> Vec<Cell> {
    let designs = designs_of(grid.model);
    let whole: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.heading.model == grid.model)
        .filter(|s| designs.iter().all(|d| s.plan.has_design(d)))
        .collect();
    let mut cells: Vec<Vec<&Level>> = vec![Vec::new()];
    for axis in grid.axes {
        cells = cells
            .into_iter()
            .flat_map(|cell| {
                axis.levels.iter().map(move |level| {
                    let mut cell = cell.clone();
                    cell.push(level);
                    cell
                })
            })
            .collect();
    }
    cells
        .into_iter()
        .map(|levels| {
            let names: Vec<&'static str> = levels.iter().map(|l| l.name).collect();
            let covered_by = whole
                .iter()
                .filter(|s| levels.iter().all(|l| in_level(l, &s.heading.bounds)))
                .map(|s| {
                    if s.slow {
                        format!("{} (slow)", s.heading.id)
                    } else {
                        s.heading.id.clone()
                    }
                })
                .collect();
            let left_out = grid
                .left_out
                .iter()
                .find(|l| {
                    l.cell.len() == names.len()
                        && l.cell.iter().zip(&names).all(|(a, b)| *a == "*" || a == b)
                })
                .map(|l| l.why);
            Cell {
                levels: names,
                covered_by,
                left_out,
            }
        })
        .collect()
}

/// The coverage as text: a line per cell, then a count.
pub fn coverage_text(grid: &Grid, cells: &[Cell]) -> String {
    let axes: Vec<&str> = grid.axes.iter().map(|a| a.name).collect();
    let mut out = format!(
        "coverage of the {} grid ({}): every design in each cell\n",
        grid.model,
        axes.join(" x ")
    );
    let mut table = TextTable::new(vec![Column::left("cell"), Column::left("covered")]);
    table.margin = "  ".into();
    table.headless = true;
    for cell in cells {
        let what = match (&cell.covered_by[..], cell.left_out) {
            ([], Some(why)) => format!("left out: {why}"),
            ([], None) => "MISSING: no scenario covers it".to_string(),
            (by, _) => format!("covered by {}", by.join(", ")),
        };
        table.row(vec![cell.name().into(), what.into()]);
    }
    out.push_str(&table.render(Style::plain()));
    let covered = cells.iter().filter(|c| !c.covered_by.is_empty()).count();
    let left = cells
        .iter()
        .filter(|c| c.covered_by.is_empty() && c.left_out.is_some())
        .count();
    let missing = cells.iter().filter(|c| c.missing()).count();
    out.push_str(&format!(
        "{} cells: {covered} covered, {left} left out, {missing} missing\n",
        cells.len()
    ));
    out
}
