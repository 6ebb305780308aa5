//! The scenario file's format as serde reads it: the `model` key alone,
//! then the whole file with the model's own `[bounds]`, the expectations
//! (`"holds"` or `{ verdict = "violated", steps = 8 }`) and the stories.

use crate::check::Verdict;
use crate::models::bounds::Whole;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// What a scenario expects of one property on one design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    pub verdict: Verdict,
    /// The length of the shortest counterexample (or witness path).
    pub steps: Option<usize>,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.verdict.word())?;
        if let Some(n) = self.steps {
            write!(f, " ({n} step{})", if n == 1 { "" } else { "s" })?;
        }
        Ok(())
    }
}

pub(super) fn verdict_named(word: &str) -> Option<Verdict> {
    match word {
        "holds" => Some(Verdict::Holds),
        "violated" => Some(Verdict::Violated),
        "reached" => Some(Verdict::Reached),
        "not-reached" => Some(Verdict::NotReached),
        _ => None,
    }
}

pub(super) fn verdict_word<E: de::Error>(word: &str) -> Result<Verdict, E> {
    verdict_named(word).ok_or_else(|| {
        E::custom(format!(
            "unknown verdict `{word}` (expected {VERDICT_WORDS})"
        ))
    })
}

pub(super) const VERDICT_WORDS: &str = "`holds`, `violated`, `reached`, `not-reached`";

/// `"holds"` or `{ verdict = "violated", steps = 8 }`.
impl<'de> Deserialize<'de> for Expected {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ExpectedVisitor;
        impl<'de> Visitor<'de> for ExpectedVisitor {
            type Value = Expected;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a verdict ({VERDICT_WORDS}) or a table {{ verdict = \"violated\", steps = N }}"
                )
            }
            fn visit_str<E: de::Error>(self, word: &str) -> Result<Expected, E> {
                let verdict = verdict_word(word)?;
                Ok(Expected {
                    verdict,
                    steps: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Expected, A::Error> {
                let mut verdict = None;
                let mut steps = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "verdict" => {
                            let word: String = map.next_value()?;
                            verdict = Some(verdict_word::<A::Error>(&word)?);
                        }
                        "steps" => {
                            let Whole(n) = map.next_value()?;
                            let n = usize::try_from(n).map_err(|_| {
                                de::Error::custom(format!(
                                    "`steps` is a number of steps, 0 or more, not {n}"
                                ))
                            })?;
                            steps = Some(n);
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["verdict", "steps"]))
                        }
                    }
                }
                let verdict = verdict.ok_or_else(|| de::Error::missing_field("verdict"))?;
                Ok(Expected { verdict, steps })
            }
        }
        deserializer.deserialize_any(ExpectedVisitor)
    }
}

/// The `model` key alone: which model's format the rest of the file follows.
#[derive(Deserialize)]
pub(super) struct Header {
    pub(super) model: Spanned<String>,
}

// `toml` spans neither map keys nor tables made by `[headers]`, so keys are
// found in the text when an error needs them (`Source::key`).
pub(super) type Expectations = BTreeMap<String, BTreeMap<String, Spanned<Expected>>>;

/// A scenario file as written, `B` being the model's bounds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioFile<B> {
    pub(super) id: Spanned<String>,
    pub(super) title: String,
    pub(super) source: String,
    #[serde(default)]
    pub(super) notes: Option<String>,
    #[allow(dead_code)] // read by the first pass
    pub(super) model: String,
    /// Left out of `--skip-slow` runs (the nightly scenario).
    #[serde(default)]
    pub(super) slow: bool,
    /// The `always` property that shows the finding: a column of the
    /// what-to-merge table (`compare --findings`).
    #[serde(default)]
    pub(super) finding: Option<Spanned<String>>,
    pub(super) bounds: Spanned<B>,
    #[serde(default)]
    pub(super) options: Vec<Spanned<String>>,
    pub(super) expect: Expectations,
    #[serde(default)]
    pub(super) story: Vec<StoryFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StoryFile {
    pub(super) design: Spanned<String>,
    /// The property the story's last state must violate.
    pub(super) violates: Spanned<String>,
    pub(super) steps: Spanned<Vec<Spanned<String>>>,
}
