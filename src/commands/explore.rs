//! `slotcheck explore`: stateright's Explorer on one design, or on the path
//! of a saved trace.

use crate::explore;
use crate::models::whole;
use crate::models::ModelBounds;
use crate::models::{self, ForModel, ModelArgs, ToolModel};
use clap::Args;

#[derive(Args)]
pub struct ExploreArgs {
    /// The design to explore.
    #[arg(long, value_name = "DESIGN", value_parser = models::design_names())]
    pub design: String,
    #[command(flatten)]
    pub model: ModelArgs,
    /// The port on 127.0.0.1 (0: any free port; the address is printed).
    #[arg(long, value_name = "PORT", default_value_t = 3000, value_parser = whole(0u16, Some(u16::MAX)))]
    pub port: u16,
    /// A saved counterexample (ITF, as written by slotcheck): print the Explorer address that walks it.
    #[arg(long, value_name = "TRACE.itf.json")]
    pub from: Option<std::path::PathBuf>,
}

/// Serves the Explorer on the design given.
pub struct Explore(pub ExploreArgs);

impl ForModel for Explore {
    type Out = Result<u8, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let args = self.0;
        let model = M::from_flags(&args.model, &args.design)?;
        let heading = format!("{} on {}, {}", args.design, M::NAME, model.bounds_line());
        explore_model(model, &args, &heading)
    }
}

/// Serves the Explorer; with `--from`, first turns the trace into the
/// Explorer address that walks it (refusing a trace of other bounds).
fn explore_model<M: ToolModel>(model: M, args: &ExploreArgs, heading: &str) -> Result<u8, String> {
    let fragment = match &args.from {
        None => None,
        Some(path) => {
            let (init, actions) = explore::trace_actions(&model, path)?;
            Some(explore::steps_fragment(&model, init, &actions)?)
        }
    };
    explore::serve(model, args.port, heading, fragment.as_deref())
}
