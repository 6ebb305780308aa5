//! slotcheck: the tool around the models. `check` runs stateright's BFS with
//! the remedies its 0.31 release needs, `report` turns outcomes into tables,
//! stories and JSON, `bench` measures.

pub mod bench;
pub mod check;
pub mod itf;
pub mod report;
pub mod scenario;
pub mod stovepipe;
