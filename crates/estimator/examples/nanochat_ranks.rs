//! Each measured multi-GPU nanochat run beside its rank's replayed peaks with 1 to 4 steps'
//! collective tensors held (what the bound chooses among):
//! `cargo run --release -p estimator --example nanochat_ranks -- data/measured/nanochat-ranks.jsonl`

#![allow(clippy::unwrap_used)]
use estimator::engine::events::Phase;
use estimator::programs::nanochat::sequence::{generate_rank, Ranks};
use estimator::programs::nanochat::NanochatConfig;

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let mib = |b: u128| b as f64 / 1048576.0;
    for line in text.lines() {
        let run: serde_json::Value = serde_json::from_str(line).unwrap();
        let mut args: Vec<String> = run["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .filter(|a| !a.starts_with("--num-iterations"))
            .collect();
        args.push(format!("--nproc-per-node={}", run["world_size"]));
        let cfg = NanochatConfig::from_args(&args).unwrap();
        let mb = &run["measured_bytes"];
        let m = |k: &str| mb[k].as_f64().unwrap_or(0.0) / 1048576.0;
        println!(
            "{} rank {} measured iter0 {:.0} steady {:.0} eval {:?}",
            run["name"],
            run["rank"],
            m("peak_allocated_train_iter0"),
            m("peak_allocated_train_steady"),
            mb["peak_eval_each"].as_array().map(|a| a
                .iter()
                .map(|x| (x.as_f64().unwrap() / 1048576.0).round())
                .collect::<Vec<_>>())
        );
        for held in 1..=4 {
            let seq = generate_rank(
                &cfg,
                estimator::gpu::find("h200").unwrap(),
                Ranks {
                    rank: run["rank"].as_u64().unwrap() as u32,
                    held_stashes: held,
                },
            );
            let r = estimator::replay::replay(&seq, cfg.allocator, None);
            println!(
                "   held {held}: iter0 {} steady {} eval0 {:.0} eval_after {:.0}",
                r.phase_peak(Phase::TrainFirstIter).unwrap_or(0),
                r.phase_peak(Phase::TrainSteady).unwrap_or(0),
                mib(r.phase_peak(Phase::Eval).unwrap_or(0)),
                mib(r.phase_peak(Phase::EvalAfterStep).unwrap_or(0)),
            );
        }
    }
}
