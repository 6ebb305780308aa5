//! Each model's glue.

pub mod link;
pub mod stovepipe;
