//! A model's story as a schedule for the real server: the steps of an ITF
//! trace (`slotcheck check --out`, `simulate`), the builders' clock offsets
//! from its first state, and what the model says each step did, read from
//! the state after it, so that the replay can compare.

use serde_json::Value as Json;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Tick,
    Fetch(usize),
    FetchLate(usize),
    Land(usize),
    /// The client's fetch: a fetch that returns the answer to the
    /// builder's earlier pull request, its own request left open.
    FetchEarlier(usize),
    /// The server answers that open request; the answer is on the way.
    Answer(usize),
    Take(usize),
    Read(usize),
    Start(usize),
    Drop(usize),
    Heartbeat(usize),
    Finish(usize),
    Crash(usize),
    Delay(usize),
    /// With the margin: the network delays a fetch's answer past it; on the
    /// server, the same delayed link as `FetchLate`.
    SlowAnswer(usize),
    /// A finish whose ack is not sent.
    FinishAckLost(usize),
    /// The oldest buffered ask handed back with a nak instead of read.
    Nak(usize),
    /// nats-server 2.9's failed redelivery: on the server, a pull request
    /// that has expired when the consumer takes the redelivery for it.
    Rewind(usize),
}

/// The model option the real builder cannot follow, and why: the source's
/// builder gets the running key and puts it in two round trips, and another
/// builder's get or put can come between them on any server; `atomic-start`
/// is the reading in which nothing can. A builder that makes the two one
/// step (KV create, or an update at the revision read) is another design
/// (after-1649-revision-start), not the source's.
pub const ATOMIC_START_REFUSED: &str =
    "`atomic-start` makes the KV get and the put of the running key one step; \
the source's builder does them in two round trips (a get, then a put), so no run of it on a \
real server follows an atomic-start story (docs/real-jetstream.md, The atomic-start stories)";

/// One step: its words, the action, and the model's state after it.
#[derive(Clone, Debug)]
pub struct Step {
    pub words: String,
    pub action: Action,
    pub after: Json,
    pub before: Json,
}

#[derive(Clone, Debug)]
pub struct Script {
    pub design: String,
    pub property: String,
    pub builders: Vec<String>,
    pub asks: Vec<String>,
    /// Each builder's clock offset, in seconds of source time.
    pub offsets_s: Vec<i64>,
    pub max_deliver: i64,
    /// The consumer's ack wait in ticks (12, the source's minute, unless
    /// the story's bounds set `--ack-wait`).
    pub ack_wait_ticks: u64,
    pub steps: Vec<Step>,
}

fn int(value: &Json) -> Option<i64> {
    value.get("#bigint")?.as_str()?.parse().ok()
}

/// `{"#map": [[k, v], ...]}` as pairs.
fn pairs(value: &Json) -> Vec<(String, Json)> {
    value
        .get("#map")
        .and_then(Json::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| Some((e.get(0)?.as_str()?.to_string(), e.get(1)?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// A builder's part of a state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuilderView {
    pub buffer: Vec<String>,
    pub run: Option<String>,
    pub decided: Option<(String, bool)>,
    pub late_answer: Option<String>,
}

pub fn builder_view(state: &Json, builder: &str) -> BuilderView {
    let Some((_, b)) = pairs(&state["builders"])
        .into_iter()
        .find(|(name, _)| name == builder)
    else {
        return BuilderView::default();
    };
    let text = |v: &Json| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    BuilderView {
        buffer: b["buffer"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        run: text(&b["run"]["ask"]),
        decided: text(&b["decided"]["ask"])
            .map(|a| (a, b["decided"]["duplicate"].as_bool().unwrap_or(false))),
        late_answer: text(&b["late_answer"]),
    }
}

/// An ask's message status in a state (`available`, `delivered`, ...).
pub fn ask_status(state: &Json, ask: &str) -> String {
    pairs(&state["asks"])
        .into_iter()
        .find(|(name, _)| name == ask)
        .and_then(|(_, a)| a["status"].as_str().map(str::to_string))
        .unwrap_or_default()
}

impl Script {
    /// Reads a link trace; errors name the field or the step.
    pub fn of_itf(document: &Json) -> Result<Script, String> {
        let meta = &document["#meta"];
        if meta["model"].as_str() != Some("link") {
            return Err("`#meta.model` is not `link`: only link traces replay on nats".into());
        }
        let design = meta["design"]
            .as_str()
            .ok_or("`#meta.design` is missing")?
            .to_string();
        let property = meta["property"]
            .as_str()
            .ok_or("`#meta.property` is missing")?
            .to_string();
        let bounds = &meta["bounds"];
        let max_deliver = bounds["max_deliver"]
            .as_i64()
            .ok_or("`#meta.bounds.max_deliver` is missing")?;
        if let Some(options) = meta["options"].as_array().filter(|o| !o.is_empty()) {
            if options.iter().any(|o| o.as_str() == Some("atomic-start")) {
                return Err(ATOMIC_START_REFUSED.into());
            }
            return Err(format!(
                "`#meta.options` is {}: the real builder follows the model's default readings only (the client's fetch, the seed's expiry)",
                meta["options"]
            ));
        }
        // The builder's heartbeat period and freshness window are the
        // source's; only the consumer's ack wait is a server setting.
        for (bound, source) in [("heartbeat_ticks", 2), ("fresh_for_ticks", 5)] {
            if bounds[bound].as_i64().is_some_and(|t| t != source) {
                return Err(format!(
                    "`#meta.bounds.{bound}` is {}: the real builder keeps the source's {} s",
                    bounds[bound],
                    source * 5
                ));
            }
        }
        let ack_wait_ticks = bounds["ack_wait_ticks"].as_u64().unwrap_or(12);
        let states = document["states"].as_array().ok_or("`states` is missing")?;
        let first = states.first().ok_or("`states` is empty")?;
        let builder_pairs = pairs(&first["builders"]);
        let builders: Vec<String> = builder_pairs.iter().map(|(n, _)| n.clone()).collect();
        let offsets_s = builder_pairs
            .iter()
            .map(|(n, b)| {
                int(&b["offset_s"]).ok_or(format!("states[0]: `{n}.offset_s` is missing"))
            })
            .collect::<Result<_, _>>()?;
        let asks = pairs(&first["asks"]).into_iter().map(|(n, _)| n).collect();
        let index = |name: &str, i: usize| {
            builders
                .iter()
                .position(|b| b == name)
                .ok_or(format!("states[{i}]: unknown builder `{name}`"))
        };
        let mut steps = Vec::new();
        for (i, pair) in states.windows(2).enumerate() {
            let words = pair[1]["action"]
                .as_str()
                .ok_or(format!("states[{}]: `action` is missing", i + 1))?;
            let parts: Vec<&str> = words.split_whitespace().collect();
            let action = match parts.as_slice() {
                ["tick"] => Action::Tick,
                [verb, b] => {
                    let b = index(b, i + 1)?;
                    match *verb {
                        "fetch" => Action::Fetch(b),
                        "fetch-late" => Action::FetchLate(b),
                        "land" => Action::Land(b),
                        "fetch-earlier" => Action::FetchEarlier(b),
                        "answer" => Action::Answer(b),
                        "take" => Action::Take(b),
                        "read" => Action::Read(b),
                        "start" => Action::Start(b),
                        "drop" => Action::Drop(b),
                        "heartbeat" => Action::Heartbeat(b),
                        "finish" => Action::Finish(b),
                        "crash" => Action::Crash(b),
                        "delay" => Action::Delay(b),
                        "slow-answer" => Action::SlowAnswer(b),
                        "finish-ack-lost" => Action::FinishAckLost(b),
                        "nak" => Action::Nak(b),
                        "rewind" => Action::Rewind(b),
                        _ => return Err(format!("states[{}]: unknown step `{words}`", i + 1)),
                    }
                }
                _ => return Err(format!("states[{}]: unknown step `{words}`", i + 1)),
            };
            steps.push(Step {
                words: words.to_string(),
                action,
                before: pair[0].clone(),
                after: pair[1].clone(),
            });
        }
        Ok(Script {
            design,
            property,
            builders,
            asks,
            offsets_s,
            max_deliver,
            ack_wait_ticks,
            steps,
        })
    }
}
