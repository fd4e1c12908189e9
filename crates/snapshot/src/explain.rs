//! What was live at a moment of the recorded run — the peak, or an out-of-memory request —
//! grouped into vramfit's components by the Python frames each block was allocated under, and
//! by the line of the user's code that allocated it.
//!
//! The frames say where a block came from, not what it is, so the grouping follows where PyTorch
//! allocates each kind of tensor: parameters when a module is moved or built on the card
//! (`Module._apply`, `to_empty`, `nn.init`), optimizer state inside `torch.optim`, gradients on
//! the autograd engine's thread (no Python frames: `backward()` runs them in C++), logits and the
//! loss in the model's outermost `forward` (its head, outside the layers) and `cross_entropy`,
//! activations inside a layer's `forward`; anything else (a batch, a buffer) is other.

use engine::terms::{Component, Term, ALL_TERMS};

use crate::history::{live_at, History, Live};
use crate::read::{Event, Frame, Snapshot};

/// The bytes live at one moment, by component and by the code that allocated them.
#[derive(Clone, Debug, PartialEq)]
pub struct Moment {
    /// Bytes per component, in [`Component::ALL`] order; they add up to `total`.
    pub components: [u64; 6],
    /// The largest allocating lines of the user's code (`model.py:105 in forward`), with bytes,
    /// largest first; blocks without a user's frame are grouped by component.
    pub sites: Vec<(String, u64)>,
    /// Bytes of blocks allocated before the recording began (only where it was cut short).
    pub before_recording: u64,
    pub total: u64,
}

/// What was live after event `at` of `snap`, whose history is `history` (`total`: the
/// allocated bytes it counts then).
pub fn moment(snap: &Snapshot, history: &History, at: usize, total: u64) -> Moment {
    let live = live_at(snap, at, history.exact);
    let mut components = [0u64; 6];
    let mut sites: Vec<(String, u64)> = Vec::new();
    let mut counted = 0u64;
    for Live { bytes, event } in live {
        let e = &snap.events[event];
        let c = component(e);
        components[c as usize] += bytes;
        counted += bytes;
        let site = site(&e.frames).unwrap_or_else(|| format!("({})", c.id()));
        match sites.iter_mut().find(|(s, _)| *s == site) {
            Some(s) => s.1 += bytes,
            None => sites.push((site, bytes)),
        }
    }
    // a history cut short: what the dump counts that no recorded event allocated
    let before_recording = total.saturating_sub(counted);
    components[Component::Other as usize] += before_recording;
    sites.sort_by_key(|s| std::cmp::Reverse(s.1));
    Moment {
        components,
        sites,
        before_recording,
        total: counted + before_recording,
    }
}

/// The component a block belongs to, by the frames of its allocation.
pub fn component(alloc: &Event) -> Component {
    let frames = &alloc.frames;
    if frames.is_empty() {
        return Component::Gradients;
    }
    // vramfit's own run (export.rs): its frame names the tensor family
    if let Some(term) = frames.first().and_then(modelled_term) {
        return term.component();
    }
    let any = |f: &dyn Fn(&Frame) -> bool| frames.iter().any(f);
    if any(&|f| {
        matches!(&*f.name, "_apply" | "to_empty" | "load_state_dict")
            || f.filename.ends_with("nn/init.py")
    }) {
        Component::Params
    } else if any(&|f| f.filename.contains("torch/optim/")) {
        Component::Optimizer
    } else if any(&|f| matches!(&*f.name, "cross_entropy" | "nll_loss")) || head(frames) {
        Component::Logits
    } else if any(&|f| &*f.name == "forward") {
        Component::Activations
    } else {
        Component::Other
    }
}

/// The tensor family an exported frame names (`…: activations`), where the frame is vramfit's.
fn modelled_term(f: &Frame) -> Option<Term> {
    if !f.filename.ends_with(crate::export::MODELLED) {
        return None;
    }
    let id = f.name.rsplit(": ").next()?;
    ALL_TERMS.into_iter().find(|t| t.id() == id)
}

/// Whether a block was allocated by the model's outermost `forward` itself, outside its layers
/// (one `forward` of the user's code on the stack): the final norm, the output head, the loss —
/// where the logits are made — and not its embedding.
fn head(frames: &[Frame]) -> bool {
    let forwards = frames
        .iter()
        .filter(|f| &*f.name == "forward" && is_users(f))
        .count();
    forwards == 1 && !frames.iter().any(|f| &*f.name == "embedding")
}

fn is_users(f: &Frame) -> bool {
    !f.filename.contains("/torch/")
        && !f.filename.contains("site-packages/")
        && !f.filename.starts_with('<')
        && !is_generated(&f.filename)
}

/// The innermost frame of the user's own code (not PyTorch's, not Python's, not the code
/// `torch.compile` generated), as `file.py:line in name`.
pub fn site(frames: &[Frame]) -> Option<String> {
    frames.iter().find(|f| is_users(f)).map(|f| {
        let file = f.filename.rsplit('/').next().unwrap_or(&f.filename);
        format!("{file}:{} in {}", f.line, f.name)
    })
}

/// Whether `path` is a module Inductor wrote (`torch.compile`'s output code: a file named by its
/// hash, `c` and 51 more letters and digits, in its cache).
fn is_generated(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".py").is_some_and(|stem| {
        stem.len() >= 40
            && stem
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    })
}

/// One segment of the cache at the dump, summed as PyTorch's `_memory_viz segsum` sums it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentUse {
    pub address: u64,
    pub total: u64,
    /// Bytes of its blocks handed out (and those freed whose stream is not done yet: neither is
    /// reusable).
    pub allocated: u64,
    /// Inside those blocks beyond their requests: the allocator's rounding and the rests it did
    /// not split off ("internal" fragmentation).
    pub internal: u64,
    /// In its free blocks: cached, reusable only by requests that fit a gap ("external").
    pub free: u64,
    /// Of the small pool (requests up to 1 MiB, 2 MiB segments).
    pub small: bool,
    pub expandable: bool,
}

/// The segments at the dump, the most free first (then the largest).
pub fn segments_at_dump(snap: &Snapshot) -> Vec<SegmentUse> {
    let mut out: Vec<SegmentUse> = snap
        .segments
        .iter()
        .map(|s| {
            let (mut allocated, mut internal, mut free) = (0u64, 0u64, 0u64);
            for b in &s.blocks {
                if b.state == "inactive" {
                    free += b.size;
                } else {
                    allocated += b.size;
                    internal += b.size.saturating_sub(b.requested_size);
                }
            }
            SegmentUse {
                address: s.address,
                total: s.total_size,
                allocated,
                internal,
                free,
                small: s.small,
                expandable: s.expandable,
            }
        })
        .collect();
    out.sort_by_key(|s| (std::cmp::Reverse(s.free), std::cmp::Reverse(s.total)));
    out
}

/// The history drawn with at most `points` points: each the maxima of allocated and reserved
/// over its stretch of events, with the stretch's first event (so a peak is never smoothed away).
pub fn envelope(history: &History, points: usize) -> Vec<(usize, u64, u64)> {
    let per = history.samples.len().div_ceil(points.max(1)).max(1);
    history
        .samples
        .chunks(per)
        .enumerate()
        .map(|(i, c)| {
            (
                i * per,
                c.iter().map(|s| s.0).max().unwrap_or(0),
                c.iter().map(|s| s.1).max().unwrap_or(0),
            )
        })
        .collect()
}

/// The files of the user's code the recorded events were allocated under (`train.py`,
/// `model.py`, a harness around them), each once, the most often named first: the run's script
/// is among them.
pub fn files(snap: &Snapshot) -> Vec<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for f in snap.events.iter().flat_map(|e| &e.frames) {
        if is_users(f) {
            let file = f.filename.rsplit('/').next().unwrap_or(&f.filename);
            match counts.iter_mut().find(|(n, _)| *n == file) {
                Some(c) => c.1 += 1,
                None => counts.push((file, 1)),
            }
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts.into_iter().map(|c| c.0.to_string()).collect()
}
