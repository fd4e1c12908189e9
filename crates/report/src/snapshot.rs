//! A memory snapshot read back, as JSON: the CLI's `vramfit --snapshot FILE --json` and what the
//! page's snapshot worker hands the page, one contract. Every field of the recorded run: its
//! peaks, the memory over it (drawn with at most [`POINTS`] points), an out-of-memory request,
//! what was live at the peak and at the OOM by component and by line, the cache at the dump per
//! segment, and the program vramfit recognises from its frames.

use estimator::programs::Program;
use estimator::Component;
use serde_json::{json, Map, Value};
use vramfit_snapshot::explain::{envelope, files};
use vramfit_snapshot::{moment, segments_at_dump, History, Moment, Snapshot};

/// How many of the allocating lines a moment names.
pub const SITES: usize = 5;

/// Points of the memory over the run: a chart's width in pixels is about this.
pub const POINTS: usize = 400;

/// The program whose script the recorded frames name (the first of the user's files, the most
/// often named first, that a program runs), if any.
pub fn recognised(snap: &Snapshot) -> Option<(Program, String)> {
    files(snap)
        .into_iter()
        .find_map(|f| Program::from_script(&f).map(|p| (p, f)))
}

fn moment_json(m: &Moment) -> Value {
    json!({
        "components_bytes": Component::ALL
            .iter()
            .map(|&c| (c.id().to_string(), Value::from(m.components[c as usize])))
            .collect::<Map<_, _>>(),
        "before_recording_bytes": m.before_recording,
        "allocated_by": m.sites
            .iter()
            .take(SITES)
            .map(|(site, b)| json!({"site": site, "bytes": b}))
            .collect::<Vec<_>>(),
    })
}

/// The whole reading of `snap`, whose history is `h`, under the key `snapshot`.
pub fn to_json(snap: &Snapshot, h: &History) -> Value {
    let at_peak = moment(snap, h, h.peak_event, h.peak_allocated);
    let at_oom = h.oom.map(|o| moment(snap, h, o.event, o.allocated));
    let timeline = envelope(h, POINTS);
    let segments = segments_at_dump(snap);
    let program = recognised(snap);
    json!({
        "snapshot": {
            "events": snap.events.len(),
            "whole_run": h.whole_run,
            "exact": h.exact,
            "expandable_segments": snap.expandable_segments,
            "peak_allocated_bytes": h.peak_allocated,
            "peak_reserved_bytes": h.peak_reserved,
            "peak_event": h.peak_event,
            "oom": h.oom.map(|o| json!({
                "event": o.event,
                "requested_bytes": o.requested,
                "allocated_bytes": o.allocated,
                "reserved_bytes": o.reserved,
                "cached_free_bytes": o.cached_free,
                "largest_free_block_bytes": o.largest_free,
                "internal_fragmentation_bytes": o.internal,
            })),
            "live_at_peak": moment_json(&at_peak),
            "live_at_oom": at_oom.as_ref().map(moment_json),
            "timeline": {
                "event": timeline.iter().map(|p| p.0).collect::<Vec<_>>(),
                "allocated_bytes": timeline.iter().map(|p| p.1).collect::<Vec<_>>(),
                "reserved_bytes": timeline.iter().map(|p| p.2).collect::<Vec<_>>(),
            },
            "segments_at_dump": segments.iter().map(|s| json!({
                "address": s.address,
                "total_bytes": s.total,
                "allocated_bytes": s.allocated,
                "internal_bytes": s.internal,
                "free_bytes": s.free,
                "small_pool": s.small,
                "expandable": s.expandable,
            })).collect::<Vec<_>>(),
            "script": program.as_ref().map(|p| p.1.clone()),
            "program": program.map(|p| p.0.id()),
        }
    })
}
