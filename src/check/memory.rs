//! The process's memory, as Linux reports it (`/proc`), for the memory
//! budget and the benchmarks; and sizes as people write them (`8G`).

/// Resident memory now, in bytes.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// A `kB` line of a `/proc` file, in bytes.
fn kib_line(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The most resident memory so far (VmHWM), in bytes.
pub fn peak_bytes() -> Option<u64> {
    kib_line("/proc/self/status", "VmHWM:")
}

/// Resets the peak to the current resident size, so that each run's peak
/// is its own (writing 5 to clear_refs).
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Memory the machine can still give without swapping (MemAvailable).
pub fn available_bytes() -> Option<u64> {
    kib_line("/proc/meminfo", "MemAvailable:")
}

/// The memory budget when none is given: what this process holds now and
/// four fifths of what the machine can still give, so that a run is cut
/// (inconclusive) before the operating system kills it.
pub fn default_budget() -> Option<u64> {
    Some(resident_bytes()? + available_bytes()? / 5 * 4)
}

/// `8G`, `512M`, `1.5GiB`, `100000` (bytes) as bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (say 512M, 8G or a number of bytes)"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "`{other}` is not a unit of size (K, M, G or T, or none for bytes)"
            ))
        }
    };
    let bytes = number * scale as f64;
    if !(bytes >= 1.0 && bytes.is_finite()) {
        return Err(format!("a size must be at least one byte, not `{text}`"));
    }
    Ok(bytes as u64)
}

/// Bytes as MiB or GiB, for people.
pub fn show_size(bytes: u64) -> String {
    let mib = bytes as f64 / (1 << 20) as f64;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("8X").unwrap_err().contains("unit"));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("0").is_err());
        assert_eq!(show_size(3 << 29), "1.5 GiB");
    }

    #[test]
    fn this_process_has_memory() {
        assert!(resident_bytes().unwrap() > 0);
        assert!(peak_bytes().unwrap() >= resident_bytes().unwrap() / 2);
        assert!(default_budget().unwrap() > resident_bytes().unwrap());
    }
}
