//! `slotcheck bench`: a fixed matrix of bounds for each design.

pub fn run(_threads: usize, _json: bool) -> Result<u8, String> {
    Err("bench: not yet".into())
}
