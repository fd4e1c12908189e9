//! `vramfit --snapshot FILE`: a PyTorch memory snapshot read back — the peaks the run recorded
//! and, where it ran out of memory, the request and the cache at that moment.

use std::process::ExitCode;

use vramfit_i18n::format::{bytes, grouped};
use vramfit_i18n::{fill, CliLang};
use vramfit_snapshot::{follow, read, History};

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
    let file = std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
    if json {
        emit(&(to_json(&history, snap.events.len()).to_string() + "\n"))
    } else {
        emit(&to_text(tr, &file, &history, snap.events.len()))
    }
}

fn to_text(tr: &CliLang, file: &str, h: &History, events: usize) -> String {
    let c = &tr.cli;
    let events_text = grouped(events as u64);
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
    let mut out = Text::default();
    head(&mut out, &rows);
    if !h.exact {
        out.blank();
        notes(&mut out, tr, &[c.snapshot_estimated]);
    }
    out.into_string()
}

fn to_json(h: &History, events: usize) -> serde_json::Value {
    serde_json::json!({
        "snapshot": {
            "events": events,
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
