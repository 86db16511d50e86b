//! The product walk every analysis runs on: a breadth-first walk of the
//! product of a domain automaton and matcher automata, over the byte classes
//! of all of them, trying readable bytes first, so that each witness is a
//! shortest input and reads well. Dead matchers drop out of the product
//! state, so cost follows the matchers still alive; with a `focus` slot, the
//! walk stays where that slot can still match. Every walk has a size limit;
//! reaching it makes the walk incomplete, and incomplete walks prove
//! nothing.

use super::lang::{Comp, Kind, Lang, St, Tri, encode, words_of};
use regex_automata::dfa::Automaton;
use regex_automata::util::primitives::StateID;
use std::collections::{HashMap, VecDeque};
use std::ops::ControlFlow;
use std::rc::Rc;

/// Product states one walk may visit.
pub(crate) const MAX_NODES: usize = 200_000;
/// Automaton steps one walk may take.
const WALK_STEPS: u64 = 50_000_000;

/// A product search: which slots match each subject of a domain.
pub(crate) struct Search {
    pub kind: Kind,
    pub domain: Rc<Lang>,
    pub comps: Vec<Comp>,
    /// Per slot, the answer before any matcher: `Yes` for a rule that matches
    /// every item, `Maybe` for one whose automaton could not be built.
    pub base: Vec<Tri>,
    /// Explore only subjects this slot can still match.
    pub focus: Option<usize>,
}

/// The path to one product state: its shortest input.
pub(crate) struct Trail<'a> {
    parents: &'a [(u32, u8)],
    id: u32,
}

impl Trail<'_> {
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut id = self.id;
        while id != 0 {
            let (parent, b) = self.parents[id as usize];
            out.push(b);
            id = parent;
        }
        out.reverse();
        out
    }
}

type Key = (StateID, Box<[(u32, St)]>);

impl Search {
    /// Visits every subject class of the domain, shortest witness first,
    /// calling `visit` with each slot's answer. Returns whether the walk was
    /// complete (it stops early when `visit` breaks, or a limit is reached:
    /// then `false`).
    pub(crate) fn run(&self, mut visit: impl FnMut(&[Tri], &Trail) -> ControlFlow<()>) -> bool {
        let reps = self.representatives();
        let mut steps = WALK_STEPS;
        let mut parents: Vec<(u32, u8)> = vec![(0, 0)];
        let start_comps: Vec<(u32, St)> = self
            .comps
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let s = if c.lang.dfa.is_dead_state(c.lang.start) {
                    St::Dead
                } else {
                    St::Live(c.lang.start)
                };
                (s != St::Dead || c.negates()).then_some((i as u32, s))
            })
            .collect();
        let start: Key = (self.domain.start, start_comps.into_boxed_slice());
        let mut seen: HashMap<Key, u32, Fx> = HashMap::default();
        let mut queue: VecDeque<(u32, Key)> = VecDeque::new();
        seen.insert(start.clone(), 0);
        queue.push_back((0, start));
        let mut status = vec![Tri::No; self.base.len()];
        let mut answers: Vec<Tri> = Vec::new();
        while let Some((id, (dom, comps))) = queue.pop_front() {
            let dfa = &self.domain.dfa;
            let accepted = dfa.is_match_state(dfa.next_eoi_state(dom));
            let frozen = comps.iter().all(|(_, s)| !matches!(s, St::Live(_)));
            if accepted {
                status.copy_from_slice(&self.base);
                for &(ci, s) in comps.iter() {
                    let c = &self.comps[ci as usize];
                    c.lang.at_end(s, &mut answers, c.targets.len());
                    apply(&mut status, &c.targets, &answers);
                }
                // Automata that died answer no, so their negated patterns hold.
                for (ci, c) in self.comps.iter().enumerate() {
                    if c.negates() && !comps.iter().any(|&(i, _)| i as usize == ci) {
                        answers.clear();
                        answers.resize(c.targets.len(), Tri::No);
                        apply(&mut status, &c.targets, &answers);
                    }
                }
                let trail = Trail {
                    parents: &parents,
                    id,
                };
                if visit(&status, &trail).is_break() {
                    return false;
                }
                if frozen {
                    continue;
                }
            }
            let cost = 1 + comps.len() as u64 * reps.len() as u64;
            if steps < cost || seen.len() >= MAX_NODES {
                return false;
            }
            steps -= cost;
            for &b in &reps {
                let nd = dfa.next_state(dom, b);
                if dfa.is_dead_state(nd) {
                    continue;
                }
                let mut next: Vec<(u32, St)> = Vec::with_capacity(comps.len());
                for &(ci, s) in comps.iter() {
                    let c = &self.comps[ci as usize];
                    match c.lang.step(s, b) {
                        Some(n) => next.push((ci, n)),
                        None if c.negates() => next.push((ci, St::Dead)),
                        None => {}
                    }
                }
                if let Some(f) = self.focus {
                    let alive = self.base.get(f).is_some_and(|b| *b != Tri::No)
                        || next.iter().any(|&(ci, _)| {
                            self.comps[ci as usize]
                                .targets
                                .iter()
                                .any(|(slot, _)| *slot == f)
                        });
                    if !alive {
                        continue;
                    }
                }
                let key: Key = (nd, next.into_boxed_slice());
                if !seen.contains_key(&key) {
                    let nid = parents.len() as u32;
                    parents.push((id, b));
                    seen.insert(key.clone(), nid);
                    queue.push_back((nid, key));
                }
            }
        }
        true
    }

    /// Each slot's answer for one subject, or `None` outside the domain.
    pub(crate) fn statuses(&self, bytes: &[u8]) -> Option<Vec<Tri>> {
        if self.domain.accepts(bytes) != Tri::Yes {
            return None;
        }
        let mut status = self.base.clone();
        let mut answers = Vec::new();
        for c in &self.comps {
            c.lang
                .at_end(c.lang.run(bytes), &mut answers, c.targets.len());
            apply(&mut status, &c.targets, &answers);
        }
        Some(status)
    }

    /// A more readable subject with the same answers as `bytes`, if one is
    /// near: command words that are empty become `a`.
    pub(crate) fn prettier(&self, bytes: Vec<u8>, status: &[Tri]) -> Vec<u8> {
        if self.kind != Kind::Command || !words_of(&bytes).iter().any(String::is_empty) {
            return bytes;
        }
        let words: Vec<String> = words_of(&bytes)
            .into_iter()
            .map(|w| if w.is_empty() { "a".to_string() } else { w })
            .collect();
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        let candidate = encode(&refs);
        match self.statuses(&candidate) {
            Some(st) if st == status => candidate,
            _ => bytes,
        }
    }

    /// One byte per class of the joint alphabet, most readable first.
    fn representatives(&self) -> Vec<u8> {
        // Refine the domain's byte classes by each automaton's.
        let mut class = [0u16; 256];
        for b in 0..=255u8 {
            class[b as usize] = self.domain.dfa.byte_classes().get(b) as u16;
        }
        for c in &self.comps {
            let mut ids: HashMap<(u16, u8), u16, Fx> = HashMap::default();
            for b in 0..=255u8 {
                let key = (
                    class[b as usize],
                    c.lang.dfa.byte_classes().get(c.lang.byte(b)),
                );
                let next = ids.len() as u16;
                class[b as usize] = *ids.entry(key).or_insert(next);
            }
        }
        let mut best: HashMap<u16, u8, Fx> = HashMap::default();
        for b in 0..=255u8 {
            let e = best.entry(class[b as usize]).or_insert(b);
            if rank(b) < rank(*e) {
                *e = b;
            }
        }
        let mut reps: Vec<u8> = best.into_values().collect();
        reps.sort_by_key(|&b| rank(b));
        reps
    }
}

/// A fast, non-cryptographic hasher for the walk's own keys (FxHash).
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(buf));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub(crate) type Fx = std::hash::BuildHasherDefault<FxHasher>;

/// Folds one automaton's per-pattern answers into the slots they answer for.
fn apply(status: &mut [Tri], targets: &[(usize, bool)], answers: &[Tri]) {
    for (&(slot, negated), &t) in targets.iter().zip(answers) {
        if let Some(s) = status.get_mut(slot) {
            *s = s.or(if negated { t.not() } else { t });
        }
    }
}

/// Readability of a byte in a witness: lower is tried first.
fn rank(b: u8) -> u16 {
    match b {
        b'a'..=b'z' => (b - b'a') as u16,
        b'/' => 26,
        b'.' => 27,
        b'0'..=b'9' => 28 + (b - b'0') as u16,
        b'-' => 38,
        b'_' => 39,
        0 => 40,
        b'A'..=b'Z' => 41 + (b - b'A') as u16,
        b' ' => 67,
        0x21..=0x7e => 100 + b as u16,
        _ => 300 + b as u16,
    }
}

#[cfg(test)]
mod tests {
    use super::super::lang::{Cache, Spec, show};
    use super::*;

    #[test]
    fn search_finds_shortest_readable_witness() {
        let mut cache = Cache::default();
        let s = Search {
            kind: Kind::Path,
            domain: cache.get(&Spec::Domain(Kind::Path)).unwrap(),
            comps: vec![Comp::one(
                cache
                    .get(&Spec::Glob(
                        crate::lower::patterns::glob_regex("**/.env").unwrap(),
                    ))
                    .unwrap(),
                0,
                false,
            )],
            base: vec![Tri::No],
            focus: None,
        };
        let mut found = None;
        let done = s.run(|st, trail| {
            if st[0] == Tri::Yes {
                found = Some(show(Kind::Path, &trail.bytes()));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        assert!(!done);
        assert_eq!(found.as_deref(), Some("/.env"));
    }
}
