//! The typed result of `slotcheck bench`: the exhaustive searches measured,
//! how far past a `--timeout` runs stop, and the timed `mutate` and
//! `validate` runs. `bench --json` is these types serialized (fields in
//! alphabetical order, the order it has always had) and the text table is
//! rendered from them; the commands room measures and fills them. Figures,
//! never verdicts: they vary by machine.

use super::table::{Column, TextTable};
use super::Style;
use schemars::JsonSchema;
use serde::Serialize;

/// What ends the name of a row read in split reads: its bounds' row name
/// and this (the split line sets it against the row of those bounds).
pub const SPLIT: &str = " split";

/// Everything `slotcheck bench` measured (`bench --json`).
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct BenchReport {
    /// One exhaustive search a row: bounds, design, threads.
    pub checks: Vec<SearchFigures>,
    /// How many times each row of `checks` was measured (`--runs`), the
    /// rows taken in turn: each row is its fastest run.
    pub runs: usize,
    /// Each command that takes `--timeout`, end to end.
    pub command_timeout: Vec<CommandOvershoot>,
    /// Absent when a signal stopped the bench before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutate: Option<MutateFigures>,
    /// Why the bench stopped before its end (a signal): the measurements
    /// present are whole, the absent ones were not made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// What the progress properties add to the `always` and `sometimes`
    /// ones, measured in the same run (empty when a signal stopped the
    /// bench before it).
    pub progress: Vec<ProgressCost>,
    /// slotcheck against SPIN on the same bounds, one run each (issue 37);
    /// absent when a signal stopped the bench before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spin: Option<SpinComparison>,
    /// With `--scaling`: per design, two one-thread searches of its space
    /// run at once, each on a thread of its own (what the machine lets two
    /// threads do, nothing shared but the machine); empty without it.
    pub side_by_side: Vec<SideBySide>,
    /// The search alone cut by `--timeout` (with `--large` only).
    pub timeout: Vec<SearchOvershoot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validate: Option<ValidateFigures>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validate_link: Option<ValidateLinkFigures>,
}

/// One exhaustive search: the whole space of a design on named bounds.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchFigures {
    /// The bounds' name (`N3 K1 c1 s0`, `default`, `link A3 B3`).
    pub bounds: String,
    /// Peak memory over unique states, to 0.1 (`null` where the peak is not
    /// measured).
    pub bytes_per_state: Option<f64>,
    pub design: String,
    /// Seconds to the first violation of any `always` property, to 0.001
    /// (`null`: none violated).
    pub first_violation_seconds: Option<f64>,
    /// Peak memory in MiB, to 0.1.
    pub peak_mib: Option<f64>,
    /// Seconds until every verdict is known, to 0.001.
    pub seconds: f64,
    pub states: usize,
    /// States per second, to the unit.
    pub states_per_second: f64,
    pub threads: usize,
    pub unique: usize,
    /// Where the seconds went, by the search's phases.
    pub phases: PhaseSeconds,
}

/// `x` to `places` decimal places, as the report gives its figures.
pub fn round(x: f64, places: i32) -> f64 {
    (x * 10f64.powi(places)).round() / 10f64.powi(places)
}

/// Two one-thread searches of one design's space at once (`bench
/// --scaling`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SideBySide {
    pub bounds: String,
    pub design: String,
    /// Seconds until the slower of the two knew every verdict, to 0.001.
    pub seconds: f64,
}

/// A search's seconds by phase (docs/checking.md, "Where the time goes"),
/// each to 0.001: a level's expansion, the insertion of its new states,
/// their numbering, the kept graph's steps (progress properties only), and
/// the progress check's walk.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct PhaseSeconds {
    pub expand: f64,
    pub graph: f64,
    pub insert: f64,
    pub number: f64,
    pub progress: f64,
}

/// One design on named bounds checked twice, one run after the other: its
/// `always` and `sometimes` properties alone, then every property, progress
/// included.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ProgressCost {
    pub bounds: String,
    pub design: String,
    /// Peak memory in MiB with progress, to 0.1 (`null` where the peak is
    /// not measured).
    pub peak_mib: Option<f64>,
    /// The same without progress.
    pub safety_peak_mib: Option<f64>,
    /// Seconds to every verdict without progress, to 0.001.
    pub safety_seconds: f64,
    /// Seconds to every verdict with progress, to 0.001.
    pub seconds: f64,
    pub threads: usize,
}

impl ProgressCost {
    /// The check with progress over the check without: time, and memory.
    pub fn ratios(&self) -> (f64, Option<f64>) {
        let time = self.seconds / self.safety_seconds.max(1e-9);
        let memory = self
            .peak_mib
            .zip(self.safety_peak_mib)
            .map(|(with, without)| with / without.max(1e-9));
        (time, memory)
    }

    /// `progress (DESIGN, BOUNDS, 1 thread): ...`: the line `bench` prints.
    pub fn line(&self) -> String {
        let mib = |m: Option<f64>| m.map_or("? MiB".to_string(), |m| format!("{m:.1} MiB"));
        let (time, memory) = self.ratios();
        format!(
            "progress ({}, {}, {} thread{}): always and sometimes alone {:.2} s, {}; with progress {:.2} s, {}: {:.2}x the time, {} the memory\n",
            self.design,
            self.bounds,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.safety_seconds,
            mib(self.safety_peak_mib),
            self.seconds,
            mib(self.peak_mib),
            time,
            memory.map_or("?".to_string(), |m| format!("{m:.2}x")),
        )
    }
}

/// The search alone, on work it cannot finish, cut at its timeout.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchOvershoot {
    pub stopped_after_seconds: f64,
    pub threads: usize,
    pub timeout_seconds: f64,
}

/// slotcheck and the independent Promela model (`spin/stovepipe.pml`) on
/// the same bounds, design by design: one run each, side by side.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SpinComparison {
    /// The bounds' name (`N3 K1 c1 s1`).
    pub bounds: String,
    /// One row a design; empty when SPIN could not run.
    pub rows: Vec<SpinRow>,
    /// Why there is no comparison: `spin` or `gcc` is not on PATH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// One design checked by slotcheck and by SPIN.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SpinRow {
    pub design: String,
    /// The safety properties whose verdicts differ (`no-wedge: slotcheck
    /// violated, SPIN holds`): each one a finding; empty when they agree.
    pub disagreements: Vec<String>,
    /// `slotcheck_seconds` over `spin_seconds`, to 0.01: the issue asks for
    /// 0.5 or less.
    pub ratio: f64,
    /// The whole check as `check --design` runs it (every property, the
    /// witnesses and progress too), to 0.001.
    pub slotcheck_check_seconds: f64,
    /// Peak memory of the safety run in MiB, to 0.1 (`null` where not
    /// measured).
    pub slotcheck_peak_mib: Option<f64>,
    /// The check of the safety properties alone, the ones SPIN's timed run
    /// asserts, to 0.001.
    pub slotcheck_seconds: f64,
    pub slotcheck_threads: usize,
    pub slotcheck_unique: usize,
    /// `spin -a` and gcc, to 0.001; not in `spin_seconds`.
    pub spin_compile_seconds: f64,
    /// pan's total actual memory usage, in MiB.
    pub spin_memory_mib: f64,
    /// The assertions compiled out of the timed run (`-DOFF_name`): the
    /// properties slotcheck found violated, so that pan searches the whole
    /// space rather than stopping at a violation; their verdicts come from
    /// a run of their own.
    pub spin_off: Vec<String>,
    /// The timed pan run, wall clock, to 0.001.
    pub spin_seconds: f64,
    /// pan's "states, stored".
    pub spin_states: usize,
}

impl SpinComparison {
    /// The table `bench` prints, or the line saying why there is none.
    pub fn text(&self) -> String {
        if let Some(why) = &self.skipped {
            return format!(
                "\nslotcheck against SPIN ({}): not compared: {why}\n",
                self.bounds
            );
        }
        let mut table = TextTable::new(vec![
            Column::left("design"),
            Column::right("safety s"),
            Column::right("check s"),
            Column::right("unique"),
            Column::right("spin s"),
            Column::right("stored"),
            Column::right("spin MiB"),
            Column::right("compile s"),
            Column::right("ratio"),
            Column::left("verdicts"),
        ]);
        for r in &self.rows {
            table.row(vec![
                r.design.as_str().into(),
                format!("{:.2}", r.slotcheck_seconds).into(),
                format!("{:.2}", r.slotcheck_check_seconds).into(),
                r.slotcheck_unique.to_string().into(),
                format!("{:.2}", r.spin_seconds).into(),
                r.spin_states.to_string().into(),
                format!("{:.1}", r.spin_memory_mib).into(),
                format!("{:.2}", r.spin_compile_seconds).into(),
                format!("{:.2}", r.ratio).into(),
                if r.disagreements.is_empty() {
                    "agree".into()
                } else {
                    r.disagreements.join("; ").into()
                },
            ]);
        }
        let mut out = format!(
            "\nslotcheck against SPIN ({}, max_deliveries 2), one run each:\n",
            self.bounds
        );
        out.push_str(&table.render(Style::plain()));
        out.push_str(
            "safety s: slotcheck on the safety properties alone, the ones SPIN checks; check s: every property, as check --design runs it (witnesses and progress too). One thread.\n\
             spin s: pan's search, wall clock, its compile apart; the properties slotcheck found violated are compiled out of it (-DOFF_...) so that it covers the whole space, and judged by a run of their own.\n\
             ratio: safety s over spin s (the issue's target: 0.5 or less).\n",
        );
        out
    }
}

/// A command run as a child on work that outlasts its `--timeout`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CommandOvershoot {
    /// Which command (`check --design`, `simulate`...).
    pub command: String,
    /// Its exit status (3: inconclusive).
    pub exit: i32,
    pub stopped_after_seconds: f64,
    pub timeout_seconds: f64,
}

/// `mutate` on one design's default bounds.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MutateFigures {
    /// The bounds' name, for the text (the JSON has always left it out:
    /// the default bounds).
    #[serde(skip)]
    pub bounds: String,
    pub design: String,
    pub mutants: usize,
    pub seconds: f64,
}

/// `validate` on a stovepipe log of many interleaved queues.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ValidateFigures {
    /// The queues that conform (exit 0 or 1).
    pub conforming: usize,
    pub design: String,
    pub lines: usize,
    pub queues: usize,
    pub seconds: f64,
}

/// `validate` on a link log of many interleaved streams.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ValidateLinkFigures {
    /// The streams that conform (exit 0 or 1).
    pub conforming: usize,
    pub design: String,
    pub lines: usize,
    pub seconds: f64,
    pub streams: usize,
}

impl BenchReport {
    /// Where the time goes on the rows searched with one thread and two
    /// (`bench --scaling`): each phase's seconds, and what is left
    /// (replaying traces, telling verdicts).
    pub fn phases_text(&self) -> String {
        let mut table = TextTable::new(vec![
            Column::left("bounds").at_least(11),
            Column::left("design"),
            Column::right("t"),
            Column::right("expand"),
            Column::right("insert"),
            Column::right("number"),
            Column::right("graph"),
            Column::right("progress"),
            Column::right("other"),
        ]);
        let paired = |m: &&SearchFigures| {
            self.checks
                .iter()
                .any(|o| o.threads != m.threads && o.bounds == m.bounds && o.design == m.design)
        };
        for m in self.checks.iter().filter(paired) {
            let p = &m.phases;
            let phases = [p.expand, p.insert, p.number, p.graph, p.progress];
            let other = m.seconds - phases.iter().sum::<f64>();
            let mut row = vec![
                m.bounds.as_str().into(),
                m.design.as_str().into(),
                m.threads.to_string().into(),
            ];
            row.extend(
                phases
                    .iter()
                    .chain([&other])
                    .map(|s| format!("{s:.2}").into()),
            );
            table.row(row);
        }
        format!(
            "\nwhere the time goes (seconds; docs/checking.md):\n{}",
            table.render(Style::plain())
        )
    }

    /// What split reads cost (`--large`): the row read in split reads
    /// against the same design's one-snapshot row, one thread each.
    fn split_line(&self) -> Option<String> {
        let split = self
            .checks
            .iter()
            .find(|m| m.threads == 1 && m.bounds.ends_with(SPLIT))?;
        let bounds = split.bounds.trim_end_matches(SPLIT);
        let one = self
            .checks
            .iter()
            .find(|m| m.threads == 1 && m.bounds == bounds && m.design == split.design)?;
        Some(format!(
            "split reads ({}, {bounds}, 1 thread): {} unique, {:.2}x the one-snapshot read's {}; {:.2} s\n",
            split.design,
            split.unique,
            split.unique as f64 / one.unique.max(1) as f64,
            one.unique,
            split.seconds
        ))
    }

    /// The text `slotcheck bench` prints: the searches' table, its legend,
    /// the speed-ups of two threads, then a line per other measurement.
    pub fn text(&self) -> String {
        let mut searches = TextTable::new(vec![
            Column::left("bounds").at_least(11),
            Column::left("design"),
            Column::right("t"),
            Column::right("unique").at_least(9),
            Column::right("states").at_least(10),
            Column::right("states/s").at_least(9),
            Column::right("B/state").at_least(7),
            Column::right("peak MiB"),
            Column::right("seconds"),
            Column::right("1st viol"),
        ]);
        let or_dash =
            |x: Option<f64>, places: usize| x.map_or("-".to_string(), |x| format!("{x:.places$}"));
        for m in &self.checks {
            searches.row(vec![
                m.bounds.as_str().into(),
                m.design.as_str().into(),
                m.threads.to_string().into(),
                m.unique.to_string().into(),
                m.states.to_string().into(),
                format!("{:.0}", m.states_per_second).into(),
                or_dash(m.bytes_per_state, 1).into(),
                or_dash(m.peak_mib, 1).into(),
                format!("{:.2}", m.seconds).into(),
                or_dash(m.first_violation_seconds, 3).into(),
            ]);
        }
        let mut out = searches.render(Style::plain());
        out.push_str(
            "\nbounds: N requests, K slots, c crashes, s stalls (max_deliveries 2); default = compare's defaults; link default = compare --model link's defaults, link A3 B3 = the same with three asks and three builders; split = the same with --option split-read; N4 K2 c2 s1: the recommended design alone, on two threads. t: threads.\n\
             B/state: peak memory over unique states. seconds: until every verdict is known (the whole space); 1st viol: until the first violation.\n",
        );
        if self.runs > 1 {
            out.push_str(&format!(
                "each row: the fastest of {} runs, the rows taken in turn.\n",
                self.runs
            ));
        }
        // `BOUNDS DESIGN: Nx`: the design's one-thread seconds over `seconds`.
        let against_one = |bounds: &str, design: &str, seconds: f64| {
            let one = self
                .checks
                .iter()
                .find(|m| m.threads == 1 && m.bounds == bounds && m.design == design)?;
            Some(format!("{bounds} {design}: {:.2}x", one.seconds / seconds))
        };
        let speedups: Vec<String> = self
            .checks
            .iter()
            .filter(|m| m.threads == 2)
            .filter_map(|two| against_one(&two.bounds, &two.design, two.seconds))
            .collect();
        if !speedups.is_empty() {
            out.push_str(&format!(
                "two threads against one: {}\n",
                speedups.join("; ")
            ));
        }
        // Twice the work in the pair's time: a search's worth in half of it.
        let ceilings: Vec<String> = self
            .side_by_side
            .iter()
            .filter_map(|pair| against_one(&pair.bounds, &pair.design, pair.seconds / 2.0))
            .collect();
        if !ceilings.is_empty() {
            out.push_str(&format!(
                "two one-thread searches side by side (twice the work in the pair's time, against one alone: what the machine gives two threads that share nothing): {}\n",
                ceilings.join("; ")
            ));
        }
        if let Some(line) = self.split_line() {
            out.push_str(&line);
        }
        for t in &self.timeout {
            out.push_str(&format!(
                "--timeout {:.0} s (fail-open, N3 K2 c2 s1, {} thread{}): stopped after {:.2} s\n",
                t.timeout_seconds,
                t.threads,
                if t.threads == 1 { "" } else { "s" },
                t.stopped_after_seconds
            ));
        }
        for p in &self.progress {
            out.push_str(&p.line());
        }
        if let Some(m) = &self.mutate {
            out.push_str(&format!(
                "mutate ({}, {}): {} mutants in {:.1} s\n",
                m.design, m.bounds, m.mutants, m.seconds
            ));
        }
        if let Some(v) = &self.validate {
            out.push_str(&format!(
                "validate ({}): {} lines of {} queues in {:.2} s, {} conform\n",
                v.design, v.lines, v.queues, v.seconds, v.conforming
            ));
        }
        if let Some(l) = &self.validate_link {
            out.push_str(&format!(
                "validate (link, {}): {} lines of {} streams in {:.2} s, {} conform\n",
                l.design, l.lines, l.streams, l.seconds, l.conforming
            ));
        }
        let mut commands = TextTable::new(vec![
            Column::left("timeout"),
            Column::left("command"),
            Column::left("stopped"),
        ]);
        commands.headless = true;
        for c in &self.command_timeout {
            commands.row(vec![
                format!("--timeout {:.0} s,", c.timeout_seconds).into(),
                c.command.as_str().into(),
                format!(
                    "stopped after {:.2} s (exit {})",
                    c.stopped_after_seconds, c.exit
                )
                .into(),
            ]);
        }
        out.push_str(&commands.render(Style::plain()));
        // Last, so that a page quoting the rest can cut it off at its heading.
        if let Some(spin) = &self.spin {
            out.push_str(&spin.text());
        }
        if let Some(why) = &self.stopped {
            out.push_str(&format!("{why}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(design: &str, threads: usize, seconds: f64) -> SearchFigures {
        SearchFigures {
            bounds: "N3 K2 c2 s1".into(),
            bytes_per_state: None,
            design: design.into(),
            first_violation_seconds: None,
            peak_mib: None,
            seconds,
            states: 10,
            states_per_second: 1.0,
            threads,
            unique: 5,
            phases: PhaseSeconds {
                expand: 4.0 / threads as f64,
                graph: 1.0,
                insert: 0.5,
                number: 0.25,
                progress: 0.3,
            },
        }
    }

    /// A report of these searches alone.
    fn report(checks: Vec<SearchFigures>) -> BenchReport {
        BenchReport {
            checks,
            runs: 1,
            command_timeout: Vec::new(),
            mutate: None,
            stopped: None,
            progress: Vec::new(),
            side_by_side: Vec::new(),
            spin: None,
            timeout: Vec::new(),
            validate: None,
            validate_link: None,
        }
    }

    /// Two one-thread searches side by side read as what two threads could
    /// give: twice one alone over the pair's seconds, per design with a
    /// one-thread row, and no line without a pair.
    #[test]
    fn the_side_by_side_line_sets_twice_one_alone_against_the_pair() {
        let mut with = report(vec![row("owner-keyed", 1, 9.0), row("owner-keyed", 2, 5.0)]);
        assert!(!with.text().contains("side by side"), "{}", with.text());
        let pair = |design: &str, seconds: f64| SideBySide {
            bounds: "N3 K2 c2 s1".into(),
            design: design.into(),
            seconds,
        };
        with.side_by_side = vec![pair("owner-keyed", 10.0), pair("claim-first", 3.0)];
        let text = with.text();
        let line = text
            .lines()
            .find(|l| l.starts_with("two one-thread searches side by side"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.ends_with(": N3 K2 c2 s1 owner-keyed: 1.80x"), "{line}");
        assert!(text.contains("two threads against one: N3 K2 c2 s1 owner-keyed: 1.80x"));
    }

    /// Only a design searched with one thread and with two has its phases
    /// shown, and what the phases leave of its seconds is `other`.
    #[test]
    fn the_phase_table_pairs_thread_counts_and_shows_what_is_left() {
        let report = report(vec![
            row("owner-keyed", 1, 7.0),
            row("owner-keyed", 2, 4.0),
            row("claim-first", 1, 9.0),
        ]);
        let text = report.phases_text();
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("N3 K2")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(!text.contains("claim-first"), "{text}");
        let words: Vec<&str> = rows[0].split_whitespace().collect();
        // bounds (four words), design, t, expand, insert, number, graph,
        // progress, other: 7 - (4 + 0.5 + 0.25 + 1 + 0.3).
        assert_eq!(
            &words[4..],
            [
                "owner-keyed",
                "1",
                "4.00",
                "0.50",
                "0.25",
                "1.00",
                "0.30",
                "0.95"
            ]
        );
        let words: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(&words[5..7], ["2", "2.00"]);
    }

    /// The split reads' line sets the split row against the same design's
    /// one-snapshot row on the same bounds, one thread each.
    #[test]
    fn the_split_line_divides_by_the_one_snapshot_row() {
        let at = |bounds: &str, design: &str, threads: usize, unique: usize| SearchFigures {
            bounds: bounds.into(),
            unique,
            ..row(design, threads, 2.5)
        };
        let mut report = report(vec![
            at("N3 K1 c1 s1", "owner-keyed", 1, 100),
            at("N3 K1 c1 s1", "recommended", 1, 400),
            at("N3 K1 c1 s1", "recommended", 2, 400),
            at("N3 K1 c1 s1 split", "recommended", 1, 1100),
        ]);
        assert_eq!(
            report.split_line().as_deref(),
            Some("split reads (recommended, N3 K1 c1 s1, 1 thread): 1100 unique, 2.75x the one-snapshot read's 400; 2.50 s\n")
        );
        report.checks.pop();
        assert_eq!(report.split_line(), None);
    }
}
