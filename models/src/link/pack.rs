//! The link state's packed form, for the checker: each field in as many bits
//! as these bounds let it reach.

use super::reduce::{keeps_clocks, orderings};
use super::{Builder, Decided, Key, Link, Message, Run, State, Status, BUFFER_ROOM, KEY_LIFETIME};
use crate::{bits_for, BitReader, BitWriter, Inline, Packed};

/// Field widths on one model's bounds.
struct Widths {
    now: u32,
    crashes: u32,
    lates: u32,
    slow_answers: u32,
    lost_acks: u32,
    naks: u32,
    rewinds: u32,
    /// A message's `again`: none without rewinds.
    again: u32,
    builder: u32,
    ack_in: u32,
    deliveries: u32,
    age: u32,
    offset: u32,
    ask: u32,
    built: u32,
    heartbeat: u32,
    grace: u32,
    buffered: u32,
    /// A place in the redelivery queue: none without `redelivery-queue`.
    queue: u32,
}

impl Widths {
    fn of(m: &Link) -> Widths {
        let b = &m.bounds;
        Widths {
            now: bits_for(b.horizon_ticks() as u64),
            crashes: bits_for(b.crashes as u64),
            lates: bits_for(b.late_heartbeats as u64),
            slow_answers: bits_for(b.slow_answers as u64),
            lost_acks: bits_for(b.lost_acks as u64),
            naks: bits_for(b.naks as u64),
            rewinds: bits_for(b.rewinds as u64),
            again: (b.rewinds > 0) as u32,
            builder: bits_for(b.builders.saturating_sub(1) as u64),
            ack_in: bits_for(b.ack_wait_ticks() as u64),
            deliveries: bits_for(b.max_deliver as u64),
            age: bits_for(m.stale_at().max(KEY_LIFETIME) as u64),
            offset: bits_for(2 * b.skew_ticks() as u64),
            ask: bits_for(b.asks.saturating_sub(1) as u64),
            built: bits_for(b.horizon_ticks() as u64),
            heartbeat: bits_for(b.heartbeat_ticks() as u64),
            grace: bits_for(b.late_by_ticks() as u64),
            buffered: bits_for(BUFFER_ROOM as u64),
            queue: if m.options.redelivery_queue {
                bits_for(b.asks as u64)
            } else {
                0
            },
        }
    }

    fn bits(&self, m: &Link) -> u32 {
        let per_ask = 2
            + self.builder
            + self.ack_in
            + self.deliveries
            + self.queue
            + self.again
            + 1
            + self.builder
            + self.age
            + 2;
        let per_builder = self.offset
            + 1
            + self.ask
            + self.built
            + self.heartbeat
            + self.grace
            + 1
            + self.buffered
            + BUFFER_ROOM as u32 * self.ask
            + (1 + self.ask)
            + 1
            + (3 + self.ask);
        self.now
            + self.crashes
            + self.lates
            + self.slow_answers
            + self.lost_acks
            + self.naks
            + self.rewinds
            + 1
            + per_ask * m.bounds.asks as u32
            + per_builder * m.bounds.builders as u32
    }
}

impl Packed for Link {
    fn packed_words(&self) -> usize {
        Widths::of(self).bits(self).div_ceil(64) as usize
    }

    /// The stored form (`reduce.rs`): what a later step reads, under the
    /// least renaming of builders with equal clocks; the whole state when
    /// the model is not `reduced`.
    fn pack(&self, s: &State, words: &mut [u64]) {
        if !self.reduced {
            return self.pack_whole(s, words);
        }
        let s = self.forgotten(s);
        self.pack_whole(&s, words);
        let mut room = [0u64; 16];
        let other = &mut room[..words.len()];
        for to in orderings(s.builders.len()).iter().skip(1) {
            if !keeps_clocks(&s, to) {
                continue;
            }
            other.fill(0);
            self.pack_whole(&Link::renamed(&s, to), other);
            if *other < *words {
                words.copy_from_slice(other);
            }
        }
    }

    fn unpack(&self, words: &[u64]) -> State {
        self.unpack_whole(words)
    }
}

impl Link {
    fn pack_whole(&self, s: &State, words: &mut [u64]) {
        let w = Widths::of(self);
        let skew = self.bounds.skew_ticks() as i16;
        let mut out = BitWriter::new(words);
        out.put(s.now as u64, w.now);
        out.put(s.crashes_left as u64, w.crashes);
        out.put(s.lates_left as u64, w.lates);
        out.put(s.slow_answers_left as u64, w.slow_answers);
        out.put(s.lost_acks_left as u64, w.lost_acks);
        out.put(s.naks_left as u64, w.naks);
        out.put(s.rewinds_left as u64, w.rewinds);
        out.put(s.dropped as u64, 1);
        for ((m, key), &result) in s.messages.iter().zip(s.keys.iter()).zip(s.results.iter()) {
            let (tag, to, ack_in) = match m.status {
                Status::Available => (0, 0, 0),
                Status::Delivered { to, ack_in } => (1, to, ack_in),
                Status::Acked => (2, 0, 0),
                Status::Exhausted => (3, 0, 0),
            };
            out.put(tag, 2);
            out.put(to as u64, w.builder);
            out.put(ack_in as u64, w.ack_in);
            out.put(m.deliveries as u64, w.deliveries);
            out.put(m.queue as u64, w.queue);
            out.put(m.again as u64, w.again);
            out.put(key.is_some() as u64, 1);
            let key = key.unwrap_or(Key::put(0, false));
            out.put(key.builder as u64, w.builder);
            out.put(key.age as u64, w.age);
            out.put(key.done as u64, 1);
            out.put(result as u64, 1);
        }
        for b in s.builders.iter() {
            out.put((b.offset as i16 + skew) as u64, w.offset);
            out.put(b.run.is_some() as u64, 1);
            let run = b.run.unwrap_or_default();
            out.put(run.ask as u64, w.ask);
            out.put(run.built as u64, w.built);
            out.put(run.heartbeat_in as u64, w.heartbeat);
            out.put(run.grace as u64, w.grace);
            out.put(run.delayed as u64, 1);
            out.put(b.buffer.len() as u64, w.buffered);
            for i in 0..BUFFER_ROOM {
                out.put(b.buffer.get(i).copied().unwrap_or(0) as u64, w.ask);
            }
            out.put(b.on_the_way.is_some() as u64, 1);
            out.put(b.on_the_way.unwrap_or(0) as u64, w.ask);
            out.put(b.open as u64, 1);
            // 0: nothing decided, 1: run, 2: duplicate.
            let decided = b.decided.map_or(0, |d| 1 + d.duplicate as u64);
            out.put(decided, 2);
            out.put(b.decided.is_some_and(|d| d.conflict) as u64, 1);
            out.put(b.decided.map_or(0, |d| d.ask) as u64, w.ask);
        }
    }

    fn unpack_whole(&self, words: &[u64]) -> State {
        let w = Widths::of(self);
        let skew = self.bounds.skew_ticks() as i16;
        let mut input = BitReader::new(words);
        let now = input.get(w.now) as u8;
        let crashes_left = input.get(w.crashes) as u8;
        let lates_left = input.get(w.lates) as u8;
        let slow_answers_left = input.get(w.slow_answers) as u8;
        let lost_acks_left = input.get(w.lost_acks) as u8;
        let naks_left = input.get(w.naks) as u8;
        let rewinds_left = input.get(w.rewinds) as u8;
        let dropped = input.get(1) == 1;
        let (mut messages, mut keys, mut results) =
            (Inline::default(), Inline::default(), Inline::default());
        for _ in 0..self.bounds.asks {
            let tag = input.get(2);
            let to = input.get(w.builder) as u8;
            let ack_in = input.get(w.ack_in) as u8;
            let status = match tag {
                0 => Status::Available,
                1 => Status::Delivered { to, ack_in },
                2 => Status::Acked,
                _ => Status::Exhausted,
            };
            messages.push(Message {
                status,
                deliveries: input.get(w.deliveries) as u8,
                queue: input.get(w.queue) as u8,
                again: input.get(w.again) == 1,
            });
            let present = input.get(1) == 1;
            let key = Key {
                builder: input.get(w.builder) as u8,
                age: input.get(w.age) as u8,
                done: input.get(1) == 1,
            };
            keys.push(present.then_some(key));
            results.push(input.get(1) == 1);
        }
        let mut builders = Inline::default();
        for _ in 0..self.bounds.builders {
            let offset = (input.get(w.offset) as i16 - skew) as i8;
            let running = input.get(1) == 1;
            let run = Run {
                ask: input.get(w.ask) as u8,
                built: input.get(w.built) as u8,
                heartbeat_in: input.get(w.heartbeat) as u8,
                grace: input.get(w.grace) as u8,
                delayed: input.get(1) == 1,
            };
            let buffered = input.get(w.buffered) as usize;
            let mut buffer = Inline::default();
            for i in 0..BUFFER_ROOM {
                let ask = input.get(w.ask) as u8;
                if i < buffered {
                    buffer.push(ask);
                }
            }
            let answering = input.get(1) == 1;
            let answer = input.get(w.ask) as u8;
            let open = input.get(1) == 1;
            let decided = input.get(2);
            let conflict = input.get(1) == 1;
            let decided_ask = input.get(w.ask) as u8;
            builders.push(Builder {
                offset,
                run: running.then_some(run),
                buffer,
                on_the_way: answering.then_some(answer),
                open,
                decided: (decided > 0).then_some(Decided {
                    ask: decided_ask,
                    duplicate: decided == 2,
                    conflict,
                }),
            });
        }
        State {
            now,
            messages,
            keys,
            results,
            builders,
            crashes_left,
            lates_left,
            slow_answers_left,
            lost_acks_left,
            naks_left,
            rewinds_left,
            dropped,
        }
    }
}
