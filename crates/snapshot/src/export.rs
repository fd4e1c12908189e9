//! vramfit's predicted run as a memory snapshot: its sequence replayed through the simulated
//! allocator with its segments recorded, written as `torch.cuda.memory._dump_snapshot` writes
//! a real one — so pytorch.org/memory_viz draws the prediction as it draws a user's own run, and
//! the two can be looked at side by side. Each event's frame names what vramfit modelled there
//! (the phase, the stage, the micro-step and the tensor family).

use std::collections::HashMap;

use engine::allocator::{round_size, BlockId, CachingAllocator, SegmentChangeKind};
use engine::events::{Action as Step, Sequence};
use engine::run::Run;
use engine::settings::Allocator;

use crate::pickle::{self, dict, list, str, Py};
use crate::read::{Action, Block, Event, Frame, Segment, Snapshot};

/// `run` replayed on its card as it was (its allocator, its budget), as a snapshot dumped at its
/// end (or at its out-of-memory request, as a real run's OOM handler would dump it).
pub fn snapshot(run: &Run, script: &str) -> Snapshot {
    let (seq, mode) = (&run.sequence, run.allocator);
    let mut alloc = CachingAllocator::new(mode, Some(run.cap));
    alloc.record_segments();
    let mut events = Vec::new();
    // each live tensor's block and request, by the sequence's tensor id
    let mut live: HashMap<u32, (BlockId, u64)> = HashMap::new();
    for (i, e) in seq.events.iter().enumerate() {
        let frames = vec![frame(seq, i, script)];
        match e.action {
            Step::Alloc => {
                let result = alloc.malloc(e.bytes);
                segment_events(&mut alloc, &mut events, &frames);
                match result {
                    Ok(id) => {
                        events.push(Event {
                            action: Action::Alloc,
                            addr: alloc.block_addr(id).unwrap_or(0),
                            size: e.bytes,
                            frames,
                        });
                        live.insert(e.tensor, (id, e.bytes));
                    }
                    Err(_) => {
                        events.push(Event {
                            action: Action::Oom,
                            addr: 0,
                            size: round_size(e.bytes),
                            frames,
                        });
                        break;
                    }
                }
            }
            Step::Free => {
                if let Some((id, bytes)) = live.remove(&e.tensor) {
                    let addr = alloc.block_addr(id).unwrap_or(0);
                    alloc.free(id);
                    for action in [Action::FreeRequested, Action::FreeCompleted] {
                        events.push(Event {
                            action,
                            addr,
                            size: bytes,
                            frames: frames.clone(),
                        });
                    }
                }
            }
        }
    }
    // what each block still handed out was asked for
    let requested: HashMap<BlockId, u64> = live.into_values().collect();
    let segments = alloc
        .layout()
        .into_iter()
        .map(|s| Segment {
            address: s.addr,
            total_size: s.size,
            expandable: s.expandable,
            small: s.small,
            blocks: s
                .blocks
                .iter()
                .map(|&(address, size, allocated, id)| Block {
                    address,
                    size,
                    requested_size: if allocated { requested[&id] } else { 0 },
                    state: if allocated {
                        "active_allocated"
                    } else {
                        "inactive"
                    }
                    .to_string(),
                })
                .collect(),
        })
        .collect();
    Snapshot {
        segments,
        events,
        alloc_conf: (mode == Allocator::ExpandableSegments)
            .then(|| "expandable_segments:True".to_string()),
        expandable_segments: mode == Allocator::ExpandableSegments,
    }
}

/// The segments mapped or freed by the last request, as the trace records them before it.
fn segment_events(alloc: &mut CachingAllocator, events: &mut Vec<Event>, frames: &[Frame]) {
    for c in alloc.take_segment_changes() {
        let action = match c.kind {
            SegmentChangeKind::Alloc => Action::SegmentAlloc,
            SegmentChangeKind::Free => Action::SegmentFree,
            SegmentChangeKind::Map => Action::SegmentMap,
            SegmentChangeKind::Unmap => Action::SegmentUnmap,
        };
        events.push(Event {
            action,
            addr: c.addr,
            size: c.size,
            frames: frames.to_vec(),
        });
    }
}

/// What the file name of an exported event's frame ends with (the reader knows its own).
pub const MODELLED: &str = " (as vramfit models it)";

/// What vramfit modelled at event `i`: `forward, micro-step 2 (train_steady): activations`.
fn frame(seq: &Sequence, i: usize, script: &str) -> Frame {
    let mark = seq.mark_at(i);
    let stage = mark.map_or("model_load", |m| m.stage.id());
    let phase = mark.and_then(|m| m.phase).map_or("setup", |p| p.id());
    let micro = mark.map_or(0, |m| m.micro_step);
    let term = seq.events[i].term.id();
    let name = if micro > 0 {
        format!("{stage}, micro-step {micro} ({phase}): {term}")
    } else {
        format!("{stage} ({phase}): {term}")
    };
    Frame {
        filename: format!("{script}{MODELLED}").into(),
        line: u64::from(micro),
        name: name.into(),
    }
}

/// `snap` as the pickle `_dump_snapshot` writes: its segments, one device's trace and the
/// allocator's settings, under PyTorch's keys.
pub fn to_pickle(snap: &Snapshot) -> Vec<u8> {
    let frames = |fs: &[Frame]| {
        list(
            fs.iter()
                .map(|f| {
                    dict(vec![
                        ("filename", str(&f.filename)),
                        ("line", Py::Int(f.line.into())),
                        ("name", str(&f.name)),
                    ])
                })
                .collect(),
        )
    };
    let segments = snap
        .segments
        .iter()
        .map(|s| {
            let allocated: u64 = s
                .blocks
                .iter()
                .filter(|b| b.state == "active_allocated")
                .map(|b| b.size)
                .sum();
            let requested: u64 = s.blocks.iter().map(|b| b.requested_size).sum();
            dict(vec![
                ("device", Py::Int(0)),
                ("address", Py::Int(s.address.into())),
                ("total_size", Py::Int(s.total_size.into())),
                ("allocated_size", Py::Int(allocated.into())),
                ("active_size", Py::Int(allocated.into())),
                ("requested_size", Py::Int(requested.into())),
                ("stream", Py::Int(0)),
                ("segment_type", str(if s.small { "small" } else { "large" })),
                (
                    "segment_pool_id",
                    pickle::tuple(vec![Py::Int(0), Py::Int(0)]),
                ),
                ("is_expandable", Py::Bool(s.expandable)),
                ("frames", list(Vec::new())),
                (
                    "blocks",
                    list(
                        s.blocks
                            .iter()
                            .map(|b| {
                                dict(vec![
                                    ("address", Py::Int(b.address.into())),
                                    ("size", Py::Int(b.size.into())),
                                    ("requested_size", Py::Int(b.requested_size.into())),
                                    ("state", str(&b.state)),
                                    ("frames", list(Vec::new())),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let trace = snap
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let action = match e.action {
                Action::Alloc => "alloc",
                Action::FreeRequested => "free_requested",
                Action::FreeCompleted => "free_completed",
                Action::SegmentAlloc => "segment_alloc",
                Action::SegmentFree => "segment_free",
                Action::SegmentMap => "segment_map",
                Action::SegmentUnmap => "segment_unmap",
                Action::Oom => "oom",
                Action::Other => "snapshot",
            };
            let mut items = vec![
                ("action", str(action)),
                ("addr", Py::Int(e.addr.into())),
                ("size", Py::Int(e.size.into())),
                ("stream", Py::Int(0)),
                // one microsecond an event: the order, which is all a replay knows of time
                ("time_us", Py::Int(i as i128)),
                ("frames", frames(&e.frames)),
            ];
            if e.action == Action::Oom {
                items.push(("device_free", Py::Int(0)));
            }
            dict(items)
        })
        .collect();
    pickle::write(&dict(vec![
        ("segments", list(segments)),
        ("device_traces", list(vec![list(trace)])),
        (
            "allocator_settings",
            dict(vec![
                (
                    "PYTORCH_CUDA_ALLOC_CONF",
                    str(snap.alloc_conf.as_deref().unwrap_or("")),
                ),
                ("expandable_segments", Py::Bool(snap.expandable_segments)),
            ]),
        ),
        ("external_annotations", list(Vec::new())),
    ]))
}
