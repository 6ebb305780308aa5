//! Every `--json` output's schema: a file under `docs/`, generated from the
//! output's own types (schemars), so the shape is written down once. Here,
//! at the top of the house, because the types live in several rooms
//! (`report`, and `simulate` for the report `merge` also reads back).

use crate::report::{bench, comparison, mutation, results, validation};
use crate::simulate::Report as SimulationReport;
use serde_json::Value;

/// A schema file and the output it describes.
pub struct SchemaFile {
    /// The file, from the repository's root.
    pub file: &'static str,
    /// The command whose `--json` it describes.
    pub output: &'static str,
    pub schema: fn() -> Value,
}

fn of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON")
}

/// Every `--json` output and its schema file.
pub const SCHEMA_FILES: [SchemaFile; 8] = [
    SchemaFile {
        file: "docs/report.schema.json",
        output: "check [PATH...]",
        schema: results::scenario_run_schema,
    },
    SchemaFile {
        file: "docs/schemas/bench.schema.json",
        output: "bench",
        schema: of::<bench::BenchReport>,
    },
    SchemaFile {
        file: "docs/schemas/check-design.schema.json",
        output: "check --design D",
        schema: of::<comparison::DesignCheck>,
    },
    SchemaFile {
        file: "docs/schemas/compare.schema.json",
        output: "compare",
        schema: of::<comparison::Comparison>,
    },
    SchemaFile {
        file: "docs/schemas/compare-findings.schema.json",
        output: "compare --findings",
        schema: of::<comparison::FindingsTable>,
    },
    SchemaFile {
        file: "docs/schemas/mutate.schema.json",
        output: "mutate",
        schema: of::<Vec<mutation::DesignMutants>>,
    },
    SchemaFile {
        file: "docs/schemas/simulate.schema.json",
        output: "simulate, merge",
        schema: of::<SimulationReport>,
    },
    SchemaFile {
        file: "docs/schemas/validate-report.schema.json",
        output: "validate LOG",
        schema: of::<validation::Validation>,
    },
];
