//! Each model's properties are tied to their explanations: every property
//! a model checks has its own sentence for a violated (or reached) state,
//! and the model's page in the book names it, so that a property added in
//! code is explained to the reader of a story and of the book.

use slotcheck::models::{for_model, ForModel, ToolModel, MODELS};
use slotcheck_models::Narrated;

/// (property, what `explain` says of it in an initial state).
struct Explained;

impl ForModel for Explained {
    type Out = Vec<(&'static str, String)>;
    fn run<M: ToolModel>(self) -> Self::Out {
        let model = M::first_design(M::DEFAULT_BOUNDS);
        let init = model.init_states().remove(0);
        model
            .properties()
            .iter()
            .map(|p| (p.name, Narrated::explain(&model, p.name, &init)))
            .collect()
    }
}

#[test]
fn every_property_has_its_own_explanation_and_a_line_in_its_models_page() {
    for model in MODELS {
        let page =
            std::fs::read_to_string(format!("{}/docs/{model}.md", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let explained = for_model(model, Explained).unwrap();
        assert!(explained.len() >= 5, "{model}: {explained:?}");
        for (property, said) in explained {
            assert!(
                said.starts_with(property) && !said.contains("no such property"),
                "{model}/{property}: explain has no sentence of its own for it: {said}"
            );
            assert!(
                page.contains(&format!("`{property}`")),
                "{model}/{property}: docs/{model}.md does not name it"
            );
        }
    }
}
