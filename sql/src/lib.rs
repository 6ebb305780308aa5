//! The stovepipe designs as real SQL on real engines: embedded SQLite and
//! a private MariaDB server. `replay` runs a model path statement by
//! statement and compares the rows after every step; `live` runs the
//! handlers concurrently on worker threads with a fault injector and checks
//! the invariants on the real rows. The models crate never depends on this
//! one; the `slotcheck` binary reaches it through its `real` feature.
//!
//! `engine.rs` one connection to any engine; `mariadb.rs` and
//! `postgres.rs` the private servers; `backend.rs` where a run's database lives; `store.rs` the
//! schema, the client, the message table and the build system; `parts.rs`
//! each design's parts; `sqltext.rs` the statements; `handlers.rs` the
//! handlers as SQL; `replay.rs` a model path on a database.

pub mod backend;
pub mod engine;
pub mod handlers;
pub mod live;
pub mod mariadb;
pub mod parts;
pub mod postgres;
mod private;
pub mod replay;
pub mod sqltext;
pub mod steer;
pub mod store;
mod sweep;

pub use backend::Backend;
pub use engine::EngineName;
