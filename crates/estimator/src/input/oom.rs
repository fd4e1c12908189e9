//! Reading a PyTorch CUDA out-of-memory message, as PyTorch 1.x and 2.x write it, with or
//! without the traceback around it, and saying which tensor of a config failed, where.
//!
//! 1.x: `Tried to allocate 6.14 GiB (GPU 0; 15.78 GiB total capacity; 10.16 GiB already
//! allocated; 4.05 GiB free; 10.53 GiB reserved in total by PyTorch)`.
//! 2.x: `Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 139.80 GiB of which 122.96 GiB
//! is free. Process 3285 has 4.85 GiB memory in use. Including non-PyTorch memory, this process
//! has 10.94 GiB memory in use. 11.25 GiB allowed; Of the allocated memory 7.81 GiB is allocated
//! by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.` (2.1 wrote "capacty").

use crate::allocator::{Cap, CapKind};
use crate::config::TrainConfig;
use crate::gpu::{self, Gpu};
use crate::physics::Phase;
use crate::replay::replay;
use crate::sequence::{generate, Action, Stage};
use crate::terms::Term;

/// Every number an OOM message can hold; `None` where this message does not say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OomMessage {
    pub gpu_index: Option<u32>,
    pub tried_to_allocate_bytes: Option<u128>,
    pub total_capacity_bytes: Option<u128>,
    pub free_bytes: Option<u128>,
    /// 2.x: "Including non-PyTorch memory, this process has X memory in use".
    pub process_in_use_bytes: Option<u128>,
    /// 2.x: "X is allocated by PyTorch".
    pub allocated_by_pytorch_bytes: Option<u128>,
    /// 2.x: "X is reserved by PyTorch but unallocated".
    pub reserved_unallocated_bytes: Option<u128>,
    /// 1.x: "X already allocated".
    pub already_allocated_bytes: Option<u128>,
    /// 1.x: "X reserved in total by PyTorch"; 2.x: allocated + reserved-but-unallocated.
    pub reserved_total_bytes: Option<u128>,
    /// "X allowed": a `set_per_process_memory_fraction` cap.
    pub allowed_bytes: Option<u128>,
    /// Other processes on the card: (pid, bytes).
    pub other_processes: Vec<(u64, u128)>,
    /// Whether the text looked like an out-of-memory message at all.
    pub recognised: bool,
}

impl OomMessage {
    /// Bytes allocated by PyTorch when the request failed.
    pub fn allocated(&self) -> Option<u128> {
        self.allocated_by_pytorch_bytes
            .or(self.already_allocated_bytes)
    }

    /// What the caching allocator could have reserved: the cap if there was one (a memory
    /// fraction: "X allowed"), else what it held plus what was free on the card.
    pub fn allocator_cap(&self) -> Option<Cap> {
        match self.allowed_bytes {
            Some(bytes) => Some(Cap {
                bytes,
                kind: CapKind::Fraction,
            }),
            None => Some(Cap::card(self.reserved_total_bytes? + self.free_bytes?)),
        }
    }

    /// Memory of this process outside PyTorch's allocator (CUDA context, kernels).
    pub fn context_bytes(&self) -> Option<u128> {
        Some(
            self.process_in_use_bytes?
                .saturating_sub(self.reserved_total_bytes?),
        )
    }

    /// The card, by its total capacity: the nearest preset, if one is within 1.5 %.
    pub fn card(&self) -> Option<&'static Gpu> {
        gpu::nearest_by_capacity(self.total_capacity_bytes?)
    }

    /// The card as the message gives it: the preset its capacity matches, else a card of that
    /// capacity; `None` when the message names no capacity.
    pub fn card_said(&self) -> Option<CardSaid> {
        Some(match self.card() {
            Some(g) => CardSaid::Preset(g),
            // a capacity below the smallest card vramfit takes ("0 bytes") says no card
            None => CardSaid::Custom {
                total_bytes: self
                    .total_capacity_bytes
                    .filter(|&b| b >= crate::gpu::MIN_CARD_BYTES)?,
            },
        })
    }

    /// What the other processes the message lists held of the card.
    pub fn other_bytes(&self) -> u128 {
        self.other_processes.iter().map(|p| p.1).sum()
    }
}

/// The card an out-of-memory message came from (see [`OomMessage::card_said`]); the page and
/// the command line each set their card from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CardSaid {
    Preset(&'static Gpu),
    Custom { total_bytes: u128 },
}

/// Longest text read: a log of this size is already far more than any message.
const MAX_TEXT: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Word(String),
}

/// Words (lowercased) and numbers; everything else separates them.
fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // "-0.5 GiB": a minus sign before a number makes it negative (no size is), not a word
        // "-0" followed by "5 GiB"
        let negative = c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if negative {
            i += 1;
        }
        if negative || c.is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == ',')
            {
                i += 1;
            }
            let s: String = chars[start..i]
                .iter()
                .filter(|c| **c != ',')
                .collect::<String>()
                .trim_end_matches('.')
                .to_string();
            if let Some(x) = crate::decimal::parse(&s) {
                out.push(Tok::Num(if negative { -x } else { x }));
            }
        } else if c.is_alphanumeric() || c == '_' || c == '-' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '-')
            {
                i += 1;
            }
            out.push(Tok::Word(
                chars[start..i]
                    .iter()
                    .collect::<String>()
                    .to_ascii_lowercase(),
            ));
        } else {
            i += 1;
        }
    }
    out
}

fn unit_factor(w: &str) -> Option<f64> {
    Some(match w {
        "b" | "bytes" | "byte" => 1.0,
        "kib" | "kb" => 1024.0,
        "mib" | "mb" => 1024.0 * 1024.0,
        "gib" | "gb" => 1024.0 * 1024.0 * 1024.0,
        "tib" | "tb" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// A size (number + unit) starting at token `i`.
fn size_at(t: &[Tok], i: usize) -> Option<u128> {
    match (t.get(i)?, t.get(i + 1)?) {
        (Tok::Num(x), Tok::Word(u)) => {
            let f = unit_factor(u)?;
            let b = x * f;
            (0.0..1e18).contains(&b).then(|| b.round() as u128)
        }
        _ => None,
    }
}

fn word(t: &[Tok], i: usize, w: &str) -> bool {
    matches!(t.get(i), Some(Tok::Word(x)) if x == w)
}

/// Whether the words `ws` start at token `i`.
fn words(t: &[Tok], i: usize, ws: &[&str]) -> bool {
    ws.iter().enumerate().all(|(k, w)| word(t, i + k, w))
}

/// Reads every number from a pasted message (or a log around it). Never fails: what is not
/// there stays `None`, and `recognised` says whether anything looked like an OOM message.
pub fn parse(text: &str) -> OomMessage {
    let t = tokens(crate::query::head(text, MAX_TEXT));
    let mut m = OomMessage::default();
    for i in 0..t.len() {
        // sizes followed by their meaning (1.x, and "X allowed")
        if let Some(s) = size_at(&t, i) {
            let j = i + 2;
            if words(&t, j, &["total", "capacity"]) {
                m.total_capacity_bytes.get_or_insert(s);
            } else if words(&t, j, &["already", "allocated"]) {
                m.already_allocated_bytes.get_or_insert(s);
            } else if word(&t, j, "free") {
                m.free_bytes.get_or_insert(s);
            } else if words(&t, j, &["reserved", "in", "total"]) {
                m.reserved_total_bytes.get_or_insert(s);
            } else if word(&t, j, "allowed") {
                m.allowed_bytes.get_or_insert(s);
            } else if words(&t, j, &["is", "allocated", "by", "pytorch"]) {
                m.allocated_by_pytorch_bytes.get_or_insert(s);
            } else if words(
                &t,
                j,
                &["is", "reserved", "by", "pytorch", "but", "unallocated"],
            ) {
                m.reserved_unallocated_bytes.get_or_insert(s);
            }
        }
        // phrases followed by a size
        if words(&t, i, &["tried", "to", "allocate"]) {
            if let Some(s) = size_at(&t, i + 3) {
                m.tried_to_allocate_bytes.get_or_insert(s);
                m.recognised = true;
            }
        }
        if words(&t, i, &["total", "capacity", "of"]) || words(&t, i, &["total", "capacty", "of"]) {
            if let Some(s) = size_at(&t, i + 3) {
                m.total_capacity_bytes.get_or_insert(s);
            }
        }
        if words(&t, i, &["of", "which"]) {
            if let (Some(s), true) = (size_at(&t, i + 2), words(&t, i + 4, &["is", "free"])) {
                m.free_bytes.get_or_insert(s);
            }
        }
        if words(&t, i, &["this", "process", "has"]) {
            if let Some(s) = size_at(&t, i + 3) {
                m.process_in_use_bytes.get_or_insert(s);
            }
        }
        if word(&t, i, "process") && !word(&t, i.wrapping_sub(1), "this") {
            if let (Some(Tok::Num(pid)), true) = (t.get(i + 1), word(&t, i + 2, "has")) {
                if let Some(s) = size_at(&t, i + 3) {
                    let pid = *pid as u64;
                    if !m.other_processes.iter().any(|(p, _)| *p == pid) {
                        m.other_processes.push((pid, s));
                    }
                }
            }
        }
        if word(&t, i, "gpu") {
            if let Some(Tok::Num(n)) = t.get(i + 1) {
                if n.fract() == 0.0 && *n < 1024.0 {
                    m.gpu_index.get_or_insert(*n as u32);
                }
            }
        }
        if words(&t, i, &["out", "of", "memory"]) {
            m.recognised = true;
        }
    }
    if m.reserved_total_bytes.is_none() {
        if let (Some(a), Some(r)) = (m.allocated_by_pytorch_bytes, m.reserved_unallocated_bytes) {
            m.reserved_total_bytes = Some(a + r);
        }
    }
    m
}

/// What failed, as the config explains it (serialized as the JSON contract's `diagnosis`, less
/// its sentence).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Diagnosis {
    pub phase: Option<Phase>,
    pub stage: Stage,
    pub micro_step: u32,
    /// The tensor whose allocation failed.
    #[cfg_attr(feature = "serde", serde(rename = "tensor"))]
    pub term: Term,
    /// Bytes of that tensor in this config.
    pub tensor_bytes: u128,
    /// The simulation of this config under the message's budget failed at this same request.
    pub reproduced: bool,
}

/// Whether a size read from a message (two decimals in its unit: "1.54 GiB" is anything from
/// 1.535 to 1.545 GiB) can be `exact` bytes.
fn same_size(displayed: u128, exact: u128) -> bool {
    (displayed as f64 - exact as f64).abs() <= displayed as f64 * 0.0035 + 6000.0
}

/// Matches the failed request against `cfg`'s tensors on the message's card. `None` when no
/// tensor of the config has the requested size (the config is probably not the run's).
pub fn diagnose(m: &OomMessage, cfg: &TrainConfig) -> Option<Diagnosis> {
    let seq = generate(cfg, &message_card(m), crate::physics::Patches::default());
    diagnose_sequence(m, &seq, cfg.allocator, cfg.validate().is_ok())
}

/// The card a message names (a card of its size where it names none), for replaying the run it
/// came from.
pub fn message_card(m: &OomMessage) -> crate::gpu::Gpu {
    m.card().cloned().unwrap_or_else(crate::query::custom_card)
}

/// [`diagnose`] for any program's allocation sequence `seq` on the message's card (`valid`:
/// whether its config passes the program's asserts, so that replaying it means something).
pub fn diagnose_sequence(
    m: &OomMessage,
    seq: &crate::engine::events::Sequence,
    allocator: crate::config::Allocator,
    valid: bool,
) -> Option<Diagnosis> {
    let requested = m.tried_to_allocate_bytes?;
    // replay under the budget the message implies: does it fail at this request?
    if let (Some(cap), true) = (m.allocator_cap(), valid) {
        if let Some(o) = replay(seq, allocator, Some(cap)).oom {
            if same_size(requested, o.requested) {
                return Some(Diagnosis {
                    term: o.term,
                    phase: o.phase,
                    stage: o.stage,
                    micro_step: o.micro_step,
                    tensor_bytes: o.requested,
                    reproduced: true,
                });
            }
        }
    }
    // otherwise: the first tensor of the run with the requested size
    seq.events.iter().enumerate().find_map(|(i, e)| {
        (e.action == Action::Alloc && e.bytes > 1 << 20 && same_size(requested, e.bytes.into()))
            .then(|| {
                let mark = seq.mark_at(i);
                Diagnosis {
                    term: e.term,
                    phase: mark.and_then(|m| m.phase),
                    stage: mark.map_or(Stage::ModelLoad, |m| m.stage),
                    micro_step: mark.map_or(0, |m| m.micro_step),
                    tensor_bytes: e.bytes.into(),
                    reproduced: false,
                }
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = (1u64 << 30) as f64;

    fn gib(x: f64) -> u128 {
        (x * GIB).round() as u128
    }

    #[test]
    fn reads_pytorch_1x() {
        let m = parse("RuntimeError: CUDA out of memory. Tried to allocate 6.14 GiB (GPU 0; 15.78 GiB total capacity; 10.16 GiB already allocated; 4.05 GiB free; 10.53 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.");
        assert!(m.recognised);
        assert_eq!(m.tried_to_allocate_bytes, Some(gib(6.14)));
        assert_eq!(m.total_capacity_bytes, Some(gib(15.78)));
        assert_eq!(m.already_allocated_bytes, Some(gib(10.16)));
        assert_eq!(m.free_bytes, Some(gib(4.05)));
        assert_eq!(m.reserved_total_bytes, Some(gib(10.53)));
        assert_eq!(m.gpu_index, Some(0));
        assert_eq!(m.card().map(|g| g.id), Some("v100_16"));
    }

    #[test]
    fn reads_pytorch_2x_with_processes_and_cap() {
        let m = parse("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 139.80 GiB of which 122.96 GiB is free. Process 3285 has 4.85 GiB memory in use. Including non-PyTorch memory, this process has 10.94 GiB memory in use. Process 4124 has 1.02 GiB memory in use. 11.25 GiB allowed; Of the allocated memory 7.81 GiB is allocated by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.");
        assert_eq!(m.tried_to_allocate_bytes, Some(gib(1.54)));
        assert_eq!(m.total_capacity_bytes, Some(gib(139.80)));
        assert_eq!(m.free_bytes, Some(gib(122.96)));
        assert_eq!(m.process_in_use_bytes, Some(gib(10.94)));
        assert_eq!(m.allowed_bytes, Some(gib(11.25)));
        assert_eq!(m.allocated_by_pytorch_bytes, Some(gib(7.81)));
        assert_eq!(m.reserved_unallocated_bytes, Some(gib(2.40)));
        assert_eq!(m.reserved_total_bytes, Some(gib(7.81) + gib(2.40)));
        assert_eq!(
            m.other_processes,
            vec![(3285, gib(4.85)), (4124, gib(1.02))]
        );
        assert_eq!(m.card().map(|g| g.id), Some("h200"));
    }

    #[test]
    fn reads_torch_2_1_typo_mib_and_wrapped_lines() {
        let m = parse("Traceback (most recent call last):\n  File \"train.py\", line 301\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 786.00 MiB. GPU 0 has a total capacty of 23.65 GiB of which\n 23.44 MiB is free. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated.");
        assert_eq!(m.tried_to_allocate_bytes, Some(786 << 20));
        assert_eq!(m.total_capacity_bytes, Some(gib(23.65)));
        assert_eq!(
            m.free_bytes,
            Some((23.44 * 1024.0 * 1024.0_f64).round() as u128)
        );
        assert_eq!(m.card().map(|g| g.id), Some("rtx3090ti"));
    }

    #[test]
    fn anything_else_is_understood_as_nothing() {
        for junk in [
            "",
            "hello",
            "\u{0}\u{ffff}",
            "ValueError: too many values",
            "1e308 GiB",
            &"9".repeat(100_000),
        ] {
            let m = parse(junk);
            assert!(!m.recognised, "{junk:?}");
        }
        // a 10 MB log is read without trouble (only its first MiB)
        let log = "step 100 loss 3.2\n".repeat(600_000);
        assert!(!parse(&log).recognised);
    }

    #[test]
    fn diagnoses_the_fp32_copy_of_the_logits() {
        // cap12_s_b8: eager GPT-2 124M batch 8 under an 11.25 GiB cap
        let m = parse(include_str!("../../../../data/oom-messages/cap12_s_b8.txt"));
        let cfg = TrainConfig {
            batch_size: 8,
            compile: false,
            gradient_accumulation_steps: 2,
            ..TrainConfig::default()
        };
        let d = diagnose(&m, &cfg).unwrap();
        assert_eq!(d.term, Term::LossGrads);
        assert_eq!(d.phase, Some(Phase::TrainSteady));
        assert_eq!(d.stage, Stage::Backward);
        assert!(d.reproduced);
    }
}
