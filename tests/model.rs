//! The tests that need no real system, in one binary: each file of tests/
//! below is a module here (its tests named `file::test`), so the test
//! command builds one binary for them rather than 27, and their tests share
//! the cores as one list. The tests that start real systems or time
//! signals keep binaries of their own (Cargo.toml's `[[test]]`), so that a
//! CPU-heavy search never runs beside them.

mod common;

#[path = "add_a_design.rs"]
mod add_a_design;
#[path = "book.rs"]
mod book;
#[path = "bounds.rs"]
mod bounds;
#[path = "checker.rs"]
mod checker;
#[path = "contract.rs"]
mod contract;
#[path = "coverage.rs"]
mod coverage;
#[path = "cycles.rs"]
mod cycles;
#[path = "designs.rs"]
mod designs;
#[path = "designs_unchanged.rs"]
mod designs_unchanged;
#[path = "exactness.rs"]
mod exactness;
#[path = "grid.rs"]
mod grid;
#[path = "link_claims.rs"]
mod link_claims;
#[path = "link_exactness.rs"]
mod link_exactness;
#[path = "link_repairs.rs"]
mod link_repairs;
#[path = "link_simulate.rs"]
mod link_simulate;
#[path = "logging.rs"]
mod logging;
#[path = "mutate.rs"]
mod mutate;
#[path = "one_build.rs"]
mod one_build;
#[path = "progress.rs"]
mod progress;
#[path = "properties.rs"]
mod properties;
#[path = "readme.rs"]
mod readme;
#[path = "rename_exactness.rs"]
mod rename_exactness;
#[path = "repairs.rs"]
mod repairs;
#[path = "reports.rs"]
mod reports;
#[path = "rooms.rs"]
mod rooms;
#[path = "scenarios.rs"]
mod scenarios;
#[path = "see.rs"]
mod see;
#[path = "simulate.rs"]
mod simulate;
#[path = "split_read_exactness.rs"]
mod split_read_exactness;
#[path = "validate.rs"]
mod validate;
#[path = "validate_link.rs"]
mod validate_link;
#[path = "validate_services.rs"]
mod validate_services;
