//! The commands.

pub mod adhoc;
pub mod bench;
