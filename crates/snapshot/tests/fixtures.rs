//! The snapshots of real runs in `data/snapshots` (taken on an H200, PyTorch 2.11: see
//! data/README.md), read as a user's would be: the peaks each run measured for itself, and the
//! request each capped run failed at.

#![allow(clippy::unwrap_used)]

use std::path::Path;

fn run(name: &str) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
    let runs = std::fs::read_to_string(root.join("runs.jsonl")).unwrap();
    runs.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["name"] == name)
        .unwrap()
}

fn history(name: &str) -> vramfit_snapshot::History {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
    let bytes = std::fs::read(root.join(format!("{name}.pickle.gz"))).unwrap();
    vramfit_snapshot::follow(&vramfit_snapshot::read(&bytes).unwrap())
}

/// `max_memory_allocated` and `max_memory_reserved` as the run measured them.
fn measured(name: &str) -> (u64, u64) {
    let m = &run(name)["measured_bytes"];
    let allocated = m
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("peak_allocated"))
        .filter_map(|(_, v)| v.as_u64())
        .max()
        .unwrap();
    (allocated, m["peak_reserved"].as_u64().unwrap())
}

#[test]
fn the_peaks_are_the_runs_own() {
    for name in ["snap_nanogpt_char", "snap_bng_l4"] {
        let h = history(name);
        assert!(h.exact, "{name}: the whole run is recorded");
        assert_eq!(
            (h.peak_allocated, h.peak_reserved),
            measured(name),
            "{name}"
        );
    }
}

#[test]
fn a_history_cut_short_is_estimated_near_the_peak() {
    // 30,000 events kept of a longer run: the peak is in them, its blocks' sizes estimated
    let h = history("snap_nanochat_d4");
    assert!(!h.exact);
    let (allocated, reserved) = measured("snap_nanochat_d4");
    assert_eq!(h.peak_reserved, reserved);
    let off = h.peak_allocated.abs_diff(allocated) as f64 / allocated as f64;
    assert!(off < 0.001, "{} against {allocated}", h.peak_allocated);
}

#[test]
fn an_out_of_memory_run_names_the_request() {
    for (name, requested) in [
        ("snap_nanogpt_b12_cap6", 2_472_542_208),
        ("snap_bng_b16_cap8", 3_296_722_944),
        ("snap_nanochat_d12_cap6", 100_663_296),
    ] {
        let h = history(name);
        let oom = h.oom.unwrap_or_else(|| panic!("{name}: no OOM"));
        assert_eq!(oom.requested, requested, "{name}");
    }
}

#[test]
fn every_events_frames_are_read_however_often_shared() {
    // the nanoGPT run's trace: 3,409 of its 7,398 events have Python frames (as Python's own
    // pickle.load reads them); 93 frame dicts are referred to 46,699 times through the memo
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
    let bytes = std::fs::read(root.join("snap_nanogpt_char.pickle.gz")).unwrap();
    let snap = vramfit_snapshot::read(&bytes).unwrap();
    assert_eq!(snap.events.len(), 7398);
    let framed = snap.events.iter().filter(|e| !e.frames.is_empty()).count();
    assert_eq!(framed, 3409);
    let refs: usize = snap.events.iter().map(|e| e.frames.len()).sum();
    assert_eq!(refs, 46_699);
}

#[test]
fn broken_snapshots_are_refused_never_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
    let gz = std::fs::read(root.join("snap_nanogpt_b12_cap6.pickle.gz")).unwrap();
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw).unwrap();
    let mut seed: u64 = 0x5eed;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) as usize
    };
    for _ in 0..200 {
        // cut anywhere, or one byte changed anywhere: an answer or a message
        let mut bytes = raw.clone();
        if next() % 2 == 0 {
            bytes.truncate(next() % raw.len());
        } else {
            let at = next() % raw.len();
            bytes[at] = next() as u8;
        }
        if let Ok(snap) = vramfit_snapshot::read(&bytes) {
            let _ = vramfit_snapshot::follow(&snap);
        }
    }
}

#[test]
fn what_was_live_adds_up_and_the_parameters_are_the_models() {
    for name in [
        "snap_nanogpt_char",
        "snap_nanogpt_b12_cap6",
        "snap_bng_l4",
        "snap_bng_b16_cap8",
        "snap_nanochat_d12_cap6",
    ] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
        let bytes = std::fs::read(root.join(format!("{name}.pickle.gz"))).unwrap();
        let snap = vramfit_snapshot::read(&bytes).unwrap();
        let h = vramfit_snapshot::follow(&snap);
        let at_peak = vramfit_snapshot::moment(&snap, &h, h.peak_event, h.peak_allocated);
        assert_eq!(
            at_peak.components.iter().sum::<u64>(),
            h.peak_allocated,
            "{name}"
        );
        assert_eq!(
            at_peak.sites.iter().map(|s| s.1).sum::<u64>(),
            h.peak_allocated,
            "{name}"
        );
        if let Some(o) = h.oom {
            let at_oom = vramfit_snapshot::moment(&snap, &h, o.event, o.allocated);
            assert_eq!(at_oom.components.iter().sum::<u64>(), o.allocated, "{name}");
        }
    }
    // train.py's char model: its parameters are what the probe measured after model.to(device)
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/snapshots");
    let bytes = std::fs::read(root.join("snap_nanogpt_char.pickle.gz")).unwrap();
    let snap = vramfit_snapshot::read(&bytes).unwrap();
    let h = vramfit_snapshot::follow(&snap);
    let m = vramfit_snapshot::moment(&snap, &h, h.peak_event, h.peak_allocated);
    let to_device = run("snap_nanogpt_char")["measured_bytes"]["after_model_to_device"]
        .as_u64()
        .unwrap();
    assert_eq!(
        m.components[engine::terms::Component::Params as usize],
        to_device
    );
}
