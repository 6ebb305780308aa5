//! The link model as the tool runs it: its bounds flags, default bounds, the
//! bounds as JSON, and `compare`/`check` for `--model link`.

use crate::check::{check, Limits, Verdict};
use crate::report::{self, Style};
use crate::see::{self, CheckOutputArgs, CompareOutputArgs};
use clap::Args;
use serde_json::{json, Value};
use slotcheck_models::link::{design_named, Bounds, Link, Options, DESIGNS};
use slotcheck_models::Narrated;
use stateright::Model;

/// Which model a command runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelName {
    #[default]
    Stovepipe,
    Link,
}

/// The bounds `compare --model link` uses when given none: two asks (the
/// duplicate needs a second ask to keep the first builder busy), two builders,
/// a skew of 35 s (the source's limit), one crash, one late heartbeat, and a
/// horizon long enough for a redelivery and a second build (see the README).
pub const DEFAULT_BOUNDS: Bounds = Bounds {
    asks: 2,
    builders: 2,
    skew: 35,
    horizon: 75,
    longest_build: 75,
    crashes: 1,
    late_heartbeats: 1,
    late_by: 10,
    max_deliver: 3,
};

/// The link model's bounds (see `shared/docs/link-model.md`); each is
/// rejected under `--model stovepipe`. Times in seconds, multiples of 5.
#[derive(Args, Clone, Debug, Default)]
pub struct LinkArgs {
    /// Link: how many asks are published (default 2).
    #[arg(long, value_name = "N")]
    pub asks: Option<u8>,
    /// Link: how many builders take asks (default 2).
    #[arg(long, value_name = "N")]
    pub builders: Option<u8>,
    /// Link: each builder's clock is off the server's by up to this many seconds, either way (default 35).
    #[arg(long, value_name = "SECONDS")]
    pub skew: Option<u16>,
    /// Link: no time passes after this many seconds of server time (default 75).
    #[arg(long, value_name = "SECONDS")]
    pub horizon: Option<u16>,
    /// Link: a build takes from 5 s up to this many seconds (default 75).
    #[arg(long, value_name = "SECONDS")]
    pub longest_build: Option<u16>,
    /// Link: how many heartbeats may be late (default 1).
    #[arg(long, value_name = "N")]
    pub late_heartbeats: Option<u8>,
    /// Link: how late a late heartbeat may be, in seconds (default 10).
    #[arg(long, value_name = "SECONDS")]
    pub late_by: Option<u16>,
    /// Link: deliveries before the server stops handing a message out (default 3).
    #[arg(long, value_name = "N")]
    pub max_deliver: Option<u8>,
}

impl LinkArgs {
    /// The flags given, for the error under the other model.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut note = |set: bool, flag| {
            if set {
                given.push(flag)
            }
        };
        note(self.asks.is_some(), "--asks");
        note(self.builders.is_some(), "--builders");
        note(self.skew.is_some(), "--skew");
        note(self.horizon.is_some(), "--horizon");
        note(self.longest_build.is_some(), "--longest-build");
        note(self.late_heartbeats.is_some(), "--late-heartbeats");
        note(self.late_by.is_some(), "--late-by");
        note(self.max_deliver.is_some(), "--max-deliver");
        given
    }

    /// The bounds, the defaults where a flag is not given; `crashes` is the
    /// flag both models share.
    pub fn bounds(&self, crashes: Option<u8>) -> Result<Bounds, String> {
        let d = DEFAULT_BOUNDS;
        let b = Bounds {
            asks: self.asks.unwrap_or(d.asks),
            builders: self.builders.unwrap_or(d.builders),
            skew: self.skew.unwrap_or(d.skew),
            horizon: self.horizon.unwrap_or(d.horizon),
            longest_build: self.longest_build.unwrap_or(d.longest_build),
            crashes: crashes.unwrap_or(d.crashes),
            late_heartbeats: self.late_heartbeats.unwrap_or(d.late_heartbeats),
            late_by: self.late_by.unwrap_or(d.late_by),
            max_deliver: self.max_deliver.unwrap_or(d.max_deliver),
        };
        b.validate().map_err(|e| format!("--model link: {e}"))?;
        Ok(b)
    }
}

pub fn options(names: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    for name in names {
        options.set(name).map_err(|e| format!("--option: {e}"))?;
    }
    Ok(options)
}

pub fn bounds_json(bounds: &Bounds, options: &Options) -> Value {
    json!({
        "model": "link",
        "asks": bounds.asks,
        "builders": bounds.builders,
        "skew_s": bounds.skew,
        "horizon_s": bounds.horizon,
        "longest_build_s": bounds.longest_build,
        "crashes": bounds.crashes,
        "late_heartbeats": bounds.late_heartbeats,
        "late_by_s": bounds.late_by,
        "max_deliver": bounds.max_deliver,
        "options": options.names(),
    })
}

/// `asks 2, builders 2, skew 35 s, ...` for headings.
pub fn bounds_line(b: &Bounds, options: &Options) -> String {
    let mut line = format!(
        "asks {}, builders {}, skew {} s, horizon {} s, longest build {} s, crashes {}, late heartbeats {} (by up to {} s), max deliver {}",
        b.asks, b.builders, b.skew, b.horizon, b.longest_build, b.crashes, b.late_heartbeats, b.late_by, b.max_deliver
    );
    for option in options.names() {
        line.push_str(&format!(", option {option}"));
    }
    line
}

pub fn model_for(design: &str, bounds: Bounds, options: Options) -> Result<Link, String> {
    let design = design_named(design).ok_or_else(|| {
        let known: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
        format!(
            "--model link: unknown design `{design}` (known: {})",
            known.join(", ")
        )
    })?;
    let mut model = Link::new(design, bounds);
    model.options = options;
    Ok(model)
}

/// `compare --model link`: the four designs side by side.
pub fn compare(
    bounds: Bounds,
    options: Options,
    limits: &Limits,
    as_json: bool,
    output: &CompareOutputArgs,
) -> Result<u8, String> {
    let mut columns = Vec::new();
    for design in &DESIGNS {
        let model = model_for(design.name, bounds, options)?;
        columns.push((design.name.to_string(), check(model, &[], limits)));
    }
    let heading = format!("link, {}", bounds_line(&bounds, &options));
    see::after_compare(output, &heading, &columns, |design| {
        model_for(design, bounds, options)
    })?;
    if as_json {
        let value = report::comparison_json(bounds_json(&bounds, &options), &columns);
        println!("{}", serde_json::to_string_pretty(&value).expect("JSON"));
    } else {
        let style = Style::for_stdout();
        println!(
            "{}\n",
            style.bold(&format!(
                "slotcheck compare: link, {}",
                bounds_line(&bounds, &options)
            ))
        );
        print!("{}", report::comparison_table(&columns, style));
        println!(
            "\nA violation's story: slotcheck check --model link --design DESIGN [same bounds]"
        );
    }
    let inconclusive = columns
        .iter()
        .flat_map(|(_, o)| &o.results)
        .any(|r| r.verdict == Verdict::Inconclusive);
    Ok(if inconclusive { 3 } else { 0 })
}

/// `check --model link --design D`: verdicts, then each violation's story.
pub fn check_design(
    design: &str,
    properties: &[String],
    bounds: Bounds,
    options: Options,
    limits: &Limits,
    as_json: bool,
    output: &CheckOutputArgs,
) -> Result<u8, String> {
    let model = model_for(design, bounds, options)?;
    let known: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
    let mut names = Vec::new();
    for p in properties {
        match known.iter().find(|k| *k == p) {
            Some(k) => names.push(*k),
            None => {
                return Err(format!(
                    "--property: unknown link property `{p}` (known: {})",
                    known.join(", ")
                ))
            }
        }
    }
    let outcome = check(model, &names, limits);
    let heading = format!("{design} on link, {}", bounds_line(&bounds, &options));
    if see::after_check(output, &model, design, &heading, &outcome)? {
        return Ok(outcome.exit_code() as u8);
    }
    if as_json {
        let results: Vec<_> = outcome
            .results
            .iter()
            .map(|r| {
                json!({
                    "property": r.name,
                    "verdict": r.verdict.word(),
                    "steps": report::steps(r),
                    "explanation": r.trace.as_ref().map(|t| model.explain(r.name, &t.last)),
                    "story": match (r.verdict, outcome.story(&model, r.name)) {
                        (Verdict::Violated, Some(s)) => report::story_json(&s),
                        _ => Value::Null,
                    },
                })
            })
            .collect();
        let value = json!({
            "design": design,
            "bounds": bounds_json(&bounds, &options),
            "results": results,
            "stats": report::stats_json(design, &outcome.stats),
        });
        println!("{}", serde_json::to_string_pretty(&value).expect("JSON"));
        return Ok(outcome.exit_code() as u8);
    }
    let style = Style::for_stdout();
    println!(
        "{}\n",
        style.bold(&format!(
            "slotcheck check: {design} on link, {}",
            bounds_line(&bounds, &options)
        ))
    );
    for r in &outcome.results {
        let cell = report::verdict_cell(r);
        println!("  {:<22}{}", r.name, style.verdict(r.verdict, &cell));
    }
    println!();
    print!(
        "{}",
        report::stats_table(&[(design.to_string(), outcome.stats)], style)
    );
    for r in outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
    {
        let trace = r.trace.as_ref().expect("a violation has a trace");
        let steps = model.tell(&trace.init, &trace.actions);
        println!(
            "\n{}",
            style.bold(&format!(
                "{}: the shortest counterexample, {} steps",
                r.name,
                trace.steps()
            ))
        );
        print!(
            "{}",
            report::story_text(&steps, &model.explain(r.name, &trace.last))
        );
    }
    if let Some(cut) = outcome.stats.cut {
        println!(
            "\ninconclusive: {}; what was not decided is not a verdict",
            cut.describe()
        );
    }
    Ok(outcome.exit_code() as u8)
}
