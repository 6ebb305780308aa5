//! `slotcheck compare`: every design of a model on the same bounds, or with
//! `--findings` every design on every finding's own bounds.

use super::adhoc;
use super::args::LimitArgs;
use crate::models::{ForModel, ModelArgs, ToolModel};
use crate::report::itf;
use crate::report::see::CompareOutputArgs;
use crate::report::{self, html, JsonArgs, Style};
use crate::scenario::findings::{self, Hold, Reading};
use clap::{ArgMatches, Args};
use std::path::PathBuf;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    // `--json` (one JSON object instead of the table) and `--json-out FILE`.
    #[command(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    pub output: CompareOutputArgs,
    /// What to merge: instead of the bounds given, every design on every
    /// finding's own bounds (each scenario file that names one, `finding =
    /// "PROPERTY"`): a row per design, a column per finding, each cell the
    /// verdict and its story, and what each design costs.
    #[arg(long)]
    pub findings: bool,
    /// Only these designs (repeatable), each a name or a composition
    /// (`owner-keyed+atomic-admit`); with --findings, the table's rows.
    #[arg(long = "design", value_name = "DESIGN", value_parser = crate::models::design_names())]
    pub designs: Vec<String>,
    /// With --findings: the scenario files or directories to take the
    /// findings from (default: scenarios/).
    #[arg(long = "scenarios", value_name = "PATH", requires = "findings")]
    pub scenario_paths: Vec<PathBuf>,
    /// With --findings: print the table as Markdown (as the README shows it).
    #[arg(long, requires = "findings", conflicts_with = "stories")]
    pub markdown: bool,
    /// With --findings: print every violation's story as Markdown (the page
    /// the Markdown table's cells link to).
    #[arg(long, requires = "findings")]
    pub stories: bool,
    /// With --findings: how the workers read R's row, the queue row and the
    /// latest head: in one snapshot (one joined SELECT, or a read
    /// transaction at REPEATABLE READ), in separate statements
    /// (`split-read`: three SELECTs, or a transaction at READ COMMITTED),
    /// or both, each finding under each, and per design whether it needs
    /// a one-snapshot read [default: both for stovepipe; one-snapshot for
    /// a model without split reads]
    #[arg(long, value_enum, value_name = "READING", requires = "findings")]
    pub reading: Option<ReadingArg>,
    /// With --findings: how the broker holds a message the gate turned
    /// away: parked until the queue's next durable write (the contract's
    /// reading), or delayed, back after a while whatever was written (SQS's
    /// ChangeMessageVisibility; the model option delayed-hold) [default:
    /// parked]
    #[arg(long, value_enum, value_name = "HOLD", requires = "findings")]
    pub hold: Option<HoldArg>,
}

/// `--hold`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldArg {
    Parked,
    Delayed,
}

/// `--reading`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadingArg {
    OneSnapshot,
    SplitRead,
    Both,
}

impl ReadingArg {
    fn reading(self) -> Reading {
        match self {
            ReadingArg::OneSnapshot => Reading::OneSnapshot,
            ReadingArg::SplitRead => Reading::SplitRead,
            ReadingArg::Both => Reading::Both,
        }
    }
}

/// `compare`: every design of the model on the bounds given.
pub struct Compare(pub CompareArgs);

impl ForModel for Compare {
    type Out = Result<u8, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let args = self.0;
        let names: Vec<&str> = if args.designs.is_empty() {
            M::source_design_names()
        } else {
            args.designs.iter().map(String::as_str).collect()
        };
        let models = names
            .iter()
            .map(|d| M::from_flags(&args.model, d))
            .collect::<Result<Vec<_>, _>>()?;
        adhoc::compare(models, &args.limits.limits()?, &args.json, &args.output)
    }
}

/// `compare --findings`: the what-to-merge table. Each finding brings its
/// own bounds, so bound flags are refused.
pub fn compare_findings(args: CompareArgs, matches: Option<&ArgMatches>) -> Result<u8, String> {
    let given = args.model.given(matches, false);
    if !given.is_empty() {
        return Err(format!(
            "--findings checks each finding on its own bounds (its scenario file's): leave out {}",
            given.join(", ")
        ));
    }
    let model = args.model.model.name();
    let paths = if args.scenario_paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.scenario_paths.clone()
    };
    let mut outputs = Vec::new();
    if let Some(file) = &args.json.json_out {
        outputs.push(itf::Output::file("--json-out", file));
    }
    if let Some(file) = &args.output.html {
        outputs.push(itf::Output::file("--html", file));
    }
    // Every file the run reads: each scenario file under the paths.
    let inputs = crate::scenario::files(&paths).map_err(|e| e.to_string())?;
    itf::check_outputs(&outputs, &inputs)?;
    let reading = match args.reading {
        Some(given) => given.reading(),
        None if findings::model_reads_split(model) => Reading::Both,
        None => Reading::OneSnapshot,
    };
    let table = findings::run(
        &paths,
        model,
        &args.limits.limits()?,
        &args.designs,
        reading,
        match args.hold {
            Some(HoldArg::Delayed) => Hold::Delayed,
            _ => Hold::Parked,
        },
    )?;
    let json = report::json_text(&findings::record(&table));
    if args.json.json {
        print!("{json}");
    } else if args.markdown {
        print!("{}", findings::markdown(&table));
    } else if args.stories {
        print!("{}", findings::stories(&table));
    } else {
        let style = Style::for_stdout();
        println!(
            "{}\n",
            style.bold(&format!(
                "slotcheck compare --findings: {model}, {} findings, {} reads{}",
                table.columns.len(),
                reading.word(),
                match table.hold {
                    Hold::Parked => "",
                    Hold::Delayed => ", delayed holds",
                }
            ))
        );
        print!("{}", findings::text(&table, style));
        println!(
            "\nA cell's story: slotcheck check{} --design DESIGN [the finding's bounds] --property PROPERTY",
            crate::models::model_flag(model)
        );
    }
    let mut writes = Vec::new();
    if let Some(file) = &args.json.json_out {
        writes.push((file.clone(), json.into_bytes()));
    }
    if let Some(file) = &args.output.html {
        let page = html::render(&findings::page(&table));
        writes.push((file.clone(), page.into_bytes()));
    }
    itf::write_reports(&writes, |_| {})?;
    Ok(if table.cut() { 3 } else { 0 })
}
