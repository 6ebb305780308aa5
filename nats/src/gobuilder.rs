//! The Go builder (`go/src/slotcheck/builder`, on Debian's nats.go): built
//! with `go build` in GOPATH mode into the target folder, started one
//! process per builder, and driven one step at a time over its standard
//! input and output (one JSON line each way; docs/real-jetstream.md, *The
//! Go builder*). The events it logs come back with each answer and go into
//! the run's log under its name.
//!
//! A builder process that dies, answers nonsense or does not answer in time
//! is an error naming the builder and the step; the process is killed when
//! its handle goes, and exits by itself when its input closes.

use crate::builder::{Fetched, Started};
use crate::bus::{Error, Names};
use crate::design::{Design, Timing};
use crate::log::Log;
use serde::Deserialize;
use slotcheck_models::events::link::{Decision, Event};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The Go sources: `$SLOTCHECK_GO_ROOT`, else the repository's `go/`.
fn gopath_root() -> PathBuf {
    std::env::var_os("SLOTCHECK_GO_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../go"))
}

/// Debian's Go packages (nats.go and what it needs).
pub const DEBIAN_GOCODE: &str = "/usr/share/gocode";

/// `go`: `$SLOTCHECK_GO`, else on `PATH`, else Debian's `/usr/lib/go/bin/go`.
pub fn go_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SLOTCHECK_GO") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("go"))
                .find(|candidate| candidate.is_file())
        })
        .or_else(|| Some(PathBuf::from("/usr/lib/go/bin/go")).filter(|p| p.is_file()))
}

/// What to install when the Go builder cannot be built.
pub const MISSING: &str = "the Go builder needs Go and Debian's nats.go \
(apt-get install golang-go golang-github-nats-io-go-nats-dev)";

/// Builds the Go builder once per process (`go build`, GOPATH mode, no
/// module downloads) into the target folder and returns its path.
pub fn program() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<PathBuf, String> {
    let go = go_binary().ok_or(format!("`go` not found: {MISSING}"))?;
    if !Path::new(DEBIAN_GOCODE)
        .join("src/github.com/nats-io/nats.go")
        .is_dir()
    {
        return Err(format!(
            "nats.go not found under {DEBIAN_GOCODE}: {MISSING}"
        ));
    }
    let out = Path::new(env!("OUT_DIR"));
    let program = out.join("slotcheck-builder");
    // Built under a name of its own, then renamed: test binaries build it
    // at the same time.
    let partial = out.join(format!("slotcheck-builder.{}", std::process::id()));
    let root = gopath_root();
    let gopath = std::env::join_paths([root.as_path(), Path::new(DEBIAN_GOCODE)])
        .map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(&go);
    command
        .args(["build", "-o"])
        .arg(&partial)
        .arg("slotcheck/builder")
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env_remove("GOFLAGS")
        .env("GOPROXY", "off")
        .current_dir(&root);
    if std::env::var_os("GOCACHE").is_none() {
        command.env("GOCACHE", out.join("go-cache"));
    }
    let output = command
        .output()
        .map_err(|e| format!("{}: {e}", go.display()))?;
    if !output.status.success() {
        return Err(format!(
            "go build slotcheck/builder (GOPATH {}:{DEBIAN_GOCODE}) failed: {}",
            root.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    std::fs::rename(&partial, &program).map_err(|e| format!("{}: {e}", program.display()))?;
    Ok(program)
}

/// The flags that make the Go builder one design: the model's switches.
pub fn design_flags(design: Design) -> Vec<String> {
    let d = design.model();
    let mut flags = vec![format!("-design={}", d.name)];
    for (on, flag) in [
        (d.check.reads_key(), "-duplicate-check"),
        (d.check.on_server_times(), "-server-clock"),
        (d.start.revision_checked(), "-revision-start"),
        (d.busy_buffer.hands_back(), "-hand-back"),
        (d.finish_ack.sync(), "-sync-ack"),
        (d.duplicate.deferred(), "-defer-duplicates"),
        (d.finish_key.marks_done(), "-done-key"),
    ] {
        if on {
            flags.push(flag.to_string());
        }
    }
    flags
}

#[derive(Deserialize)]
struct HeldLine {
    ask: String,
    delivered: u64,
}

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    ask: Option<String>,
    #[serde(default)]
    decision: Option<Decision>,
    events: Vec<Event>,
    buffer: Vec<HeldLine>,
    #[serde(default)]
    decided: Option<String>,
    #[serde(default)]
    building: Option<String>,
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<String>>,
}

pub struct GoBuilder {
    pub name: String,
    pub design: Design,
    args: Vec<String>,
    log: Log,
    process: Option<Process>,
    /// The step being run, for errors.
    step: String,
    /// What it holds, as its last answer said: buffered (ask and the
    /// server's delivery count), decided on, building.
    pub buffer: Vec<(String, u64)>,
    decided: Option<String>,
    building: Option<String>,
    pub lose_next_ack: bool,
}

impl GoBuilder {
    /// Starts the builder's process, connected to `url` (the server or a
    /// proxy), and waits for it to say it is ready.
    pub async fn launch(
        name: &str,
        design: Design,
        timing: Timing,
        offset_ms: i64,
        url: &str,
        names: &Names,
        log: &Log,
    ) -> Result<GoBuilder, Error> {
        let mut args = vec![
            format!("-name={name}"),
            format!("-url={url}"),
            format!("-stream={}", names.stream),
            format!("-consumer={}", names.consumer),
            format!("-running={}", names.running),
            format!("-results={}", names.results),
            format!("-fresh-for={}ms", timing.fresh_for().as_millis()),
            format!("-offset={offset_ms}ms"),
        ];
        args.extend(design_flags(design));
        let mut builder = GoBuilder {
            name: name.to_string(),
            design,
            args,
            log: log.clone(),
            process: None,
            step: "its start".into(),
            buffer: Vec::new(),
            decided: None,
            building: None,
            lose_next_ack: false,
        };
        builder.spawn().await?;
        Ok(builder)
    }

    /// The process id of its process, while one runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.child.id())
    }

    /// Names the step being run in errors.
    pub fn at_step(&mut self, step: &str) {
        self.step = step.to_string();
    }

    fn fail(&self, what: String) -> Error {
        format!(
            "the Go builder {} ({}) at {}: {what}",
            self.name,
            self.design.name(),
            self.step
        )
        .into()
    }

    async fn spawn(&mut self) -> Result<(), Error> {
        let program = program().map_err(|e| self.fail(e))?;
        let mut child = Command::new(&program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| self.fail(format!("{}: {e}", program.display())))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped")).lines();
        let stderr: Arc<Mutex<String>> = Arc::default();
        let mut from = child.stderr.take().expect("piped");
        let into = stderr.clone();
        tokio::spawn(async move {
            let mut text = String::new();
            let mut chunk = [0u8; 4096];
            while let Ok(n) = from.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                text.push_str(&String::from_utf8_lossy(&chunk[..n]));
                *into.lock().expect("stderr") = text.clone();
            }
        });
        self.process = Some(Process {
            child,
            stdin,
            stdout,
            stderr,
        });
        let ready = self.answer(Duration::from_secs(15)).await?;
        if ready.result.as_deref() != Some("ready") {
            return Err(self.fail("its first line is not `ready`".into()));
        }
        Ok(())
    }

    /// Reads one answer, within `within`.
    async fn answer(&mut self, within: Duration) -> Result<Answer, Error> {
        let process = self.process.as_mut().expect("a running process");
        let line = tokio::time::timeout(within, process.stdout.next_line()).await;
        let line = match line {
            Err(_) => {
                let _ = process.child.start_kill();
                return Err(self.fail(format!("no answer in {} s (killed)", within.as_secs_f64())));
            }
            Ok(Err(e)) => return Err(self.fail(format!("reading its output: {e}"))),
            Ok(Ok(None)) => {
                let status =
                    tokio::time::timeout(Duration::from_secs(5), process.child.wait()).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                let stderr = process.stderr.lock().expect("stderr").trim().to_string();
                let status = match status {
                    Ok(Ok(s)) => s.to_string(),
                    _ => "still running".into(),
                };
                return Err(self.fail(format!(
                    "the process ended its output ({status}){}",
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!("; it said: {stderr}")
                    }
                )));
            }
            Ok(Ok(Some(line))) => line,
        };
        let answer: Answer = serde_json::from_str(&line)
            .map_err(|e| self.fail(format!("broke the protocol: {e} in the line {line:?}")))?;
        for event in &answer.events {
            self.log.say(&self.name, event.clone());
        }
        if !answer.ok {
            return Err(self.fail(
                answer
                    .error
                    .unwrap_or_else(|| "failed, saying nothing".into()),
            ));
        }
        self.buffer = answer
            .buffer
            .iter()
            .map(|h| (h.ask.clone(), h.delivered))
            .collect();
        self.decided = answer.decided.clone();
        self.building = answer.building.clone();
        Ok(answer)
    }

    async fn send(&mut self, command: serde_json::Value) -> Result<(), Error> {
        let process = self.process.as_mut().expect("a running process");
        let mut line = command.to_string();
        line.push('\n');
        let sent = process.stdin.write_all(line.as_bytes()).await;
        let flushed = process.stdin.flush().await;
        if let Err(e) = sent.and(flushed) {
            return Err(self.fail(format!("its input is closed ({e}): the process died")));
        }
        Ok(())
    }

    async fn call(
        &mut self,
        command: serde_json::Value,
        within: Duration,
    ) -> Result<Answer, Error> {
        self.send(command).await?;
        self.answer(within).await
    }

    const STEP: Duration = Duration::from_secs(15);

    pub fn held(&self) -> impl Iterator<Item = String> + '_ {
        self.buffer
            .iter()
            .map(|(a, _)| a.clone())
            .chain(self.decided.iter().cloned())
            .chain(self.building.iter().cloned())
    }

    pub async fn fetch(&mut self) -> Result<Fetched, Error> {
        let wait = self.design.take_wait();
        let answer = self
            .call(
                serde_json::json!({"op": "fetch", "wait_ms": wait.as_millis() as u64}),
                wait + Self::STEP,
            )
            .await?;
        Ok(match (answer.result.as_deref(), answer.ask) {
            (Some("got"), Some(ask)) => Fetched::Got(ask),
            (Some("buffered"), _) => Fetched::Buffered,
            (Some("empty"), _) => Fetched::Empty,
            (other, _) => return Err(self.fail(format!("a fetch answered {other:?}"))),
        })
    }

    /// Waits up to `within` for a late answer to land: its ask, and whether
    /// it was handed back at once (hand-back, the builder busy).
    pub async fn wait_landed(&mut self, within: Duration) -> Result<Option<(String, bool)>, Error> {
        let answer = self
            .call(
                serde_json::json!({"op": "land", "within_ms": within.as_millis() as u64}),
                within + Self::STEP,
            )
            .await?;
        Ok(match (answer.result.as_deref(), answer.ask) {
            (Some("landed"), Some(ask)) => Some((ask, false)),
            (Some("handed-back"), Some(ask)) => Some((ask, true)),
            _ => None,
        })
    }

    pub async fn take(&mut self) -> Result<Option<String>, Error> {
        Ok(self
            .call(serde_json::json!({"op": "take"}), Self::STEP)
            .await?
            .ask)
    }

    pub async fn read(&mut self) -> Result<Option<(String, Decision)>, Error> {
        let answer = self
            .call(serde_json::json!({"op": "read"}), Self::STEP)
            .await?;
        Ok(answer.ask.zip(answer.decision))
    }

    pub async fn start(&mut self) -> Result<Started, Error> {
        let answer = self
            .call(serde_json::json!({"op": "start"}), Self::STEP)
            .await?;
        Ok(match (answer.result.as_deref(), answer.ask) {
            (Some("runs"), Some(ask)) => Started::Runs(ask),
            (Some("conflict"), Some(ask)) => Started::Conflict(ask),
            _ => Started::Nothing,
        })
    }

    pub async fn drop_duplicate(&mut self) -> Result<Option<String>, Error> {
        Ok(self
            .call(serde_json::json!({"op": "drop"}), Self::STEP)
            .await?
            .ask)
    }

    pub async fn heartbeat(&mut self) -> Result<Option<String>, Error> {
        Ok(self
            .call(serde_json::json!({"op": "heartbeat"}), Self::STEP)
            .await?
            .ask)
    }

    pub async fn finish(&mut self) -> Result<Option<String>, Error> {
        let lose = std::mem::take(&mut self.lose_next_ack);
        Ok(self
            .call(
                serde_json::json!({"op": "finish", "lose_ack": lose}),
                Self::STEP,
            )
            .await?
            .ask)
    }

    pub async fn nak_oldest(&mut self) -> Result<Option<String>, Error> {
        Ok(self
            .call(serde_json::json!({"op": "nak"}), Self::STEP)
            .await?
            .ask)
    }

    /// The process dies (it exits at once, nothing acked) and a new one
    /// starts idle under the same name.
    pub async fn crash(&mut self) -> Result<(), Error> {
        self.send(serde_json::json!({"op": "crash"})).await?;
        let mut process = self.process.take().expect("a running process");
        match tokio::time::timeout(Duration::from_secs(5), process.child.wait()).await {
            Ok(Ok(_)) => {}
            _ => {
                let _ = process.child.start_kill();
                return Err(self.fail("did not exit when told to crash (killed)".into()));
            }
        }
        self.buffer.clear();
        self.decided = None;
        self.building = None;
        self.spawn().await
    }

    /// Ends the process: its input closes and it exits; killed if it does
    /// not within a second.
    pub async fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.stdin.write_all(b"{\"op\":\"quit\"}\n").await;
            drop(process.stdin);
            if tokio::time::timeout(Duration::from_secs(1), process.child.wait())
                .await
                .is_err()
            {
                let _ = process.child.start_kill();
                let _ = process.child.wait().await;
            }
        }
    }

    pub fn is_idle(&self) -> bool {
        self.building.is_none() && self.decided.is_none()
    }
}
