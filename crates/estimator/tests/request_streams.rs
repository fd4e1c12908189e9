//! vramfit's own request stream against eight real allocator traces, request by request and by
//! identity (docs/allocation-order.md §7): every request above 1 MiB — the large pool's; the
//! small pool keeps its own segments — in the same order and of the same size, and between each
//! two the same blocks freed (which allocation each free releases, not only its size: two live
//! tensors of one size free differently). Where the streams are equal, the replay reserves what
//! the run did; each trace's prefix that must match is pinned, so a change that breaks the order
//! fails here before it shows in a reserved figure.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use estimator::engine::events::{Action, Sequence};
use estimator::programs::Program;
use estimator::{gpu, Budget};
use serde_json::Value;

/// The large pool's requests: above this the caching allocator serves a request from it.
const SMALL_POOL_MAX: u64 = 1 << 20;

/// One large request and the large blocks freed since the one before (by allocation ordinal).
#[derive(Debug, PartialEq)]
struct Request {
    bytes: u64,
    freed_before: BTreeSet<usize>,
}

/// The trace's requests (a probe's events file: `{"events": [{"a", "addr", "size"}, …]}`).
fn traced(name: &str) -> Vec<Request> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../data/traces/{name}-events.json.gz"));
    let file = std::fs::File::open(path).unwrap();
    let raw: Value = serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
    let mut stream = Stream::default();
    for e in raw["events"].as_array().unwrap() {
        let addr = e["addr"].as_u64().unwrap_or(0);
        match e["a"].as_str().unwrap() {
            "alloc" => stream.alloc(addr, e["size"].as_u64().unwrap()),
            "free_completed" => stream.free(addr),
            _ => {}
        }
    }
    stream.requests
}

/// vramfit's requests for `program` run with `flags` on an H200 (the traces' card).
fn generated(program: &str, flags: &[impl AsRef<str>]) -> Vec<Request> {
    let flags: Vec<String> = flags.iter().map(|f| f.as_ref().to_string()).collect();
    let config = Program::parse(program)
        .unwrap()
        .config_from_flags(&flags)
        .unwrap();
    let analysis = config
        .analyze(&Budget::for_gpu(gpu::find("h200").unwrap()))
        .unwrap();
    requests_of(&analysis.sequence)
}

fn requests_of(seq: &Sequence) -> Vec<Request> {
    let mut stream = Stream::default();
    for e in &seq.events {
        let id = u64::from(e.tensor);
        match e.action {
            Action::Alloc => stream.alloc(id, e.bytes),
            Action::Free => stream.free(id),
        }
    }
    stream.requests
}

/// Large requests in order, each large block known by the ordinal of its allocation.
#[derive(Default)]
struct Stream {
    requests: Vec<Request>,
    ordinal: HashMap<u64, usize>,
    freed: BTreeSet<usize>,
}

impl Stream {
    fn alloc(&mut self, key: u64, bytes: u64) {
        if bytes > SMALL_POOL_MAX {
            self.ordinal.insert(key, self.requests.len());
            self.requests.push(Request {
                bytes,
                freed_before: std::mem::take(&mut self.freed),
            });
        } else {
            self.ordinal.remove(&key);
        }
    }

    fn free(&mut self, key: u64) {
        if let Some(n) = self.ordinal.remove(&key) {
            self.freed.insert(n);
        }
    }
}

/// How many requests from the start are the same in both.
fn matching_prefix(real: &[Request], model: &[Request]) -> usize {
    real.iter().zip(model).take_while(|(r, m)| r == m).count()
}

fn check(trace: &str, program: &str, flags: &[impl AsRef<str>], at_least: usize) {
    let real = traced(trace);
    let model = generated(program, flags);
    let n = matching_prefix(&real, &model);
    eprintln!("{trace}: {n} of the trace's {} large requests", real.len());
    assert!(
        n >= at_least,
        "{trace}: the streams part at request {n} (pinned: {at_least}): real {:?}, vramfit {:?}",
        real.get(n),
        model.get(n)
    );
}

const TRAIN_PY: &str = "nanogpt";

/// train.py's flags as the probes ran it (eager, two micro-steps, no bias, two eval batches),
/// with a run's own.
fn train_py(own: &str) -> Vec<String> {
    "--compile=False --gradient_accumulation_steps=2 --bias=False --eval_iters=2"
        .split_whitespace()
        .chain(own.split_whitespace())
        .map(String::from)
        .collect()
}

/// GPT-2 124M at its 1,024-token context.
const GPT2: &str = "--n_layer=12 --n_head=12 --n_embd=768 --block_size=1024 --vocab_size=50304";

#[test]
fn train_py_streams_equal_their_traces_to_the_end() {
    // every request the traces hold (model load, estimate_loss(), iterations 0-3)
    for (trace, own, at_least) in [
        (
            "l_b4_default",
            "--dtype=bfloat16 --batch_size=4 --n_layer=36 --n_head=20 --n_embd=1280 \
             --block_size=1024 --dropout=0.0 --vocab_size=50304"
                .to_string(),
            14_468,
        ),
        (
            "char_fp32_b64_default",
            "--dtype=float32 --batch_size=64 --n_layer=6 --n_head=6 --n_embd=384 --block_size=256 \
             --dropout=0.2 --vocab_size=65"
                .to_string(),
            1_948,
        ),
        (
            "exp_s_b16_uncapped",
            format!("{GPT2} --dtype=bfloat16 --batch_size=16 --dropout=0.0 --allocator=expandable_segments"),
            4_964,
        ),
        (
            "s_noflash_b4_default",
            format!("{GPT2} --dtype=bfloat16 --batch_size=4 --dropout=0.0 --attention=manual"),
            7_280,
        ),
    ] {
        check(trace, TRAIN_PY, &train_py(&own), at_least);
    }
}

#[test]
fn llms_from_scratch_streams_equal_their_traces_through_training() {
    // up to where vramfit's run evaluates and the traced one trains on (its step 4)
    check(
        "lfs_in_s_L256_b8",
        "llms-from-scratch-ch07",
        &[
            "--CHOOSE_MODEL=gpt2-small (124M)",
            "--batch_size=8",
            "--num_epochs=1",
            "--max_length=256",
            "--entries=1100",
            "--sample_prompt=136",
            "--test_prompt=136",
        ],
        11_913,
    );
    let ch06 = |batch: &str, length: &str, drop: &str| {
        [
            "--CHOOSE_MODEL=gpt2-small (124M)".to_string(),
            format!("--batch_size={batch}"),
            "--num_epochs=1".to_string(),
            format!("--drop_rate={drop}"),
            format!("--max_length={length}"),
            "--train_rows=1045".to_string(),
            "--val_rows=149".to_string(),
        ]
    };
    for (trace, flags, at_least) in [
        ("lfs_cf_s_L1024_b2", ch06("2", "1024", "0.0"), 5_411),
        ("lfs_cf_s_L512_b32_d01", ch06("32", "512", "0.1"), 5_642),
        ("lfs_cf_s_L120_b16", ch06("16", "120", "0.0"), 5_398),
    ] {
        check(trace, "llms-from-scratch-ch06", &flags, at_least);
    }
}
