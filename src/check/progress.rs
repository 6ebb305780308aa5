//! A progress line on stderr for long runs: redrawn a few times a second in
//! place, erased when the run ends, and never written when stderr is not a
//! terminal or `--quiet` is given (so logs and pipes see nothing of it).
//!
//! The checker's line is [`checker_line`]; a runner with other counts (a
//! simulation: runs, violations) builds its own with [`counts_line`] and
//! draws it through the same [`Meter`].

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the line is redrawn.
pub const REFRESH: Duration = Duration::from_millis(250);

/// Whether a command shows progress: stderr is a terminal and not `--quiet`.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// Draws one line on stderr, at most every [`REFRESH`]; erases it when
/// finished or dropped.
pub struct Meter {
    enabled: bool,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
}

impl Meter {
    /// A meter that draws only if `enabled` (see [`wanted`]).
    pub fn new(enabled: bool) -> Self {
        let started = Instant::now();
        Meter {
            enabled,
            started,
            // The first line waits a refresh: a quick run shows nothing, and
            // no rate is computed from a few microseconds.
            last: Some(started),
            drawn: false,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Redraws the line `line(elapsed)` if the last drawing is old enough.
    pub fn tick(&mut self, line: impl FnOnce(Duration) -> String) {
        if !self.enabled || self.last.is_some_and(|t| t.elapsed() < REFRESH) {
            return;
        }
        self.last = Some(Instant::now());
        let text = line(self.started.elapsed());
        let mut err = std::io::stderr().lock();
        // \r and "erase line" redraw in place, whatever was there before.
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the line, if one was drawn.
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `2.4M`, `830k`, `12`: a rate, short.
fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.1}M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.0}k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

fn per_second(count: usize, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// `states 1,234,567  unique 456,789  depth 23  2.1M states/s  0.6 s`.
pub fn checker_line(
    states: usize,
    unique: usize,
    depth: Option<usize>,
    elapsed: Duration,
) -> String {
    let mut line = format!("states {}  unique {}", thousands(states), thousands(unique));
    if let Some(depth) = depth {
        line.push_str(&format!("  depth {depth}"));
    }
    line.push_str(&format!(
        "  {} states/s  {:.1} s",
        rate(per_second(states, elapsed)),
        elapsed.as_secs_f64()
    ));
    line
}

/// `runs 1,000  violations 2  830 runs/s  1.2 s`: the rate is of the first
/// count.
pub fn counts_line(counts: &[(&str, usize)], elapsed: Duration) -> String {
    let mut parts: Vec<String> = counts
        .iter()
        .map(|(name, n)| format!("{name} {}", thousands(*n)))
        .collect();
    if let Some((name, n)) = counts.first() {
        parts.push(format!("{} {name}/s", rate(per_second(*n, elapsed))));
    }
    parts.push(format!("{:.1} s", elapsed.as_secs_f64()));
    parts.join("  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_a_person_expects() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(
            checker_line(2_100_000, 456_789, Some(23), Duration::from_secs(1)),
            "states 2,100,000  unique 456,789  depth 23  2.1M states/s  1.0 s"
        );
        assert_eq!(
            checker_line(830, 10, None, Duration::from_millis(1000)),
            "states 830  unique 10  830 states/s  1.0 s"
        );
        assert_eq!(
            counts_line(&[("runs", 1000), ("violations", 2)], Duration::from_secs(2)),
            "runs 1,000  violations 2  500 runs/s  2.0 s"
        );
    }

    #[test]
    fn watching_a_run_does_not_change_its_results() {
        use crate::check::{check, Limits};
        use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
        let bounds = Bounds {
            requests: 1,
            stalls: 0,
            ..Bounds::default()
        };
        let model = Stovepipe::new(design_named("claim-first").unwrap(), bounds);
        let run = |progress| {
            let limits = Limits {
                progress,
                ..Limits::default()
            };
            let outcome = check(model, &[], &limits);
            let verdicts: Vec<_> = outcome
                .results
                .iter()
                .map(|r| {
                    (
                        r.name,
                        r.verdict,
                        r.trace.as_ref().map(|t| t.actions.clone()),
                    )
                })
                .collect();
            let s = outcome.stats;
            (verdicts, s.states, s.unique, s.depth)
        };
        assert_eq!(run(true), run(false));
    }

    #[test]
    fn a_disabled_meter_draws_nothing() {
        let mut meter = Meter::new(false);
        meter.tick(|_| unreachable!("a disabled meter never builds its line"));
        assert!(!meter.drawn);
    }
}
