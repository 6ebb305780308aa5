//! What a step says happened. Checking says nothing; a story says it in
//! words, with the row versions and read values the checked state does not
//! keep: the teller carries them along the path in a [`Ledger`] (the
//! versions of every row, and what the acting worker last read).

use super::mutation::{Primitive, Site, SiteUse};
use super::{Pc, RequestState, Slots, MAX_REQUESTS};

/// Every row's version, counted as the path writes them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Versions {
    pub queue: u16,
    pub requests: [u16; MAX_REQUESTS as usize],
}

impl Default for Versions {
    fn default() -> Self {
        Versions {
            queue: 1,
            requests: [0; MAX_REQUESTS as usize],
        }
    }
}

/// What a worker last read, with versions, as a story shows it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Seen {
    pub request: Option<(RequestState, u16)>,
    pub queue: Option<(Slots, u16)>,
    /// Requests arrived when it read the latest head.
    pub head: Option<u8>,
}

/// What the teller knows that the state does not.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ledger {
    pub versions: Versions,
    /// The acting worker's last read.
    pub seen: Seen,
    /// The number the teller gives the worker a delivery starts.
    pub next_worker: usize,
}

/// Lines and a ledger while a story is told; nothing while checking; the
/// primitives each step performs while the sites of mutants are found.
pub(crate) struct Log {
    telling: Option<(Vec<String>, Ledger)>,
    sites: Option<Vec<SiteUse>>,
}

impl Log {
    pub fn quiet() -> Self {
        Log {
            telling: None,
            sites: None,
        }
    }

    pub fn telling(ledger: Ledger) -> Self {
        Log {
            telling: Some((Vec::new(), ledger)),
            sites: None,
        }
    }

    pub fn recording_sites() -> Self {
        Log {
            telling: None,
            sites: Some(Vec::new()),
        }
    }

    /// A primitive a step performed (recorded only while finding sites).
    pub fn site(&mut self, site: Site, primitive: Primitive, won: Option<bool>) {
        if let Some(sites) = &mut self.sites {
            sites.push(SiteUse {
                site,
                primitive,
                won,
                next: None,
            });
        }
    }

    /// The step after the one whose primitives were just recorded.
    pub fn site_next(&mut self, next: Pc) {
        if let Some(sites) = &mut self.sites {
            for u in sites.iter_mut().filter(|u| u.next.is_none()) {
                u.next = Some(next);
            }
        }
    }

    pub fn sites(self) -> Vec<SiteUse> {
        self.sites.unwrap_or_default()
    }

    /// Says a line, which may show what the ledger knows.
    pub fn say(&mut self, line: impl FnOnce(&Ledger) -> String) {
        if let Some((lines, ledger)) = &mut self.telling {
            lines.push(line(ledger));
        }
    }

    /// Keeps the ledger up to date with what the step did.
    pub fn note(&mut self, change: impl FnOnce(&mut Ledger)) {
        if let Some((_, ledger)) = &mut self.telling {
            change(ledger);
        }
    }

    /// The lines, joined, and the ledger after the step.
    pub fn finish(self) -> (String, Ledger) {
        let (lines, ledger) = self.telling.unwrap_or_default();
        (lines.join("; "), ledger)
    }
}
