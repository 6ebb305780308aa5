//! What a run writes (issue 19): one rule for every command, checked before
//! the run: no output is a file the run reads, under any spelling; no two
//! outputs on one path, the files under `--out` included; and a special file
//! (a device, a FIFO, a link) is written in place or followed, never
//! replaced.

mod common;

use common::{code, stderr};

use common::{command, ROOT};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// A scratch copy of the repository's inputs: scenarios/ and mutants/.
fn workspace(name: &str) -> common::Scratch {
    let dir = common::scratch("outputs", name);
    for sub in ["scenarios", "mutants"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for entry in std::fs::read_dir(Path::new(ROOT).join(sub)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(sub).join(entry.file_name())).unwrap();
        }
    }
    dir
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    command()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the slotcheck binary runs")
}

/// Every file under `dir`, with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

#[test]
fn no_command_writes_over_a_file_it_reads() {
    let dir = workspace("inputs");
    let before = snapshot(&dir);
    let small = ["--requests", "1", "--stalls", "0"];
    let cases: Vec<Vec<&str>> = vec![
        // The default list of equivalent mutants, read without --equivalent.
        [
            &[
                "mutate",
                "--design",
                "fail-open",
                "--json-out",
                "mutants/equivalent.toml",
            ][..],
            &small,
        ]
        .concat(),
        [
            &[
                "mutate",
                "--design",
                "fail-open",
                "--html",
                "./mutants/../mutants/equivalent.toml",
            ][..],
            &small,
        ]
        .concat(),
        // A scenario file read through its directory.
        [
            &[
                "mutate",
                "--design",
                "fail-open",
                "--scenarios",
                "scenarios",
                "--json-out",
                "scenarios/SP-OCT-003.toml",
            ][..],
            &small,
        ]
        .concat(),
        vec![
            "compare",
            "--findings",
            "--json-out",
            "scenarios/SP-OCT-003.toml",
        ],
        vec![
            "compare",
            "--findings",
            "--scenarios",
            "scenarios",
            "--html",
            "scenarios/../scenarios/SP-OCT-003.toml",
        ],
    ];
    for args in &cases {
        let output = run_in(&dir, args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("is an input of this run"),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{args:?}: refused before the run");
    }
    // A hard link is another spelling of the same file.
    std::fs::hard_link(
        dir.join("scenarios/SP-OCT-003.toml"),
        dir.join("alias.toml"),
    )
    .unwrap();
    let output = run_in(
        &dir,
        &[
            "check",
            "scenarios/SP-OCT-003.toml",
            "--json-out",
            "alias.toml",
        ],
    );
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    std::fs::remove_file(dir.join("alias.toml")).unwrap();
    assert_eq!(snapshot(&dir), before, "no input changed");
}

#[test]
fn no_output_goes_where_a_run_writes_under_out() {
    let dir = workspace("under-out");
    let cases: [&[&str]; 2] = [
        &[
            "check",
            "scenarios/SP-OCT-003.toml",
            "--out",
            "od",
            "--junit",
            "od/SP-OCT-003/claim-first.no-wedge.txt",
        ],
        &[
            "check",
            "--design",
            "claim-first",
            "--requests",
            "1",
            "--stalls",
            "0",
            "--out",
            "od",
            "--json-out",
            "od/claim-first-no-wedge-check.itf.json",
        ],
    ];
    for args in cases {
        let output = run_in(&dir, args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("is inside --out od"),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!dir.join("od").exists(), "{args:?}: nothing written");
    }
}

#[test]
fn special_files_are_written_in_place_and_links_followed() {
    let dir = common::scratch("outputs", "special");
    let check = |json_out: &Path| {
        command()
            .args([
                "check",
                "--design",
                "claim-first",
                "--requests",
                "1",
                "--stalls",
                "0",
                "--quiet",
                "--json-out",
            ])
            .arg(json_out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    };
    let file_type = |path: &Path| std::fs::symlink_metadata(path).unwrap().file_type();

    // A FIFO: what is written goes to its reader; the FIFO stays.
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let output = check(&fifo);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(reader
        .join()
        .unwrap()
        .contains("\"design\": \"claim-first\""));
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&file_type(&fifo)));

    // A link to a file: the target is written, the link stays a link.
    let target = dir.join("real.json");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    assert_eq!(code(&check(&link)), 1);
    assert!(file_type(&link).is_symlink());
    assert!(std::fs::read_to_string(&target)
        .unwrap()
        .contains("claim-first"));

    // A link to the process's standard output: the report goes there.
    let stdout_link = dir.join("stdout.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout_link).unwrap();
    let output = check(&stdout_link);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("\"design\": \"claim-first\""));
    assert!(file_type(&stdout_link).is_symlink());

    // A full device (a copy of /dev/full, which takes root to make): the
    // write fails and says so; the device stays.
    let full = dir.join("full");
    let made = std::process::Command::new("mknod")
        .arg(&full)
        .args(["c", "1", "7"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let output = check(&full);
        assert_eq!(code(&output), 2, "{}", stderr(&output));
        assert!(
            stderr(&output).contains("No space left"),
            "{}",
            stderr(&output)
        );
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&file_type(
            &full
        )));
    } else {
        eprintln!("not root: the full-device case is left out");
    }
}
