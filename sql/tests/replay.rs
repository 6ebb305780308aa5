//! Every scripted story of every stovepipe scenario file replays on SQLite
//! and on MariaDB with the rows equal to the model's at every step, and ends
//! in the violation it is told for, visible in the rows.

mod common;

use slotcheck_models::Narrated;
use slotcheck_sql::replay::{replay, Failure};
use slotcheck_sql::Backend;

/// The properties the rows alone can show (the others need history).
const VISIBLE: [&str; 5] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
    "no-message-left-in-flight",
];

fn replay_stories(backend: &Backend) {
    let stories = common::stories();
    assert!(stories.len() >= 10, "the scenario files tell stories");
    for story in stories {
        let mut model = common::model(&story.design, story.bounds);
        for option in &story.options {
            slotcheck_models::NamedOptions::set(&mut model.options, option)
                .unwrap_or_else(|e| panic!("{}: {e}", story.file));
        }
        let init = model.initial_state();
        let actions = model
            .parse(&init, &story.steps)
            .unwrap_or_else(|e| panic!("{}: {}", story.file, e.message));
        match replay(backend, &model, &init, &actions) {
            Ok(done) => {
                if VISIBLE.contains(&story.violates.as_str()) {
                    assert!(
                        done.violations.contains(&story.violates.as_str()),
                        "{} ({}): the rows do not show {}: {:?}",
                        story.file,
                        story.design,
                        story.violates,
                        done.rows
                    );
                }
            }
            Err(Failure::Conformance(c)) => {
                panic!(
                    "{} ({}) on {}:\n{}",
                    story.file,
                    story.design,
                    backend.engine.name(),
                    c.text()
                )
            }
            Err(Failure::Database(e)) => panic!("{}: {e}", story.file),
        }
    }
}

#[test]
fn every_story_replays_on_sqlite() {
    replay_stories(&Backend::sqlite().unwrap());
}

#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn every_story_replays_on_mariadb() {
    replay_stories(&common::mariadb_backend("stories"));
}

/// Every design of the model has its SQL parts.
#[test]
fn every_design_has_sql() {
    for design in slotcheck_models::stovepipe::DESIGNS {
        assert!(
            slotcheck_sql::parts::parts_of(&design).is_ok(),
            "{} has no parts",
            design.name
        );
    }
}
