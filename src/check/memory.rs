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
/// is its own (writing 5 to clear_refs). The memory the runs before freed
/// is handed back first: the allocator keeps freed memory for reuse, and
/// what it keeps is resident, so it would count in the next run's peak.
pub fn reset_peak() -> bool {
    hand_back_freed();
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn hand_back_freed() {
    extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: glibc's malloc_trim only returns free memory to the system.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn hand_back_freed() {}

/// Memory the machine can still give without swapping (MemAvailable).
pub fn available_bytes() -> Option<u64> {
    kib_line("/proc/meminfo", "MemAvailable:")
}

/// The memory budget when none is given: what this process holds now and
/// four fifths of what the machine can still give, or four fifths of its
/// memory cgroup's limit when that is less (a container's: the kernel
/// kills the process at the limit, whatever the machine has), so that a
/// run is cut (inconclusive) before it is killed.
pub fn default_budget() -> Option<u64> {
    let machine = resident_bytes()? + available_bytes()? / 5 * 4;
    Some(match cgroup_limit() {
        Some(limit) => machine.min(limit / 5 * 4),
        None => machine,
    })
}

/// The most memory the process may ever hold: the machine's, or its
/// cgroup's limit when less.
pub fn most_there_is() -> Option<u64> {
    let total = kib_line("/proc/meminfo", "MemTotal:")?;
    Some(cgroup_limit().map_or(total, |limit| total.min(limit)))
}

/// The memory limit of this process's cgroup, if it has one.
pub fn cgroup_limit() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_limit_under(&own, std::path::Path::new(CGROUP_ROOT))
}

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A limit this high is none (v1 writes 2^63 rounded down to a page).
const NO_LIMIT: u64 = 1 << 60;

/// The least memory limit on the way from the process's cgroup (as
/// `/proc/self/cgroup` gives it, `own`) up to the root of the hierarchy
/// mounted under `root`: v2 (`0::PATH`, `memory.max`, mounted at `root` or
/// `root/unified`) and v1 (the `memory` controller, `memory.limit_in_bytes`
/// under `root/memory`). A parent's limit holds for its children; a path
/// that is not there (a container's view of the host's path) leaves the
/// levels above it, down to the mount's own root, which is the
/// container's cgroup.
pub fn cgroup_limit_under(own: &str, root: &std::path::Path) -> Option<u64> {
    let mut least: Option<u64> = None;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (mounts, file) = if controllers.is_empty() {
            (vec![root.to_path_buf(), root.join("unified")], "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (vec![root.join("memory")], "memory.limit_in_bytes")
        } else {
            continue;
        };
        let relative = std::path::Path::new(path.trim().trim_start_matches('/'));
        for mount in mounts {
            for level in relative.ancestors() {
                let text = std::fs::read_to_string(mount.join(level).join(file));
                let Some(limit) = text.ok().and_then(|t| t.trim().parse::<u64>().ok()) else {
                    continue; // absent, or `max`
                };
                if limit < NO_LIMIT {
                    least = Some(least.map_or(limit, |l| l.min(limit)));
                }
            }
        }
    }
    least
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
    if mib >= 1024.0 * 1024.0 {
        format!("{:.1} TiB", mib / 1024.0 / 1024.0)
    } else if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

/// Asks Linux to back `buffer` with huge pages (2 MiB) where it can: a
/// fingerprint table of gigabytes is read at random, and with 4 KiB pages
/// its looks miss the TLB as well as the cache. Only whole 2 MiB pages
/// inside the buffer are advised, so a small shard is left as it is (on
/// tables of tens of megabytes no gain was measured). Most systems give
/// transparent huge pages only where asked (`madvise`). A hint: nothing
/// changes if it is refused.
pub fn prefer_huge_pages<T>(buffer: &[T]) {
    const HUGE: usize = 2 << 20;
    let start = buffer.as_ptr() as usize;
    let end = start + std::mem::size_of_val(buffer);
    let (from, to) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if to > from {
        advise_huge(from, to - from);
    }
}

/// `n` zeros, in huge pages where the system gives them, every page
/// written once now. Linux maps memory first read while untouched to its
/// one zero page, and the first write after costs a second fault and, with
/// a second thread running, a flush of the other core's TLB (an interrupt
/// that core must answer before the write goes on): the fingerprint table
/// and the progress walk read most of their fresh memory before writing
/// it, some hundred thousand such flushes a run on the larger bounds.
pub fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    const PAGE: usize = 4096;
    let mut list = vec![T::default(); n];
    prefer_huge_pages(&list);
    let step = (PAGE / std::mem::size_of::<T>().max(1)).max(1);
    for at in (0..n).step_by(step) {
        // SAFETY: a write of the value already there, through a place of
        // the list, that the compiler must not leave out.
        unsafe { std::ptr::write_volatile(&mut list[at], T::default()) };
    }
    list
}

#[cfg(target_os = "linux")]
fn advise_huge(from: usize, len: usize) {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    // SAFETY: advice on whole pages inside a live allocation; it changes
    // how they are backed, never their contents.
    unsafe {
        madvise(from as *mut std::ffi::c_void, len, MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_from: usize, _len: usize) {}

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
    fn the_cgroup_limit_is_the_least_on_the_way_up_in_v1_and_v2() {
        let root = std::env::temp_dir().join(format!("slotcheck-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let put = |path: &str, text: &str| {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        // v2: the job's own limit is `max`, its parent's 300 MB.
        put("ci.slice/memory.max", "314572800\n");
        put("ci.slice/job-7/memory.max", "max\n");
        assert_eq!(
            cgroup_limit_under("0::/ci.slice/job-7\n", &root),
            Some(314572800)
        );
        // v1, the memory controller among others; the root's figure means none.
        put("memory/memory.limit_in_bytes", "9223372036854771712\n");
        put("memory/docker/abc/memory.limit_in_bytes", "209715200\n");
        let v1 = "5:devices:/docker/abc\n4:memory,foo:/docker/abc\n0::/\n";
        assert_eq!(cgroup_limit_under(v1, &root), Some(209715200));
        // A path the container cannot see: the mount's root is its cgroup.
        put("memory/memory.limit_in_bytes", "104857600\n");
        assert_eq!(
            cgroup_limit_under("4:memory:/host/path/not/here\n", &root),
            Some(104857600)
        );
        // No memory limit anywhere.
        assert_eq!(
            cgroup_limit_under("1:cpu:/x\n0::/elsewhere\n", &root.join("none")),
            None
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn this_process_has_memory() {
        assert!(resident_bytes().unwrap() > 0);
        assert!(peak_bytes().unwrap() >= resident_bytes().unwrap() / 2);
        assert!(default_budget().unwrap() > resident_bytes().unwrap());
    }
}
