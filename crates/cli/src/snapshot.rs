//! `vramfit --snapshot FILE`: a PyTorch memory snapshot read back — the peaks the run recorded
//! and, where it ran out of memory, the request and the cache at that moment.

use std::process::ExitCode;

use estimator::Component;
use vramfit_i18n::format::{bytes, grouped};
use vramfit_i18n::{fill, CliLang};
use vramfit_snapshot::{follow, moment, read, History, Moment, Snapshot};

use crate::report::{head, notes, Text};
use crate::{emit, fail};

pub fn main(path: &str, json: bool, tr: &CliLang) -> ExitCode {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(format!("--snapshot {path}: {e}")),
    };
    let snap = match read(&bytes) {
        Ok(s) => s,
        Err(e) => return fail(format!("--snapshot {path}: {e}")),
    };
    if snap.events.is_empty() {
        return fail(format!("--snapshot {path}: {}", tr.cli.snapshot_empty));
    }
    let history = follow(&snap);
    let at_peak = moment(&snap, &history, history.peak_event, history.peak_allocated);
    let at_oom = history
        .oom
        .map(|o| moment(&snap, &history, o.event, o.allocated));
    let file = std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
    if json {
        emit(&(to_json(&history, &snap, &at_peak, at_oom.as_ref()).to_string() + "\n"))
    } else {
        emit(&to_text(
            tr,
            &file,
            &history,
            &snap,
            &at_peak,
            at_oom.as_ref(),
        ))
    }
}

/// How many of the allocating lines a report names.
const SITES: usize = 5;

fn to_text(
    tr: &CliLang,
    file: &str,
    h: &History,
    snap: &Snapshot,
    at_peak: &Moment,
    at_oom: Option<&Moment>,
) -> String {
    let c = &tr.cli;
    let events_text = grouped(snap.events.len() as u64);
    let recorded = if h.whole_run {
        fill(
            c.snapshot_whole,
            &[("file", file), ("events", &events_text)],
        )
    } else {
        fill(c.snapshot_cut, &[("file", file), ("events", &events_text)])
    };
    let mut rows = vec![
        (c.row_snapshot, recorded),
        (c.row_peak_allocated, bytes(h.peak_allocated.into())),
        (c.row_peak_reserved, bytes(h.peak_reserved.into())),
    ];
    if let Some(o) = h.oom {
        rows.push((
            c.row_oom,
            fill(
                c.snapshot_oom,
                &[
                    ("requested", &bytes(o.requested.into())),
                    ("allocated", &bytes(o.allocated.into())),
                    ("reserved", &bytes(o.reserved.into())),
                    ("free", &bytes(o.cached_free.into())),
                    ("largest", &bytes(o.largest_free.into())),
                ],
            ),
        ));
    }
    for (label, m) in [(c.row_live_peak, Some(at_peak)), (c.row_live_oom, at_oom)] {
        if let Some(m) = m {
            rows.push((label, live(tr, m)));
            rows.push((c.row_allocated_by, sites(m)));
        }
    }
    let mut out = Text::default();
    head(&mut out, &rows);
    if !h.exact {
        out.blank();
        notes(&mut out, tr, &[c.snapshot_estimated]);
    }
    out.into_string()
}

/// The components live at a moment, largest first, and what was there before the recording.
fn live(tr: &CliLang, m: &Moment) -> String {
    // (what was there before the recording is counted as other, and said apart)
    let mut parts: Vec<(Component, u64)> = Component::ALL
        .iter()
        .map(|&c| match c {
            Component::Other => (c, m.components[c as usize] - m.before_recording),
            _ => (c, m.components[c as usize]),
        })
        .filter(|&(_, b)| b > 0)
        .collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    let mut words: Vec<String> = parts
        .iter()
        .map(|&(c, b)| format!("{} {}", tr.component(c), bytes(b.into())))
        .collect();
    if m.before_recording > 0 {
        words.push(fill(
            tr.cli.snapshot_before,
            &[("bytes", &bytes(m.before_recording.into()))],
        ));
    }
    words.join(" · ")
}

/// The lines of the user's code that allocated the most of what was live.
fn sites(m: &Moment) -> String {
    m.sites
        .iter()
        .take(SITES)
        .map(|(site, b)| format!("{site} {}", bytes((*b).into())))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn moment_json(m: &Moment) -> serde_json::Value {
    serde_json::json!({
        "components_bytes": Component::ALL
            .iter()
            .map(|&c| (c.id().to_string(), serde_json::Value::from(m.components[c as usize])))
            .collect::<serde_json::Map<_, _>>(),
        "before_recording_bytes": m.before_recording,
        "allocated_by": m.sites
            .iter()
            .take(SITES)
            .map(|(site, b)| serde_json::json!({"site": site, "bytes": b}))
            .collect::<Vec<_>>(),
    })
}

fn to_json(
    h: &History,
    snap: &Snapshot,
    at_peak: &Moment,
    at_oom: Option<&Moment>,
) -> serde_json::Value {
    serde_json::json!({
        "snapshot": {
            "events": snap.events.len(),
            "live_at_peak": moment_json(at_peak),
            "live_at_oom": at_oom.map(moment_json),
            "whole_run": h.whole_run,
            "exact": h.exact,
            "peak_allocated_bytes": h.peak_allocated,
            "peak_reserved_bytes": h.peak_reserved,
            "oom": h.oom.map(|o| serde_json::json!({
                "requested_bytes": o.requested,
                "allocated_bytes": o.allocated,
                "reserved_bytes": o.reserved,
                "cached_free_bytes": o.cached_free,
                "largest_free_block_bytes": o.largest_free,
            })),
        }
    })
}
