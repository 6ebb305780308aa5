//! slotcheck: the tool around the models. `check` runs stateright's BFS with
//! the remedies its 0.31 release needs, `report` turns outcomes into tables,
//! stories and JSON, `bench` measures.

pub mod bench;
pub mod check;
pub mod diagram;
pub mod explore;
pub mod html;
pub mod itf;
pub mod link;
pub mod progress;
pub mod report;
pub mod see;
pub mod stovepipe;
