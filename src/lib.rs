//! slotcheck: the tool around the models. `check` runs stateright's BFS with
//! the remedies its 0.31 release needs, `report` turns outcomes into tables,
//! stories and JSON, `bench` measures; `simulate`, `shrink` and `replay`
//! walk the same models at random, shorten what they find and re-run it.

pub mod adhoc;
pub mod bench;
pub mod check;
pub mod diagram;
pub mod explore;
pub mod html;
pub mod itf;
pub mod link;
pub mod progress;
pub mod replay;
pub mod report;
pub mod scenario;
pub mod see;
pub mod shrink;
pub mod simulate;
pub mod stovepipe;
