//! The allocator simulation against every event of eight real runs (data/traces): the
//! real requests and frees, replayed through the simulated caching allocator, must reproduce the
//! run's segment allocations (count and bytes), its peaks, and the capped run's out-of-memory at
//! the same request.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;

use estimator::allocator::{BlockId, CachingAllocator};
use estimator::Allocator;
use serde_json::Value;

fn trace(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/traces")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

struct Outcome {
    segments: Vec<u128>,
    peak_allocated: u128,
    peak_reserved: u128,
    /// Index (among allocation requests) of the request that failed.
    oom_at: Option<usize>,
}

/// Replays the trace's requests and frees (`a`, `f`) in order; `cap` as the run's memory fraction.
fn replay(t: &Value, mode: Allocator, cap: Option<u128>) -> Outcome {
    let mut a = CachingAllocator::new(mode, cap);
    let mut live: HashMap<u64, BlockId> = HashMap::new();
    let mut segments = Vec::new();
    let mut requests = 0;
    let mut oom_at = None;
    for e in t["events"].as_array().unwrap() {
        let (action, addr, size) = (
            e[0].as_str().unwrap(),
            e[1].as_u64().unwrap(),
            u128::from(e[2].as_u64().unwrap()),
        );
        match action {
            // `o` is the request that failed for real: replay it as a request too
            "a" | "o" => {
                let before = a.reserved();
                match a.malloc(size) {
                    Ok(id) => {
                        live.insert(addr, id);
                    }
                    Err(_) => {
                        oom_at = Some(requests);
                        break;
                    }
                }
                if a.reserved() > before {
                    segments.push(a.reserved() - before);
                }
                requests += 1;
            }
            "f" => {
                if let Some(id) = live.remove(&addr) {
                    a.free(id);
                }
            }
            _ => {}
        }
    }
    Outcome {
        segments,
        peak_allocated: a.peak_allocated(),
        peak_reserved: a.peak_reserved(),
        oom_at,
    }
}

fn real_segments(t: &Value) -> Vec<u128> {
    t["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[0] == "s")
        .map(|e| u128::from(e[2].as_u64().unwrap()))
        .collect()
}

fn real_peak_allocated(t: &Value) -> u128 {
    t["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| u128::from(m["peak_alloc"].as_u64().unwrap()))
        .max()
        .unwrap()
}

const SMALL_SEGMENT: u128 = 2 << 20;

fn sorted(mut v: Vec<u128>) -> Vec<u128> {
    v.sort_unstable();
    v
}

#[test]
fn default_allocator_reproduces_segments_and_peaks() {
    for name in [
        "s_b8_bf16_eager",
        "s_b8_bf16_compile",
        "s_b4_fp32_eager",
        "s_b4_bf16_dropout",
        "s_b4_bf16_eager_acc1",
        "char_b64_bf16_eager",
    ] {
        let t = trace(name);
        let out = replay(&t, Allocator::Default, None);
        let real = real_segments(&t);
        // every large-pool segment exactly; the small pool's 2 MiB segments within one (the
        // real allocator packs a few sub-MiB blocks a little tighter in one run)
        let large = |v: &[u128]| sorted(v.iter().copied().filter(|s| *s > SMALL_SEGMENT).collect());
        let small = |v: &[u128]| v.iter().filter(|s| **s <= SMALL_SEGMENT).count();
        assert_eq!(large(&out.segments), large(&real), "{name}: large segments");
        assert!(
            small(&out.segments).abs_diff(small(&real)) <= 1,
            "{name}: small segments"
        );
        let reserved = real.iter().sum::<u128>();
        assert!(
            out.peak_reserved.abs_diff(reserved) <= SMALL_SEGMENT,
            "{name}: reserved"
        );
        // best fit among equal blocks may pick another one than the real allocator did; the
        // unsplit tails then differ by a few MiB at most
        let real_peak = real_peak_allocated(&t) as f64;
        let err = (out.peak_allocated as f64 - real_peak).abs() / real_peak;
        assert!(
            err < 0.001,
            "{name}: peak allocated {} vs {real_peak}",
            out.peak_allocated
        );
    }
}

#[test]
fn capped_run_fails_at_the_same_request() {
    let t = trace("s_b8_bf16_eager_cap12_oom");
    let cap = (11.25 * (1u64 << 30) as f64) as u128;
    let out = replay(&t, Allocator::Default, Some(cap));
    let real_requests = t["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[0] == "a")
        .count();
    // the request that failed for real is the one after the trace's last successful one
    assert_eq!(out.oom_at, Some(real_requests));
    assert_eq!(sorted(out.segments), sorted(real_segments(&t)));
}

#[test]
fn expandable_segments_fit_the_same_cap() {
    let t = trace("s_b8_bf16_eager_cap12_expandable");
    let cap = (11.25 * (1u64 << 30) as f64) as u128;
    let out = replay(&t, Allocator::ExpandableSegments, Some(cap));
    assert_eq!(out.oom_at, None, "fits with expandable segments");
    assert_eq!(out.peak_allocated, real_peak_allocated(&t));
    let real_reserved = t["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["peak_reserved"].as_u64().unwrap())
        .max()
        .unwrap();
    let err = (out.peak_reserved as f64 - real_reserved as f64).abs() / real_reserved as f64;
    assert!(
        err < 0.06,
        "reserved {} vs {}",
        out.peak_reserved,
        real_reserved
    );
}
