//! slotcheck: the tool around the models, in rooms that data flows through
//! one way. A command (`commands`) parses its arguments and builds a model
//! through the registry (`models`), runs the exhaustive checker (`check`),
//! the simulator (`simulate`), mutation testing (`mutate`) or the scenario
//! files (`scenario`), and hands the results to a reporter (`report`).
//!
//! Each room says in its module comment what it owns and what it may not
//! touch. From the bottom up: `check`, `report`, `models`, `simulate`,
//! `mutate`, `scenario`, `explore`, `validate` (a real system's event log
//! against a model), `commands`; a room uses only rooms listed before it. `models` uses none of the others, and they reach a
//! model only through its `ToolModel` trait and its registry.

pub mod check;
pub mod commands;
pub mod explore;
pub mod models;
pub mod mutate;
pub mod report;
pub mod scenario;
pub mod simulate;
pub mod validate;
