//! The private folders a killed slotcheck left behind, removed by the next
//! one. Shared as source by `slotcheck-sql` and `slotcheck-nats` (each
//! includes this file as a module of its own): neither crate depends on the
//! other, and one function should not make one pull in the other's engines.

use std::path::Path;

/// Removes the folders beside `dir` (a private folder
/// `slotcheck-<kind>-<pid>-<n>` about to be made) of the same kind whose
/// process is gone. A run's folders go when it ends, by its drops or by its
/// watchdog; a session or a CI job killed whole (SIGKILL to every process,
/// the watchdog too) runs neither, and its folders stayed for good. A
/// folder whose process lives, of another kind, or named otherwise than
/// exactly so is never touched; nor is anything when /proc cannot say
/// which processes live.
pub(crate) fn sweep_beside(dir: &Path) {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let Some((kind, _, _)) = parse(name) else {
        return;
    };
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(theirs) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some((their_kind, pid, _)) = parse(&theirs) else {
            continue;
        };
        // file_type does not follow a symlink: only a real folder goes.
        let folder = entry.file_type().is_ok_and(|t| t.is_dir());
        if their_kind == kind && folder && !alive(pid) {
            // Another user's folder, or one being removed, is left as it is.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `slotcheck-<kind>-<pid>-<n>`: its kind, pid and number; `None` for any
/// other name (numbers only as slotcheck writes them: no sign, no leading
/// zero, whose `/proc` entry would name another process).
fn parse(name: &str) -> Option<(&str, u32, u64)> {
    let mut parts = name.strip_prefix("slotcheck-")?.rsplitn(3, '-');
    let (n, pid, kind) = (parts.next()?, parts.next()?, parts.next()?);
    let pid: u32 = pid.parse().ok().filter(|p: &u32| p.to_string() == pid)?;
    let n: u64 = n.parse().ok().filter(|m: &u64| m.to_string() == n)?;
    let plain = !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase());
    plain.then_some((kind, pid, n))
}

fn alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// Pids no process has: one of a process that ran and was waited for (its
/// pid is not reused this soon), and one above the kernel's largest.
#[cfg(test)]
pub(crate) fn dead_pids() -> [u32; 2] {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    [child.id(), max + 1]
}

/// A test's fresh folder, removed however the test ends.
#[cfg(test)]
pub(crate) struct TestFolder(pub std::path::PathBuf);

#[cfg(test)]
impl TestFolder {
    pub(crate) fn new(name: &str) -> TestFolder {
        let dir = std::env::temp_dir().join(format!("slotcheck-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestFolder(dir)
    }
}

#[cfg(test)]
impl Drop for TestFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dead_processs_folder_of_the_kind_goes() {
        let folder = TestFolder::new("sweep-test");
        let base = &folder.0;
        let [dead, above] = dead_pids();
        let ours = std::process::id();
        let make = |name: &str| {
            std::fs::create_dir_all(base.join(name).join("data")).unwrap();
            name.to_string()
        };
        let gone = [
            make(&format!("slotcheck-mariadb-{dead}-0")),
            make(&format!("slotcheck-mariadb-{above}-12")),
        ];
        let kept = [
            // Ours, and our parent's: processes that live.
            make(&format!("slotcheck-mariadb-{ours}-3")),
            make(&format!(
                "slotcheck-mariadb-{}-0",
                std::os::unix::process::parent_id()
            )),
            // Another kind, and names not exactly of the form.
            make(&format!("slotcheck-nats-{dead}-0")),
            make(&format!("slotcheck-mariadb-{dead}-x")),
            make(&format!("slotcheck-mariadb-0{dead}-0")),
            make(&format!("slotcheck-mariadb-{dead}-0-1")),
            make(&format!("slotcheck-mariadb-{dead}")),
            make(&format!("slotcheck-mariadb-{dead}-0.bak")),
            make(&format!("other-mariadb-{dead}-0")),
        ];
        // A file and a symlink of the form are not folders to remove.
        let file = format!("slotcheck-mariadb-{dead}-7");
        std::fs::write(base.join(&file), "x").unwrap();
        let link = format!("slotcheck-mariadb-{dead}-8");
        std::os::unix::fs::symlink(base.join(&kept[0]), base.join(&link)).unwrap();

        sweep_beside(&base.join(format!("slotcheck-mariadb-{ours}-4")));

        for name in &gone {
            assert!(!base.join(name).exists(), "{name} was left");
        }
        for name in kept.iter().chain([&file, &link]) {
            assert!(base.join(name).exists(), "{name} was removed");
        }
        assert!(base.join(&kept[0]).join("data").is_dir(), "kept whole");
    }

    #[test]
    fn a_name_is_read_only_in_its_exact_form() {
        assert_eq!(parse("slotcheck-sqlite-123-4"), Some(("sqlite", 123, 4)));
        for name in [
            "slotcheck-sqlite-123",
            "slotcheck--123-4",
            "slotcheck-sqlite-+123-4",
            "slotcheck-sqlite-123-04",
            "slotcheck-edges-real-123-4",
            "slotcheck-Sqlite-123-4",
            "slotcheck-postgres-123-replay",
        ] {
            assert_eq!(parse(name), None, "{name}");
        }
    }
}
