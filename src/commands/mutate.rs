//! `slotcheck mutate`: every mutant of each design, on the bounds given and
//! (with `--scenarios`) on each scenario's; the report printed and written.

use super::args::LimitArgs;
use crate::models::ModelBounds;
use crate::models::{self, ForModel, ModelArgs, ToolModel};
use crate::mutate::{self as mutation, Equivalents};
use crate::report::{self, itf, JsonArgs, Style};
use crate::scenario;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args)]
pub struct MutateArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Only this design's mutants (repeatable); default: every design of the model.
    #[arg(long, value_name = "DESIGN", value_parser = models::design_names())]
    pub design: Vec<String>,
    /// Also check every mutant on the bounds of each scenario file of the model under PATH
    /// (a directory or files; repeatable, and several may follow one flag, so a shell glob
    /// works: `--scenarios scenarios` for the shipped ones, `--scenarios scenarios/grid-*.toml`
    /// for the grid's cells alone), smallest first: a mutant is killed on any. Scenarios
    /// marked `slow` are left out.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub scenarios: Vec<PathBuf>,
    /// The list of equivalent mutants (that cannot change behaviour) and of known survivors,
    /// each with why (default: mutants/equivalent.toml, if it exists). One that is killed is
    /// reported: the list must stay true.
    #[arg(long, value_name = "FILE")]
    pub equivalent: Option<PathBuf>,
    /// Exit 0 when every survivor is listed as a known one (a nightly run: it fails only on a
    /// new survivor, or a listed mutant killed). Without it any survivor exits 1.
    #[arg(long)]
    pub allow_known_survivors: bool,
    /// For each survivor, look for the smallest bounds that kill it on a ladder of richer
    /// bounds (one to three requests, one or two slots, up to two crashes and two stalls):
    /// what says the given bounds were too small.
    #[arg(long)]
    pub search: bool,
    /// Kill a mutant only by a changed verdict, not by a changed shortest length alone: what
    /// sees through masking (a design that already violates a property shows a new bug only
    /// where its verdicts change; with --scenarios, in any scenario's bounds, the grid's cells
    /// among them). A length-only difference is a story change. The report then lists the
    /// mutants no verdict tells from their design on the given bounds, and what kills them.
    #[arg(long)]
    pub verdicts_only: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub json: JsonArgs,
    /// Also write the report as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `slotcheck mutate`: every mutant of each design, on the bounds given and
/// (with `--scenarios`) on each scenario's.
pub struct Mutate(pub MutateArgs);

impl ForModel for Mutate {
    type Out = Result<u8, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let args = self.0;
        let names: Vec<String> = if args.design.is_empty() {
            M::source_design_names()
                .iter()
                .map(|d| d.to_string())
                .collect()
        } else {
            args.design.clone()
        };
        let models = names
            .iter()
            .map(|d| M::from_flags(&args.model, d))
            .collect::<Result<Vec<M>, _>>()?;
        run_mutate(models, &args)
    }
}

fn run_mutate<M: ToolModel>(designs: Vec<M>, args: &MutateArgs) -> Result<u8, String> {
    let default_list = PathBuf::from("mutants/equivalent.toml");
    let list = match &args.equivalent {
        Some(file) => Some(file.clone()),
        None => default_list.exists().then_some(default_list),
    };
    let equivalents = match &list {
        Some(file) => Equivalents::load(file)?,
        None => Equivalents::default(),
    };
    // Every file the run reads: the list, and each scenario file.
    let scenario_files = if args.scenarios.is_empty() {
        Vec::new()
    } else {
        scenario::files(&args.scenarios).map_err(|e| e.to_string())?
    };
    let mut outputs = Vec::new();
    if let Some(file) = &args.json.json_out {
        outputs.push(itf::Output::file("--json-out", file));
    }
    if let Some(file) = &args.html {
        outputs.push(itf::Output::file("--html", file));
    }
    let mut inputs = scenario_files.clone();
    inputs.extend(list);
    itf::check_outputs(&outputs, &inputs)?;
    let model_name = designs[0].model_name();
    let mut sets: Vec<Vec<M>> = designs.iter().map(|d| vec![d.clone()]).collect();
    let mut heading = designs[0].bounds_line();
    // The scenarios whose bounds each set of bounds is (by its flags).
    let mut cells: BTreeMap<String, String> = BTreeMap::new();
    if !args.scenarios.is_empty() {
        let scenarios = scenario::load_all(&scenario_files, &scenario::Selection::default())
            .map_err(|e| e.to_string())?;
        let mut mine: Vec<_> = scenarios
            .iter()
            .filter(|s| s.heading.model == model_name && !s.slow)
            .collect();
        // Smallest first: most mutants die on the first bounds that show them.
        let states = |s: &&scenario::Scenario| {
            let meta = s.meta();
            meta["bounds"]
                .as_object()
                .map_or(0u64, |b| b.values().filter_map(|v| v.as_u64()).sum())
        };
        mine.sort_by_key(states);
        for s in &mine {
            let mut meta = s.meta();
            let flags = M::from_meta(meta.as_object().expect("meta is an object"))?.bounds_flags();
            let names = cells.entry(flags).or_default();
            if !names.is_empty() {
                names.push_str(", ");
            }
            names.push_str(&s.heading.id);
            for (set, design) in sets.iter_mut().zip(&designs) {
                meta["design"] = serde_json::json!(design.variant());
                let object = meta.as_object().expect("meta is an object");
                let model = M::from_meta(object)?;
                // Bounds already in the set would check the same mutants again.
                if !set.iter().any(|m| m.bounds_flags() == model.bounds_flags()) {
                    set.push(model);
                }
            }
        }
        heading.push_str(&format!(
            ", and the bounds of {}",
            report::count(mine.len() as u64, "scenario")
        ));
    }
    let reports = mutation::run(
        &sets,
        &equivalents,
        &args.limits.limits()?,
        args.search,
        args.verdicts_only,
    );
    let listed: Vec<&String> = equivalents
        .reasons
        .keys()
        .filter(|name| {
            designs
                .iter()
                .any(|d| name.starts_with(&format!("{}/", d.variant())))
                && !reports
                    .iter()
                    .any(|r| r.mutants.iter().any(|m| &m.name == *name))
        })
        .collect();
    let json = report::json_text(&mutation::records(&reports));
    if args.json.json {
        print!("{json}");
    } else {
        let style = Style::for_stdout();
        println!(
            "{}\n",
            style.bold(&format!("slotcheck mutate: {model_name}, {heading}"))
        );
        let model_flag = models::model_flag(model_name);
        print!(
            "{}",
            mutation::text(
                &reports,
                &designs[0].bounds_line(),
                &cells,
                &model_flag,
                style
            )
        );
    }
    for name in &listed {
        eprintln!(
            "warning: the equivalent list names `{name}`, which is no mutant on these bounds"
        );
    }
    let mut writes = Vec::new();
    if let Some(file) = &args.json.json_out {
        writes.push((file.clone(), json.into_bytes()));
    }
    if let Some(file) = &args.html {
        writes.push((
            file.clone(),
            mutation::html(&reports, &heading).into_bytes(),
        ));
    }
    itf::write_reports(&writes, |_| {})?;
    Ok(mutation::exit_code(&reports, args.allow_known_survivors))
}
