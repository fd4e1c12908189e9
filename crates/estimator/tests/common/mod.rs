//! Reading the measured runs (data/measured/*.jsonl), shared by the tests that check
//! the estimator against them.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses its own part

use std::path::PathBuf;

use estimator::configurator::Configurator;
use estimator::engine::run::Run;
use estimator::programs::build_nanogpt::BngConfig;
use estimator::programs::nanochat::NanochatConfig;
use estimator::{Phase, TrainConfig};
use serde_json::Value;

/// One JSON object per line of a JSON-lines file, `dir` relative to this crate.
fn read_runs(dir: &str, file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(dir)
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One JSON object per line of `data/measured/<file>`, for the shared measurement notes' files
/// (calibration.jsonl, ddp2.jsonl, nanochat.jsonl; copies kept in the repository: data/README.md).
pub fn measured_runs(file: &str) -> Vec<Value> {
    read_runs("../../data/measured", file)
}

/// One JSON object per line of this project's own measurements, `data/measured/<file>` (how
/// each was taken: tools/*-probe/README.md).
pub fn project_runs(file: &str) -> Vec<Value> {
    read_runs("../../data/measured", file)
}

/// The probes' phase peaks and the replayed phases each is the maximum of.
pub const PHASES: [(&str, &[Phase]); 3] = [
    ("peak_allocated_eval", &[Phase::Eval, Phase::EvalAfterStep]),
    ("peak_allocated_train_iter0", &[Phase::TrainFirstIter]),
    ("peak_allocated_train_steady", &[Phase::TrainSteady]),
];

/// Per measured phase of [`PHASES`]: (key, median, worst) relative error of `replay(run)` over
/// `runs`, and a table of every run for a failure message.
pub fn score(
    runs: &[Value],
    replay: impl Fn(&Value) -> Run,
) -> (Vec<(&'static str, f64, f64)>, String) {
    score_phases(runs, &PHASES, replay)
}

/// [`score`] over a program's own phases: each measured key against the largest of its phases'
/// replayed peaks; the table also shows the reserved peak's error.
pub fn score_phases(
    runs: &[Value],
    keys: &[(&'static str, &[Phase])],
    replay: impl Fn(&Value) -> Run,
) -> (Vec<(&'static str, f64, f64)>, String) {
    let mut errs: Vec<Vec<f64>> = vec![Vec::new(); keys.len()];
    let mut table = String::new();
    for run in runs {
        let r = replay(run);
        table += &format!("{:28}", run["name"].as_str().unwrap());
        for (i, (key, phases)) in keys.iter().enumerate() {
            let Some(m) = run["measured_bytes"][key].as_f64() else {
                continue;
            };
            let p = phases
                .iter()
                .filter_map(|&p| r.phase_bytes(p))
                .max()
                .unwrap_or(0) as f64;
            errs[i].push((p - m).abs() / m);
            table += &format!(
                "  {}: {:9.1} MiB vs {:9.1} ({:+.2}%)",
                &key[14..],
                p / 1048576.0,
                m / 1048576.0,
                (p - m) / m * 100.0
            );
        }
        if let Some(m) = run["measured_bytes"]["peak_reserved"].as_f64() {
            let p = r.free_run.peak_reserved as f64;
            table += &format!("  reserved: {:+.2}%", (p - m) / m * 100.0);
        }
        table += "\n";
    }
    let out = keys
        .iter()
        .zip(errs)
        .map(|((k, _), e)| (*k, median(e.clone()), e.iter().cloned().fold(0.0, f64::max)))
        .collect();
    (out, table)
}

/// Every phase within median 0.5 % and worst 3 %, iteration 0's worst within
/// `iteration_zero_worst` (looser where a test of its own bounds the outliers).
pub fn assert_within_targets(
    (scores, table): (Vec<(&'static str, f64, f64)>, String),
    iteration_zero_worst: f64,
) {
    for (key, med, max) in scores {
        let worst = if key == "peak_allocated_train_iter0" {
            iteration_zero_worst
        } else {
            0.03
        };
        assert!(
            med <= 0.005 && max <= worst,
            "{key}: median {:.3}% worst {:.3}%\n{table}",
            med * 100.0,
            max * 100.0
        );
    }
}

/// The middle value (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The run's config as the scoring tool passes it: `--key=value` per field.
pub fn config(run: &Value) -> TrainConfig {
    let mut c = Configurator::new();
    for (k, v) in run["config"].as_object().unwrap() {
        let value = match v {
            Value::Bool(true) => "True".to_string(),
            Value::Bool(false) => "False".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        c.apply_override(&format!("--{k}={value}")).unwrap();
    }
    c.finish().unwrap().0
}

/// A measured byte count (`None` where the run did not reach that phase).
pub fn measured(run: &Value, key: &str) -> Option<f64> {
    run["measured_bytes"][key].as_f64().filter(|v| *v > 0.0)
}

/// What `max_memory_allocated` reported over the whole run.
pub fn measured_peak(run: &Value) -> f64 {
    [
        "peak_allocated_train_steady",
        "peak_allocated_train_iter0",
        "peak_allocated_eval",
    ]
    .iter()
    .filter_map(|k| measured(run, k))
    .fold(0.0, f64::max)
}

/// A measured build-nanogpt run's constants (compiled or eager, either allocator), as the CLI
/// takes them.
pub fn bng_config(run: &Value) -> BngConfig {
    let c = &run["config"];
    let mut args: Vec<String> = [
        "B",
        "T",
        "total_batch_size",
        "n_layer",
        "n_head",
        "n_embd",
        "vocab_size",
        "block_size",
    ]
    .iter()
    .map(|k| format!("--{k}={}", c[k]))
    .collect();
    let compile = if c["use_compile"].as_bool().unwrap() {
        "True"
    } else {
        "False"
    };
    args.push(format!("--use_compile={compile}"));
    let alloc = match c["allocator"].as_str().unwrap() {
        "expandable" | "expandable_segments" => "expandable_segments",
        _ => "default",
    };
    args.push(format!("--allocator={alloc}"));
    // the one-GPU torchrun runs (build-nanogpt-ddp1.jsonl): the script is under DDP there
    if c["torchrun"].as_bool().unwrap_or(false) {
        args.push("--torchrun=True".into());
    }
    BngConfig::from_args(&args).unwrap()
}

/// A measured nanochat run's flags as it was launched (`argv` of the probes' records).
pub fn nanochat_argv(run: &Value) -> Vec<String> {
    run["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// A measured base_train.py run's config as the scoring tool passes it: its argv, then its
/// allocator (the probes' default, expandable segments, where a record names none).
pub fn nanochat_config(run: &Value) -> NanochatConfig {
    let mut args = nanochat_argv(run);
    args.push(format!(
        "--allocator={}",
        run["allocator"].as_str().unwrap_or("expandable_segments")
    ));
    NanochatConfig::from_args(&args).unwrap()
}

/// The preset of the card a record was measured on: the H200 where its `gpu` says so, else the
/// H100 (the measured files hold only those two).
pub fn card_of(run: &Value) -> &'static str {
    if run["gpu"].as_str().is_some_and(|g| g.contains("H200")) {
        "h200"
    } else {
        "h100"
    }
}

/// Where a replay of a trace's own requests puts each new segment: where the simulation does,
/// where the trace says the driver put it, or at the given addresses (one per segment, in order).
pub enum SegmentsAt<'a> {
    Simulated,
    Traced,
    Given(&'a [u64]),
}

/// The peak bytes a traced run's own requests reserve through vramfit's allocator
/// (`data/traces/NAME-events.json.gz`, either event format: `[action, address, bytes, …]` or
/// `{"a": "segment_alloc" | "alloc" | "free_completed", "addr", "size"}`), each new segment
/// placed as `at` says.
pub fn traced_requests_reserve(name: &str, at: SegmentsAt) -> u64 {
    use estimator::engine::allocator::CachingAllocator;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../data/traces/{name}-events.json.gz"));
    let file = std::fs::File::open(path).unwrap();
    let raw: Value = serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
    let mut a = CachingAllocator::new(estimator::Allocator::Default, None);
    let mut live = std::collections::HashMap::new();
    let mut made = 0;
    for e in raw["events"].as_array().unwrap() {
        let (action, addr, bytes) = if e.is_array() {
            let n = |i: usize| e[i].as_u64().unwrap();
            (e[0].as_str().unwrap(), n(1), n(2))
        } else {
            let action = match e["a"].as_str().unwrap() {
                "segment_alloc" => "s",
                "alloc" => "a",
                "free_completed" => "F",
                _ => "",
            };
            let n = |k: &str| e[k].as_u64().unwrap_or(0);
            (action, n("addr"), n("size"))
        };
        match action {
            "s" => {
                match at {
                    SegmentsAt::Simulated => {}
                    SegmentsAt::Traced => a.next_segment_at(addr),
                    SegmentsAt::Given(addresses) => a.next_segment_at(addresses[made]),
                }
                made += 1;
            }
            "a" => {
                live.insert(addr, a.malloc(bytes).unwrap());
            }
            "F" => {
                if let Some(id) = live.remove(&addr) {
                    a.free(id);
                }
            }
            _ => {}
        }
    }
    a.peak_reserved()
}
