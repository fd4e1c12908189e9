//! The allocator simulation against every event of twenty real runs (data/traces): the real
//! requests and frees, replayed through the simulated caching allocator, must reproduce the run's
//! segment allocations (count and bytes), its peaks, the capped run's out-of-memory at the same
//! request, and with expandable segments the reserved bytes after every request, under a memory
//! fraction, on a card with little memory free, and without a limit.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;

use estimator::allocator::{BlockId, CachingAllocator, Cap, CapKind};
use estimator::Allocator;
use serde_json::{json, Value};

mod common;
use common::{traced_requests_reserve, SegmentsAt};

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces")
}

fn trace(name: &str) -> Value {
    let path = traces().join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A probe's gzipped events file, as written.
fn raw_events(name: &str) -> Value {
    let file = std::fs::File::open(traces().join(format!("{name}-events.json.gz"))).unwrap();
    serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap()
}

/// A trace as a probe wrote it (tools/nanogpt-probe/run_train_expandable.py: every event with its
/// action name and time; tools/nanochat-probe/trace_events.py: short actions, times and sites;
/// gzipped), in the short form of the others (data/README.md).
fn events_trace(name: &str) -> Value {
    let raw = raw_events(name);
    let short = |action: &str| match action {
        "alloc" => Some("a"),
        "free_requested" => Some("f"),
        "free_completed" => Some("F"),
        "segment_map" => Some("m"),
        "segment_unmap" => Some("u"),
        "oom" => Some("o"),
        _ => None,
    };
    let events: Vec<Value> = raw["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            // nanoGPT's probe names each field; nanochat's (trace_events.py) writes them short
            if e.is_array() {
                return Some(json!([e[0], e[1], e[2]]));
            }
            let addr = e["addr"].as_u64().unwrap_or(0);
            let size = e["size"].as_u64().unwrap_or(0);
            Some(json!([short(e["a"].as_str()?)?, addr, size]))
        })
        .collect();
    json!({ "events": events, "free_at_start": raw["free_at_start"] })
}

/// A cap set with `torch.cuda.set_per_process_memory_fraction`, as the probes set theirs.
fn fraction(gib: f64) -> Option<Cap> {
    Some(Cap {
        bytes: (gib * (1u64 << 30) as f64) as u128,
        kind: CapKind::Fraction,
    })
}

struct Outcome {
    segments: Vec<u64>,
    /// Reserved bytes after each request.
    reserved: Vec<u64>,
    peak_allocated: u64,
    peak_reserved: u64,
    /// Index (among allocation requests) of the request that failed.
    oom_at: Option<usize>,
}

/// Replays the trace's requests and frees (`a`, `f`) in order under `cap`.
fn replay(t: &Value, mode: Allocator, cap: Option<Cap>) -> Outcome {
    let mut a = CachingAllocator::new(mode, cap);
    let mut live: HashMap<u64, BlockId> = HashMap::new();
    let mut segments = Vec::new();
    let mut reserved = Vec::new();
    let mut requests = 0;
    let mut oom_at = None;
    for e in t["events"].as_array().unwrap() {
        let (action, addr, size) = (
            e[0].as_str().unwrap(),
            e[1].as_u64().unwrap(),
            e[2].as_u64().unwrap(),
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
                reserved.push(a.reserved());
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
        reserved,
        peak_allocated: a.peak_allocated(),
        peak_reserved: a.peak_reserved(),
        oom_at,
    }
}

fn real_segments(t: &Value) -> Vec<u64> {
    t["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[0] == "s")
        .map(|e| e[2].as_u64().unwrap())
        .collect()
}

/// Reserved bytes after each request: the maps and unmaps a request made come before it.
fn real_reserved(t: &Value) -> Vec<u64> {
    let mut now: u64 = 0;
    let mut out = Vec::new();
    for e in t["events"].as_array().unwrap() {
        let size = e[2].as_u64().unwrap();
        match e[0].as_str().unwrap() {
            "m" | "s" => now += size,
            "u" | "S" => now -= size,
            "a" => out.push(now),
            _ => {}
        }
    }
    out
}

/// Panics at the first request after which the replay's reserved bytes differ from the run's by
/// more than `tolerance`.
fn assert_reserved_follows(name: &str, out: &Outcome, real: &[u64], tolerance: u64) {
    assert_eq!(out.reserved.len(), real.len(), "{name}: requests");
    if let Some(i) = (0..real.len()).find(|&i| out.reserved[i].abs_diff(real[i]) > tolerance) {
        panic!(
            "{name}: after request {i} reserved {} where the run had {}",
            out.reserved[i], real[i]
        );
    }
}

fn real_peak_allocated(t: &Value) -> u64 {
    t["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["peak_alloc"].as_u64().unwrap())
        .max()
        .unwrap()
}

const SMALL_SEGMENT: u64 = 2 << 20;

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
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
        let large = |v: &[u64]| sorted(v.iter().copied().filter(|s| *s > SMALL_SEGMENT).collect());
        let small = |v: &[u64]| v.iter().filter(|s| **s <= SMALL_SEGMENT).count();
        assert_eq!(large(&out.segments), large(&real), "{name}: large segments");
        assert!(
            small(&out.segments).abs_diff(small(&real)) <= 1,
            "{name}: small segments"
        );
        let reserved = real.iter().sum::<u64>();
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

/// nanochat's base_train.py with the default allocator (tools/nanochat-probe/device_call_trace.sh
/// default, cold compiles): the reserved peak exactly, and after every request within one small
/// segment (as above, a few sub-MiB blocks are packed a little differently).
#[test]
fn default_allocator_reserves_what_nanochat_did() {
    // the first three: nanochat.jsonl's traced twins; the rest its configurations as a first run,
    // with the probe's counter resets and without (docs/allocation-order.md §18; nc_coldcalnr_27,
    // whose sub-MiB blocks pack into one 2 MiB segment more in the replay, is left out)
    for name in [
        "nc_tr_cal17",
        "nc_tr_cal00",
        "nc_tr_cal01",
        "nc_coldcal_09",
        "nc_coldcal_25",
        "nc_coldcalnr_01",
        "nc_coldcalnr_09",
        "nc_coldcalnr_25",
    ] {
        let t = events_trace(name);
        let out = replay(&t, Allocator::Default, None);
        let real = real_reserved(&t);
        assert_reserved_follows(name, &out, &real, SMALL_SEGMENT);
        assert_eq!(out.peak_reserved, *real.iter().max().unwrap(), "{name}");
    }
}

#[test]
fn capped_run_fails_at_the_same_request() {
    let t = trace("s_b8_bf16_eager_cap12_oom");
    let out = replay(&t, Allocator::Default, fraction(11.25));
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
fn expandable_segments_map_and_unmap_as_pytorch_does() {
    // GPT-2 small, eager, batch 8 under 11.25 GiB; batch 16 under 18 GiB (seven times the
    // cache is unmapped and the request placed again) and without a cap
    for (name, t, cap) in [
        (
            "s_b8 capped",
            trace("s_b8_bf16_eager_cap12_expandable"),
            fraction(11.25),
        ),
        (
            "s_b16 capped",
            events_trace("exp_s_b16_cap18"),
            fraction(18.0),
        ),
        ("s_b16", events_trace("exp_s_b16_uncapped"), None),
        // nanochat's base_train.py (tools/nanochat-probe/device_call_trace.sh), cold compiles:
        // its Muon step's buffers and Inductor's autotuning between them set the reserved peak
        ("nanochat d20", events_trace("nc_tr_exp_22"), None),
        ("nanochat d16", events_trace("nc_tr_exp_cal29"), None),
        ("nanochat d10", events_trace("nc_tr_exp_16"), None),
        // --fp8 (tools/nanochat-probe/fp8_call.sh edge, stop 62): the run whose reserve vramfit's
        // sequence misses most, its 49,720 requests mapped as PyTorch mapped them
        (
            "nanochat d18 fp8",
            events_trace("nc_fp8tr_h200_d18_B2_T2048_GA1_L"),
            None,
        ),
    ] {
        let out = replay(&t, Allocator::ExpandableSegments, cap);
        assert_eq!(out.oom_at, None, "{name}: fits");
        let real = real_reserved(&t);
        assert_reserved_follows(name, &out, &real, 0);
        assert_eq!(out.peak_reserved, *real.iter().max().unwrap(), "{name}");
    }
}

/// On a card with no fraction set (the probe took all but 18, 17.5 or 16.6 GiB of an H200 with
/// cuMemAlloc), a request needs only the pages it maps: the same run as under an 18 GiB fraction
/// reserves 18,511,560,704 bytes at its peak rather than 17,882,415,104, and with 16.6 GiB it
/// fails at the same request as the simulation.
#[test]
fn on_a_card_expandable_segments_map_only_what_they_need() {
    for (name, peak, fails) in [
        ("exp_s_b16_free18", 18_511_560_704, false),
        ("exp_s_b16_free17.5", 18_511_560_704, false),
        ("exp_s_b16_free16.6", 17_316_184_064, true),
    ] {
        let t = events_trace(name);
        let free = t["free_at_start"].as_u64().unwrap();
        let out = replay(
            &t,
            Allocator::ExpandableSegments,
            Some(Cap::card(free.into())),
        );
        let real = real_reserved(&t);
        assert_reserved_follows(name, &out, &real, 0);
        assert_eq!(out.peak_reserved, peak, "{name}");
        // the failed request (`o`) is the one after the last that succeeded
        assert_eq!(out.oom_at, fails.then_some(real.len()), "{name}");
    }
    // the fraction's whole-request check would have released the cache earlier
    let as_fraction = replay(
        &events_trace("exp_s_b16_free18"),
        Allocator::ExpandableSegments,
        fraction(18.0),
    );
    assert_eq!(as_fraction.peak_reserved, 17_882_415_104);
}

/// A request's place: the segment (numbered in the order segments were made) and the offset.
type Spot = (usize, u64);

/// Where each of a run's requests landed (its own addresses) and where the simulation of its
/// requests puts them, with the run's segments (address, bytes) in the order they were made.
struct Placements {
    real: Vec<Spot>,
    simulated: Vec<Spot>,
    segments: Vec<(u64, u64)>,
}

fn placements(name: &str) -> Placements {
    let raw = raw_events(name);
    let within = |segs: &[(u64, u64)], at: u64| {
        let k = segs
            .iter()
            .rposition(|&(s, size)| s <= at && at < s + size)
            .unwrap();
        (k, at - segs[k].0)
    };
    let (mut real, mut segments) = (Vec::new(), Vec::new());
    let mut a = CachingAllocator::new(Allocator::Default, None);
    a.record_segments();
    let (mut simulated, mut sim_segs) = (Vec::new(), Vec::new());
    let mut live: HashMap<u64, BlockId> = HashMap::new();
    for e in raw["events"].as_array().unwrap() {
        let addr = e["addr"].as_u64().unwrap_or(0);
        let size = e["size"].as_u64().unwrap_or(0);
        match e["a"].as_str().unwrap() {
            "segment_alloc" => segments.push((addr, size)),
            "alloc" => {
                real.push(within(&segments, addr));
                let id = a.malloc(size).unwrap();
                sim_segs.extend(a.take_segment_changes().iter().map(|c| (c.addr, c.size)));
                simulated.push(within(&sim_segs, a.block_addr(id).unwrap()));
                live.insert(addr, id);
            }
            "free_completed" => {
                if let Some(id) = live.remove(&addr) {
                    a.free(id);
                }
            }
            _ => {}
        }
    }
    Placements {
        real,
        simulated,
        segments,
    }
}

/// What no model of the program can say (stop 62; docs/allocation-order.md §17, ACCURACY.md's
/// chapter 6): `lfs_cf_s_L1024_b2`, whose reserve vramfit puts 7.5 % under. Its own 7,935
/// requests and frees through the simulated allocator reserve 1,220 MiB where the run reserved
/// 1,316 — the same segments but the last 96 MiB one. In it and in `lfs_cf_s_L120_b16` (−2.3 %)
/// the first 227 requests land where PyTorch put them, segment and offset; the 228th finds two
/// free blocks of one size at one offset in two 20 MiB segments, and best fit takes the lower
/// address (`BlockComparatorSize`). The simulation gives each new segment an address below the
/// last (cudaMalloc's usual order, which the other traces follow); in both runs the driver put
/// the 24th segment above the 23rd, so PyTorch took the older one. The request streams are the
/// runs' own; the departure is the driver's choice of virtual addresses.
#[test]
fn the_drivers_address_order_decides_a_tie() {
    let mut l1024_segments = Vec::new();
    for name in ["lfs_cf_s_L1024_b2", "lfs_cf_s_L120_b16"] {
        let p = placements(name);
        let first = (0..p.real.len())
            .find(|&i| p.real[i] != p.simulated[i])
            .unwrap();
        assert_eq!(first, 227, "{name}");
        let ((r, off_r), (s, off_s)) = (p.real[first], p.simulated[first]);
        assert_eq!(off_r, off_s, "{name}: the same offset in two segments");
        assert!(
            r < s && p.segments[r].0 < p.segments[s].0,
            "{name}: PyTorch took the older, lower one"
        );
        if name == "lfs_cf_s_L1024_b2" {
            l1024_segments = p.segments;
        }
    }
    let out = replay(&events_trace("lfs_cf_s_L1024_b2"), Allocator::Default, None);
    assert_eq!(out.peak_reserved, 1_220 << 20);
    let mut missing: Vec<u64> = l1024_segments.iter().map(|s| s.1).collect();
    for s in &out.segments {
        let i = missing.iter().position(|m| m == s).unwrap();
        missing.remove(i);
    }
    assert_eq!(missing, [96 << 20]);
}

/// `--fp8` at depth 18 as a first run, the nanochat run whose reserve vramfit misses most
/// (−3.8 %; docs/allocation-order.md §22): its autotuning does not decide that reserve. With the
/// trace's 670 flush buffers taken out (60 MiB, the H200's; each made and freed around one
/// kernel's timings: 26 up to the first eval's end, 86 in iteration 0's forward, 445 in its
/// backward, 113 in its optimizer step), its own requests still reserve the run's 10,954 MiB.
/// What the model lacks there is the order of the steady graphs' own buffers — the forward's
/// casts between its saved tensors, the backward's pool and its gradients among the activations
/// it frees — not the first run's timings.
#[test]
fn fp8_reserve_is_not_the_first_runs_timings() {
    const FLUSH: u64 = 60 << 20;
    let t = events_trace("nc_fp8tr_h200_d18_B2_T2048_GA1_L");
    let events = t["events"].as_array().unwrap();
    // a flush is freed before its address is handed out again (checked: no request lands on an
    // open flush's address)
    let mut open: HashMap<u64, ()> = HashMap::new();
    let mut flushes = 0;
    let kept: Vec<Value> = events
        .iter()
        .filter(|e| {
            let (action, addr) = (e[0].as_str().unwrap(), e[1].as_u64().unwrap());
            match action {
                "a" if e[2].as_u64().unwrap() == FLUSH => {
                    flushes += 1;
                    open.insert(addr, ()).is_some()
                }
                "a" => {
                    assert!(!open.contains_key(&addr), "a request inside a flush");
                    true
                }
                "f" | "F" => open.remove(&addr).is_none(),
                _ => true,
            }
        })
        .cloned()
        .collect();
    assert_eq!(flushes, 670);
    let full = replay(&t, Allocator::ExpandableSegments, None);
    let without = replay(
        &json!({ "events": kept }),
        Allocator::ExpandableSegments,
        None,
    );
    assert_eq!(full.peak_reserved, 10_954 << 20);
    assert_eq!(without.peak_reserved, full.peak_reserved);
    assert_eq!(without.peak_allocated, full.peak_allocated);
}

/// A trace's own requests replayed, each new segment where `at` says: the peak reserved, in MiB.
fn reserve_at(name: &str, at: SegmentsAt) -> u64 {
    traced_requests_reserve(name, at) >> 20
}

/// Best fit breaks a tie between free blocks of one size by address, so where the driver puts
/// each segment can decide a run's reserve (ch06 at 1,024 tokens −7.5 %, the DDP script's batch 8
/// without dropout +12.6 %). Is that placement a function of the segments the caching allocator
/// asks for, which a model could follow? tools/driver-va replayed each trace's cudaMallocs and
/// cudaFrees alone, in a fresh process on the same H200 and driver (580.159.04), once cold and
/// once after a matmul (data/traces/driver-va-replays.jsonl.gz: the traced and the replayed
/// address of every segment, relative to the first). Fed back here:
/// - the two runs vramfit misses most: at the replayed addresses their requests reserve what the
///   simulation does, at the run's what the run did. Their ties were decided by address space
///   something else in the process held (the run's 20 MiB segments land in holes 1-3 GiB away,
///   the replay's one after another): nothing the allocator asks for says it.
/// - ch06 at 120 tokens (−2.3 %) and three runs 2-4 MiB apart: the replayed addresses give the
///   run's bytes, so there the sizes alone decide — by a placement (32 MiB-aligned slots top down,
///   small segments in their tails) that the simulation's "each below the last" only
///   approximates.
#[test]
fn the_drivers_addresses_are_not_the_allocators_to_know() {
    let file = std::fs::File::open(traces().join("driver-va-replays.jsonl.gz")).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).unwrap();
    let mut checked = 0;
    let (mut agree, mut sizes_decide) = (0, Vec::new());
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["gpu"], "NVIDIA H200");
        let name = r["trace"]
            .as_str()
            .unwrap()
            .trim_end_matches("-events.json.gz");
        let pairs = r["pairs"].as_array().unwrap();
        // (the expandable-segments traces map pages, not segments: nothing to place)
        if pairs.is_empty() || name.starts_with("exp_") {
            continue;
        }
        let at = |k: usize| -> Vec<u64> {
            // relative MiB, around an address below any card's
            let mib = |p: &Value| (p[k].as_f64().unwrap() * 1048576.0) as i64;
            pairs
                .iter()
                .map(|p| ((1i64 << 46) + mib(p)) as u64)
                .collect()
        };
        let simulated = reserve_at(name, SegmentsAt::Simulated);
        let real = reserve_at(name, SegmentsAt::Given(&at(1)));
        let replayed = reserve_at(name, SegmentsAt::Given(&at(2)));
        checked += 1;
        agree += usize::from(simulated == real);
        if replayed == real && simulated != real {
            sizes_decide.push(name.to_string());
        }
        match name {
            "lfs_cf_s_L1024_b2" => assert_eq!((simulated, real, replayed), (1220, 1316, 1220)),
            "spd_ddp1_c1024_b8_drop0_trace_rank0" => {
                assert_eq!((simulated, real, replayed), (7030, 6244, 7030))
            }
            "lfs_cf_s_L120_b16" => assert_eq!((simulated, real, replayed), (1020, 1044, 1044)),
            _ => {}
        }
    }
    // 29 traces, twice each (cold, after a matmul)
    assert_eq!(checked, 58);
    assert_eq!(agree, 46);
    sizes_decide.sort();
    sizes_decide.dedup();
    assert_eq!(
        sizes_decide,
        [
            "lfs_cf_s_L120_b16",
            "nc_coldcalnr_27",
            "ngc_h200_fp16_char_T2048_B1_ga1",
            "ngc_h200_fp32_gpt2_T512_B2_ga1"
        ]
    );
}
