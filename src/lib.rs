//! slotcheck: the tool around the models. `check` is its own breadth-first
//! search over the models' packed states, `report` turns outcomes into tables,
//! stories and JSON, `bench` measures; `simulate`, `shrink` and `replay`
//! walk the same models at random, shorten what they find and re-run it.

pub mod check;
pub mod commands;
pub mod explore;
pub mod models;
pub mod mutate;
pub mod report;
pub mod scenario;
pub mod simulate;
