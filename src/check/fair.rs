//! Progress under weak fairness, on the graph the search explored: its
//! states are the search's packed states (kept whole for this, numbered in
//! the search's canonical order), its edges each state's actions again.
//!
//! A progress property is violated by a reachable *fair* cycle along which
//! one thing it owes stays pending (a bit of its `pending` mask), or by a
//! pending state where no weakly fair step is enabled (the run stutters
//! there for ever), unless the model's bounds stopped the run there. Under
//! weak fairness a strongly connected component has a fair cycle exactly
//! when every fairness class enabled in all its states is taken on one of
//! its own edges (the cycle through all its states and edges is then fair;
//! otherwise a class enabled throughout is never taken, in it or in any
//! part of it). So: Tarjan's algorithm (iterative) on the states where some
//! property is pending; each fair component whose states all owe one same
//! thing is a violation; one whose states owe different things is searched
//! again, restricted to the states that owe each thing.
//!
//! A violation is a lasso: the search's shortest path to the component's
//! first state (the least number, so the least depth), then a loop through
//! the component from it back to it that takes, or passes a state that
//! disables, every class enabled somewhere in it (a fair loop). One thread,
//! in the search's numbering: the same lasso whatever the thread count.

use super::memory::resident_bytes;
use super::search::Searched;
use super::table::fingerprint;
use super::{Cut, Limits};
use slotcheck_models::{Narrated, Packed, Progress};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

/// A state number whose component is decided.
const DONE: u32 = u32::MAX;

/// A violation: the state the loop starts from, and the loop's actions (as
/// indices into each stored state's actions; empty: it stutters there).
pub(crate) struct Lasso {
    pub entry: usize,
    pub steps: Vec<usize>,
    pub after: std::time::Duration,
}

pub(crate) struct Fair {
    /// Per progress property (in the order given), its lasso.
    pub found: Vec<Option<Lasso>>,
    pub cut: Option<Cut>,
}

/// Fingerprint to state number: open addressing over the kept words.
struct Index {
    slots: Vec<u32>,
}

impl Index {
    fn build(words: &[u64], k: usize) -> Index {
        let n = words.len() / k;
        // At most two thirds full.
        let mut slots = vec![0u32; (n + n / 2).next_power_of_two().max(2)];
        let mask = slots.len() - 1;
        for i in 0..n {
            let mut at = fingerprint(&words[i * k..(i + 1) * k]) as usize & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = i as u32 + 1;
        }
        Index { slots }
    }

    fn find(&self, fp: u64, words: &[u64], k: usize) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = fp as usize & mask;
        loop {
            match self.slots[at] {
                0 => return None,
                n => {
                    let i = (n - 1) as usize;
                    if fingerprint(&words[i * k..(i + 1) * k]) == fp {
                        return Some(n - 1);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }
}

/// A state's steps: each successor, its fairness class and action index;
/// the classes enabled; what each property owes there.
struct Expanded {
    edges: Vec<(u32, Option<u64>, u8)>,
    enabled: Vec<u64>,
    pending: Vec<u64>,
    /// No weakly fair step is enabled and the bounds did not stop it.
    stutters: bool,
}

struct Graph<'a, M: Narrated + Packed> {
    model: &'a M,
    progress: &'a [Progress<M>],
    words: &'a [u64],
    k: usize,
    index: Index,
}

impl<M: Narrated + Packed> Graph<'_, M> {
    fn pending(&self, n: u32) -> Vec<u64> {
        let state = self.model.unpack(self.state_words(n));
        self.progress
            .iter()
            .map(|p| (p.pending)(self.model, &state))
            .collect()
    }

    fn state_words(&self, n: u32) -> &[u64] {
        &self.words[n as usize * self.k..(n as usize + 1) * self.k]
    }

    fn expand(&self, n: u32) -> Expanded {
        let state = self.model.unpack(self.state_words(n));
        let mut actions = Vec::new();
        self.model.actions(&state, &mut actions);
        let mut words = vec![0u64; self.k];
        let mut edges = Vec::with_capacity(actions.len());
        let mut enabled = Vec::new();
        for (j, action) in actions.into_iter().enumerate() {
            let class = self.model.fairness(&state, &action);
            enabled.extend(class);
            let Some(next) = self.model.next_state(&state, action) else {
                continue;
            };
            words.fill(0);
            self.model.pack(&next, &mut words);
            let to = self
                .index
                .find(fingerprint(&words), self.words, self.k)
                .expect("every successor was explored");
            edges.push((to, class, j as u8));
        }
        enabled.sort_unstable();
        enabled.dedup();
        let stutters = enabled.is_empty() && !self.model.stopped_by_bounds(&state);
        let pending = self
            .progress
            .iter()
            .map(|p| (p.pending)(self.model, &state))
            .collect();
        Expanded {
            edges,
            enabled,
            pending,
            stutters,
        }
    }
}

/// Where Tarjan's algorithm keeps each state's number (0: not yet seen).
trait Marks {
    fn get(&self, n: u32) -> u32;
    fn set(&mut self, n: u32, mark: u32);
}

impl Marks for Vec<u32> {
    fn get(&self, n: u32) -> u32 {
        self[n as usize]
    }
    fn set(&mut self, n: u32, mark: u32) {
        self[n as usize] = mark;
    }
}

impl Marks for HashMap<u32, u32> {
    fn get(&self, n: u32) -> u32 {
        self.get(&n).copied().unwrap_or(0)
    }
    fn set(&mut self, n: u32, mark: u32) {
        self.insert(n, mark);
    }
}

struct Frame {
    node: u32,
    edges: Vec<u32>,
    next: usize,
    low: u32,
}

/// Tarjan's strongly connected components, iterative, from `roots` in
/// order, over the states `succ` leads to (it lists only those in the
/// subgraph); each component is given to `on_scc` as soon as it is
/// complete. False when `go_on` said stop.
fn tarjan(
    succ: &mut dyn FnMut(u32) -> Vec<u32>,
    roots: &mut dyn Iterator<Item = u32>,
    marks: &mut dyn Marks,
    on_scc: &mut dyn FnMut(Vec<u32>),
    go_on: &mut dyn FnMut() -> bool,
) -> bool {
    let mut counter = 1u32;
    let mut stack: Vec<u32> = Vec::new();
    let mut calls: Vec<Frame> = Vec::new();
    let mut push = |v: u32, marks: &mut dyn Marks, stack: &mut Vec<u32>, calls: &mut Vec<Frame>| {
        marks.set(v, counter);
        stack.push(v);
        calls.push(Frame {
            node: v,
            edges: succ(v),
            next: 0,
            low: counter,
        });
        counter += 1;
    };
    let mut visited = 0usize;
    for root in roots {
        if marks.get(root) != 0 {
            continue;
        }
        push(root, marks, &mut stack, &mut calls);
        while let Some(top) = calls.last_mut() {
            if top.next < top.edges.len() {
                let w = top.edges[top.next];
                top.next += 1;
                match marks.get(w) {
                    0 => {
                        visited += 1;
                        if visited.is_multiple_of(256) && !go_on() {
                            return false;
                        }
                        push(w, marks, &mut stack, &mut calls);
                    }
                    DONE => {}
                    seen => top.low = top.low.min(seen),
                }
                continue;
            }
            let frame = calls.pop().expect("a frame");
            if frame.low == marks.get(frame.node) {
                let mut component = Vec::new();
                loop {
                    let v = stack.pop().expect("the component's states are stacked");
                    marks.set(v, DONE);
                    component.push(v);
                    if v == frame.node {
                        break;
                    }
                }
                on_scc(component);
            }
            if let Some(parent) = calls.last_mut() {
                parent.low = parent.low.min(frame.low);
            }
        }
    }
    true
}

/// A candidate violation: its entry (least state number) and its loop's
/// states (empty: a stutter at the entry).
struct Candidate {
    entry: u32,
    members: Vec<u32>,
    after: std::time::Duration,
}

/// Whether a component (its states expanded) has a fair cycle: it is a
/// cycle at all (more than one state, or a step back to itself), and
/// every class enabled in all its states is taken on one of its edges.
fn fair_cycle(members: &HashSet<u32>, expanded: &HashMap<u32, Expanded>) -> bool {
    let mut taken = HashSet::new();
    let mut cyclic = members.len() > 1;
    for (&n, e) in expanded {
        for &(to, class, _) in &e.edges {
            if members.contains(&to) {
                cyclic |= to == n;
                taken.extend(class);
            }
        }
    }
    if !cyclic {
        return false;
    }
    let mut always: Option<Vec<u64>> = None;
    for e in expanded.values() {
        always = Some(match always {
            None => e.enabled.clone(),
            Some(a) => a.into_iter().filter(|c| e.enabled.contains(c)).collect(),
        });
    }
    always.unwrap_or_default().iter().all(|c| taken.contains(c))
}

/// `work` on `threads` contiguous ranges of `0..n`, in order.
fn in_parallel<T: Send>(
    n: usize,
    threads: usize,
    work: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let per = n.div_ceil(threads).max(1);
    let ranges: Vec<_> = (0..n).step_by(per).map(|a| a..(a + per).min(n)).collect();
    if ranges.len() <= 1 {
        return ranges.into_iter().map(&work).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|r| {
                let work = &work;
                scope.spawn(move || work(r))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a progress thread"))
            .collect()
    })
}

pub(crate) fn find<M: Narrated + Packed + Sync>(
    model: &M,
    progress: &[Progress<M>],
    searched: &Searched,
    limits: &Limits,
    started: Instant,
) -> Fair {
    let k = model.packed_words();
    let n = searched.words.len() / k;
    let graph = Graph {
        model,
        progress,
        words: &searched.words,
        k,
        index: Index::build(&searched.words, k),
    };
    let deadline = match (limits.timeout.map(|t| started + t), limits.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let over_budget = || {
        if super::budget::cancelled() {
            Some(Cut::Signal)
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Cut::Timeout)
        } else {
            match (limits.max_memory, resident_bytes()) {
                (Some(max), Some(now)) if now > max => Some(Cut::MaxMemory),
                _ => None,
            }
        }
    };
    let mut cut: Option<Cut> = None;
    let go_on = |cut: &mut Option<Cut>| {
        if cut.is_none() {
            *cut = over_budget();
        }
        cut.is_none()
    };
    let mut best: Vec<Option<Candidate>> = (0..progress.len()).map(|_| None).collect();
    let offer = |best: &mut Vec<Option<Candidate>>, p: usize, entry: u32, members: Vec<u32>| {
        if best[p].as_ref().is_none_or(|b| entry < b.entry) {
            best[p] = Some(Candidate {
                entry,
                members,
                after: started.elapsed(),
            });
        }
    };
    // The states where something is owed, then each one's steps to such
    // states (kept, as offsets and targets): both by every thread, each on a
    // range of states, the same whatever their number.
    let threads = limits.threads.max(1);
    let stop = std::sync::Mutex::new(None::<Cut>);
    let stopped = |at: usize| {
        if at.is_multiple_of(4096) {
            if let Some(c) = over_budget() {
                stop.lock().expect("a budget flag").get_or_insert(c);
            }
        }
        stop.lock().expect("a budget flag").is_some()
    };
    let owing: Vec<bool> = in_parallel(n, threads, |range| {
        let mut out = Vec::with_capacity(range.len());
        for v in range {
            if stopped(v) {
                break;
            }
            out.push(graph.pending(v as u32).iter().any(|&m| m != 0));
        }
        out
    })
    .concat();
    let pending_any = |v: u32| owing.get(v as usize).copied().unwrap_or(false);
    // One-state components worth judging: a stutter, or a step back to
    // itself (seen when the state is expanded).
    let parts = in_parallel(n, threads, |range| {
        let mut counts: Vec<u32> = Vec::with_capacity(range.len());
        let mut targets: Vec<u32> = Vec::new();
        let mut single: Vec<u32> = Vec::new();
        for v in range {
            if stopped(v) {
                break;
            }
            if !pending_any(v as u32) {
                counts.push(0);
                continue;
            }
            let e = graph.expand(v as u32);
            if e.stutters || e.edges.iter().any(|x| x.0 == v as u32) {
                single.push(v as u32);
            }
            let before = targets.len();
            targets.extend(e.edges.iter().map(|x| x.0).filter(|&w| pending_any(w)));
            counts.push((targets.len() - before) as u32);
        }
        (counts, targets, single)
    });
    if let Some(c) = *stop.lock().expect("a budget flag") {
        return Fair {
            found: progress.iter().map(|_| None).collect(),
            cut: Some(c),
        };
    }
    // Each range's steps stay where its thread put them (no copy of them
    // all at once): its counts become offsets in place.
    let per = n.div_ceil(threads).max(1);
    let mut single: HashSet<u32> = HashSet::new();
    let mut steps: Vec<(Vec<u32>, Vec<u32>)> = Vec::with_capacity(parts.len());
    for (mut counts, part, one) in parts {
        let mut at = 0u32;
        for c in counts.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        counts.push(at);
        steps.push((counts, part));
        single.extend(one);
    }
    let mut marks = vec![0u32; n];
    let mut roots = (0..n as u32).filter(|&v| pending_any(v));
    let mut components = Vec::new();
    let mut finished = tarjan(
        &mut |v| {
            let (offsets, targets) = &steps[v as usize / per];
            let i = v as usize % per;
            targets[offsets[i] as usize..offsets[i + 1] as usize].to_vec()
        },
        &mut roots,
        &mut marks,
        &mut |component| {
            // Most components are one state with no step back to itself
            // and something fair to do: nothing to judge.
            if component.len() == 1 && !single.contains(&component[0]) {
                return;
            }
            components.push(component);
        },
        &mut || go_on(&mut cut),
    );
    drop(marks);
    drop(steps);
    let judge = |component: Vec<u32>, best: &mut Vec<Option<Candidate>>, cut: &mut Option<Cut>| {
        let expanded: HashMap<u32, Expanded> =
            component.iter().map(|&v| (v, graph.expand(v))).collect();
        let mut sorted = component.clone();
        sorted.sort_unstable();
        for &v in &sorted {
            let e = &expanded[&v];
            if e.stutters {
                for (p, &mask) in e.pending.iter().enumerate() {
                    if mask != 0 {
                        offer(best, p, v, Vec::new());
                    }
                }
            }
        }
        let members: HashSet<u32> = component.iter().copied().collect();
        if !fair_cycle(&members, &expanded) {
            return;
        }
        for p in 0..progress.len() {
            let all = sorted
                .iter()
                .fold(u64::MAX, |acc, v| acc & expanded[v].pending[p]);
            let any = sorted.iter().fold(0, |acc, v| acc | expanded[v].pending[p]);
            if all != 0 {
                offer(best, p, sorted[0], sorted.clone());
                continue;
            }
            // Different things owed in different states: each thing again,
            // on the states that owe it.
            for bit in (0..64).filter(|b| any & (1u64 << b) != 0) {
                let owing: HashSet<u32> = sorted
                    .iter()
                    .copied()
                    .filter(|v| expanded[v].pending[p] & (1 << bit) != 0)
                    .collect();
                let mut sub_marks: HashMap<u32, u32> = HashMap::new();
                let mut parts = Vec::new();
                let mut roots = sorted.iter().copied().filter(|v| owing.contains(v));
                let finished = tarjan(
                    &mut |v| {
                        expanded[&v]
                            .edges
                            .iter()
                            .map(|e| e.0)
                            .filter(|w| owing.contains(w))
                            .collect()
                    },
                    &mut roots,
                    &mut sub_marks,
                    &mut |part| parts.push(part),
                    &mut || go_on(cut),
                );
                if !finished {
                    return;
                }
                for mut part in parts {
                    let set: HashSet<u32> = part.iter().copied().collect();
                    let sub: HashMap<u32, Expanded> =
                        part.iter().map(|&v| (v, graph.expand(v))).collect();
                    if fair_cycle(&set, &sub) {
                        part.sort_unstable();
                        offer(best, p, part[0], part);
                    }
                }
            }
        }
    };
    for component in components {
        if !finished {
            break;
        }
        judge(component, &mut best, &mut cut);
        finished = cut.is_none();
    }
    let found = best
        .into_iter()
        .map(|candidate| {
            candidate.map(|c| Lasso {
                entry: c.entry as usize,
                steps: fair_loop(&graph, c.entry, &c.members),
                after: c.after,
            })
        })
        .collect();
    Fair { found, cut }
}

/// A fair loop from `entry` back to it through `members`: shortest paths,
/// one after the other, each to the nearest step of a class not yet taken
/// or state where such a class is not enabled, until every class enabled
/// somewhere in the component is, then back to `entry`. Empty members: a
/// stutter.
fn fair_loop<M: Narrated + Packed>(graph: &Graph<M>, entry: u32, members: &[u32]) -> Vec<usize> {
    if members.is_empty() {
        return Vec::new();
    }
    let set: HashSet<u32> = members.iter().copied().collect();
    let expanded: HashMap<u32, Expanded> = members.iter().map(|&v| (v, graph.expand(v))).collect();
    let mut owed: Vec<u64> = expanded
        .values()
        .flat_map(|e| e.enabled.iter().copied())
        .collect();
    owed.sort_unstable();
    owed.dedup();
    let mut met: HashSet<u64> = HashSet::new();
    let meet_state = |met: &mut HashSet<u64>, v: u32| {
        for &c in &owed {
            if !expanded[&v].enabled.contains(&c) {
                met.insert(c);
            }
        }
    };
    meet_state(&mut met, entry);
    let mut steps: Vec<usize> = Vec::new();
    let mut at = entry;
    loop {
        let unmet: Vec<u64> = owed.iter().copied().filter(|c| !met.contains(c)).collect();
        let home = unmet.is_empty();
        if home && at == entry && !steps.is_empty() {
            break;
        }
        // Breadth first from `at`, to the nearest goal.
        let mut parent: HashMap<u32, (u32, u8)> = HashMap::new();
        let mut queue = VecDeque::from([at]);
        let mut seen = HashSet::from([at]);
        let mut goal: Option<(u32, Option<(u8, u32)>)> = None;
        'bfs: while let Some(x) = queue.pop_front() {
            for &(y, class, j) in &expanded[&x].edges {
                if !set.contains(&y) {
                    continue;
                }
                let edge_goal = if home {
                    y == entry
                } else {
                    class.is_some_and(|c| unmet.contains(&c))
                };
                if edge_goal {
                    goal = Some((x, Some((j, y))));
                    break 'bfs;
                }
                if seen.insert(y) {
                    parent.insert(y, (x, j));
                    if !home && unmet.iter().any(|c| !expanded[&y].enabled.contains(c)) {
                        goal = Some((y, None));
                        break 'bfs;
                    }
                    queue.push_back(y);
                }
            }
        }
        let (end, last) = goal.expect("a fair component reaches every goal");
        let mut path: Vec<(u32, u8)> = Vec::new();
        let mut v = end;
        while v != at {
            let (u, j) = parent[&v];
            path.push((u, j));
            v = u;
        }
        path.reverse();
        for &(u, j) in &path {
            let class = expanded[&u]
                .edges
                .iter()
                .find(|e| e.2 == j)
                .and_then(|e| e.1);
            met.extend(class);
            steps.push(j as usize);
        }
        let mut now = end;
        // States the path passed through (each edge's target).
        let mut x = at;
        for &(_, j) in &path {
            let to = expanded[&x]
                .edges
                .iter()
                .find(|e| e.2 == j)
                .expect("a step")
                .0;
            meet_state(&mut met, to);
            x = to;
        }
        if let Some((j, y)) = last {
            let class = expanded[&end]
                .edges
                .iter()
                .find(|e| e.2 == j)
                .and_then(|e| e.1);
            met.extend(class);
            steps.push(j as usize);
            meet_state(&mut met, y);
            now = y;
        }
        at = now;
    }
    steps
}
