//! A builder of a replay, whichever it is: the reference builder on
//! async-nats (`builder.rs`) or the Go builder on nats.go (`gobuilder.rs`),
//! driven through the same steps.

use crate::builder::{Builder, Fetched, Started};
use crate::bus::{Error, Names};
use crate::design::{Design, Timing};
use crate::gobuilder::GoBuilder;
use crate::log::Log;
use slotcheck_models::events::link::Decision;
use std::time::Duration;

/// Which builder runs the steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BuilderKind {
    /// The reference builder, in Rust on async-nats.
    #[default]
    Rust,
    /// The Go builder, on Debian's nats.go.
    Go,
}

impl BuilderKind {
    pub fn parse(name: &str) -> Option<BuilderKind> {
        match name {
            "rust" => Some(BuilderKind::Rust),
            "go" => Some(BuilderKind::Go),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BuilderKind::Rust => "rust",
            BuilderKind::Go => "go",
        }
    }

    /// The client it is written on.
    pub fn client(self) -> &'static str {
        match self {
            BuilderKind::Rust => "async-nats",
            BuilderKind::Go => "nats.go",
        }
    }
}

pub enum Machine {
    // Both boxed: each holds its connection or process and its state.
    Rust(Box<Builder>),
    Go(Box<GoBuilder>),
}

impl Machine {
    #[allow(clippy::too_many_arguments)]
    pub async fn connect(
        kind: BuilderKind,
        name: &str,
        design: Design,
        timing: Timing,
        offset_ms: i64,
        url: &str,
        names: &Names,
        log: &Log,
    ) -> Result<Machine, Error> {
        Ok(match kind {
            BuilderKind::Rust => Machine::Rust(Box::new(
                Builder::connect(name, design, timing, offset_ms, url, names, log).await?,
            )),
            BuilderKind::Go => Machine::Go(Box::new(
                GoBuilder::launch(name, design, timing, offset_ms, url, names, log).await?,
            )),
        })
    }

    /// Names the step being run, for the Go builder's errors.
    pub fn at_step(&mut self, step: &str) {
        if let Machine::Go(g) = self {
            g.at_step(step);
        }
    }

    /// What it holds: buffered, decided on, or building.
    pub fn held(&self) -> Vec<String> {
        match self {
            Machine::Rust(b) => b.held().collect(),
            Machine::Go(g) => g.held().collect(),
        }
    }

    /// Its buffer, oldest first: each ask and the server's delivery count.
    pub fn buffered(&self) -> Vec<(String, u64)> {
        match self {
            Machine::Rust(b) => b
                .buffer
                .iter()
                .map(|h| (h.ask.clone(), h.delivered))
                .collect(),
            Machine::Go(g) => g.buffer.clone(),
        }
    }

    pub async fn fetch(&mut self) -> Result<Fetched, Error> {
        match self {
            Machine::Rust(b) => b.fetch().await,
            Machine::Go(g) => g.fetch().await,
        }
    }

    /// Waits up to `within` for a late answer to land in its buffer: its
    /// ask, and whether hand-back naked it at once.
    pub async fn wait_landed(&mut self, within: Duration) -> Result<Option<(String, bool)>, Error> {
        match self {
            Machine::Rust(b) => b.wait_landed(within).await,
            Machine::Go(g) => g.wait_landed(within).await,
        }
    }

    pub async fn take(&mut self) -> Result<Option<String>, Error> {
        match self {
            Machine::Rust(b) => b.take().await,
            Machine::Go(g) => g.take().await,
        }
    }

    pub async fn read(&mut self) -> Result<Option<(String, Decision)>, Error> {
        match self {
            Machine::Rust(b) => b.read().await,
            Machine::Go(g) => g.read().await,
        }
    }

    pub async fn start(&mut self) -> Result<Started, Error> {
        match self {
            Machine::Rust(b) => b.start().await,
            Machine::Go(g) => g.start().await,
        }
    }

    pub async fn drop_duplicate(&mut self) -> Result<Option<String>, Error> {
        match self {
            Machine::Rust(b) => b.drop_duplicate().await,
            Machine::Go(g) => g.drop_duplicate().await,
        }
    }

    pub async fn heartbeat(&mut self) -> Result<Option<String>, Error> {
        match self {
            Machine::Rust(b) => b.heartbeat().await,
            Machine::Go(g) => g.heartbeat().await,
        }
    }

    pub async fn finish(&mut self, lose_ack: bool) -> Result<Option<String>, Error> {
        match self {
            Machine::Rust(b) => {
                b.lose_next_ack = lose_ack;
                b.finish().await
            }
            Machine::Go(g) => {
                g.lose_next_ack = lose_ack;
                g.finish().await
            }
        }
    }

    pub async fn nak_oldest(&mut self) -> Result<Option<String>, Error> {
        match self {
            Machine::Rust(b) => b.nak_oldest().await,
            Machine::Go(g) => g.nak_oldest().await,
        }
    }

    pub async fn crash(&mut self) -> Result<(), Error> {
        match self {
            Machine::Rust(b) => b.crash().await,
            Machine::Go(g) => g.crash().await,
        }
    }

    /// Ends a Go builder's process (the reference builder's connection goes
    /// with it).
    pub async fn stop(&mut self) {
        if let Machine::Go(g) = self {
            g.stop().await;
        }
    }
}
