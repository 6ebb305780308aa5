//! The link builders on a real `nats-server` with JetStream
//! (docs/real-jetstream.md): a private server, a delaying proxy, the
//! reference builder of the four designs, scripted replays of the model's
//! stories and seeded live runs. The checker's core never depends on this
//! crate; the `slotcheck` binary reaches it through the `real` feature.

pub mod builder;
pub mod bus;
pub mod design;
pub mod gobuilder;
pub mod golive;
pub mod live;
pub mod log;
pub mod machine;
pub mod proxy;
pub mod replay;
pub mod script;
pub mod server;
// The same file as slotcheck-sql's: neither crate depends on the other.
#[path = "../../sql/src/sweep.rs"]
mod sweep;
pub mod verdict;
