//! Development aid: how long generating and replaying one run takes.
use estimator::allocator::Cap;
use estimator::physics::Patches;
use estimator::replay::replay;
use estimator::sequence::generate;
use estimator::{Allocator, TrainConfig};

fn main() {
    for (name, cfg) in [
        ("gpt2 b12 compiled", TrainConfig::default()),
        (
            "gpt2 b8 eager",
            TrainConfig {
                batch_size: 8,
                compile: false,
                ..TrainConfig::default()
            },
        ),
        (
            "gpt2-xl b1 eager",
            TrainConfig {
                n_layer: 48,
                n_head: 25,
                n_embd: 1600,
                batch_size: 1,
                compile: false,
                ..TrainConfig::default()
            },
        ),
        (
            "every field at its maximum",
            TrainConfig {
                n_layer: 1024,
                n_head: 1024,
                n_embd: 131_072,
                block_size: 1_048_576,
                batch_size: 1_048_576,
                gradient_accumulation_steps: 1_000_000,
                eval_iters: 1_000_000,
                vocab_size: 4_194_304,
                ..TrainConfig::default()
            },
        ),
    ] {
        let n = 3;
        let start = std::time::Instant::now();
        let mut events = 0;
        for _ in 0..n {
            let seq = generate(
                &cfg,
                estimator::gpu::find("h100").expect("preset"),
                Patches::default(),
            );
            events = seq.events.len();
            let r = replay(&seq, Allocator::Default, Some(Cap::card(11 << 30)));
            std::hint::black_box(r);
        }
        println!(
            "{name}: {events} events, {:?} per generate+replay",
            start.elapsed() / n
        );
    }
}
