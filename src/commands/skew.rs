//! `check --model link --design D --skew-range FROM..TO`: the largest clock
//! skew under which every property of a design holds, measured rather than
//! guessed. The design is checked exhaustively at each skew of the range, a
//! tick (5 s) apart, on the other bounds given; the boundary is the largest
//! skew up to which every `always` property holds at every skew checked, and
//! the first skew that breaks one is told as its shortest story.

use crate::check::{check, Limits, Outcome, Verdict};
use crate::models::ModelBounds;

use crate::report::table::{Cell, Column, TextTable};
use crate::report::{self, Style};
use slotcheck_models::link::{Bounds, Link, Options, TICK_SECONDS};
use slotcheck_models::{Narrated, PropertyKind};

/// `FROM..TO` in seconds, each a multiple of the tick, FROM at most TO.
pub fn parse_range(text: &str) -> Result<(u16, u16), String> {
    let (from, to) = text
        .split_once("..")
        .ok_or_else(|| format!("--skew-range `{text}`: write FROM..TO in seconds (0..60)"))?;
    let seconds = |s: &str| {
        let n: u16 = s.trim_start_matches('=').parse().map_err(|_| {
            format!("--skew-range `{text}`: `{s}` is not a whole number of seconds")
        })?;
        if !n.is_multiple_of(TICK_SECONDS) {
            return Err(format!(
                "--skew-range `{text}`: {n} s is not a multiple of the model's tick ({TICK_SECONDS} s)"
            ));
        }
        Ok(n)
    };
    let (from, to) = (seconds(from)?, seconds(to)?);
    if from > to {
        return Err(format!(
            "--skew-range `{text}`: {from} s is more than {to} s"
        ));
    }
    Ok((from, to))
}

/// The design checked at one skew.
pub struct Point {
    pub skew: u16,
    pub model: Link,
    pub outcome: Outcome<Link>,
}

impl Point {
    /// Every `always` property holds (a cut run does not hold).
    fn holds(&self) -> bool {
        self.outcome
            .results
            .iter()
            .filter(|r| r.kind == PropertyKind::Always)
            .all(|r| r.verdict == Verdict::Holds)
    }
}

/// Checks `design` at each skew of `range` on `bounds` otherwise.
pub fn measure(
    design: &str,
    bounds: Bounds,
    options: Options,
    (from, to): (u16, u16),
    limits: &Limits,
) -> Result<Vec<Point>, String> {
    (from..=to)
        .step_by(TICK_SECONDS as usize)
        .map(|skew| {
            let model = crate::models::link::model_for(design, Bounds { skew, ..bounds }, options)?;
            let outcome = check(model, &[], limits);
            Ok(Point {
                skew,
                model,
                outcome,
            })
        })
        .collect()
}

/// The largest skew up to which every point holds, and the first that does
/// not (if any).
pub fn boundary(points: &[Point]) -> (Option<u16>, Option<&Point>) {
    let broken = points.iter().position(|p| !p.holds());
    let upto = match broken {
        Some(0) => None,
        Some(i) => Some(points[i - 1].skew),
        None => points.last().map(|p| p.skew),
    };
    (upto, broken.map(|i| &points[i]))
}

/// The table (a row per skew, a column per property), the boundary, and the
/// story of the first property broken at the first skew that breaks one.
pub fn text(design: &str, points: &[Point], style: Style) -> String {
    let Some(first) = points.first() else {
        return String::new();
    };
    let names: Vec<&str> = first.outcome.results.iter().map(|r| r.name).collect();
    let mut out = format!(
        "slotcheck check: the skew boundary of {design} on link, {} (the skew varied)\n\n",
        first.model.bounds_line()
    );
    // Every property's column as wide as a long verdict, so that the
    // columns keep their places whatever the verdicts.
    let mut columns = vec![Column::left("skew").at_least(6)];
    columns.extend(names.iter().map(|n| Column::left(n).at_least(20)));
    let mut table = TextTable::new(columns);
    for p in points {
        let mut row: Vec<Cell> = vec![format!("{} s", p.skew).into()];
        row.extend(
            p.outcome
                .results
                .iter()
                .map(|r| Cell::painted(report::verdict_cell(r), r.verdict)),
        );
        table.row(row);
    }
    out.push_str(&table.render(style));
    let (upto, broken) = boundary(points);
    let (from, to) = (first.skew, points.last().expect("a point").skew);
    out.push('\n');
    match (upto, broken) {
        (Some(upto), None) => out.push_str(&style.bold(&format!(
            "{design}: every property holds at every skew checked, {from} s to {to} s (a tick apart); the boundary is above {upto} s\n"
        ))),
        (upto, Some(p)) => {
            let r = p
                .outcome
                .results
                .iter()
                .find(|r| r.kind == PropertyKind::Always && r.verdict != Verdict::Holds)
                .expect("a point that does not hold has such a property");
            let upto = match upto {
                Some(s) => format!("every property holds up to a skew of {s} s"),
                None => format!("a property breaks already at {from} s"),
            };
            out.push_str(&style.bold(&format!(
                "{design}: {upto}; at {} s {} is {}\n",
                p.skew,
                r.name,
                report::verdict_cell(r)
            )));
            if let Some(trace) = &r.trace {
                let steps = p.model.tell(&trace.init, &trace.actions);
                out.push_str(&format!(
                    "\n{}: the shortest counterexample at a skew of {} s, {}\n",
                    r.name,
                    p.skew,
                    report::count(trace.steps() as u64, "step")
                ));
                out.push_str(&report::story_text(
                    &steps,
                    &p.model.explain(r.name, &trace.last),
                ));
            }
        }
        (None, None) => {}
    }
    out
}

/// 0 every property holds across the range, 1 some skew breaks one, 3 a
/// run was cut short before that was known.
pub fn exit_code(points: &[Point]) -> u8 {
    match boundary(points) {
        (_, Some(p)) if p.outcome.stats.cut.is_some() && p.outcome.exit_code() != 1 => 3,
        (_, Some(_)) => 1,
        _ => 0,
    }
}
