//! The commands.

pub mod adhoc;
pub mod bench;
pub mod skew;
