//! Each model's glue.

pub mod stovepipe;
