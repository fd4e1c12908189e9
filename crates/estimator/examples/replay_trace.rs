//! Development aid: replays a configuration through the simulator without a cap and prints the
//! reserved bytes at the end of every stretch, to compare with a real trace's marks.
//! `cargo run --example replay_trace -- --n_embd=576 --dtype=float16 --batch_size=16`

use estimator::allocator::{Cap, CapKind};
use estimator::configurator::Configurator;
use estimator::physics::Patches;
use estimator::replay::replay;
use estimator::sequence::generate;

fn main() {
    let mut c = Configurator::new();
    let mut cap = None;
    for arg in std::env::args().skip(1) {
        if let Some(g) = arg.strip_prefix("--cap=") {
            // as the probes cap: a memory fraction
            cap = g.parse::<f64>().ok().map(|g| Cap {
                bytes: (g * (1u64 << 30) as f64) as u128,
                kind: CapKind::Fraction,
            });
            continue;
        }
        c.apply_override(&arg).expect("a valid --key=value");
    }
    let (cfg, _) = c.finish().expect("a valid config");
    let seq = generate(
        &cfg,
        estimator::gpu::find("h100").expect("preset"),
        Patches::default(),
    );
    let r = replay(&seq, cfg.allocator, cap);
    let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
    for w in seq.marks.windows(2) {
        let end = w[1].at.saturating_sub(1);
        if let Some(s) = r.samples.get(end) {
            println!(
                "{:?} {} {}: allocated {:.3} reserved {:.3}",
                w[0].phase,
                w[0].stage.id(),
                w[0].micro_step,
                gib(s.allocated.into()),
                gib(s.reserved.into())
            );
        }
    }
    println!(
        "peak allocated {:.3} reserved {:.3} oom {:?}",
        gib(r.peak_allocated),
        gib(r.peak_reserved),
        r.oom
    );
    if std::env::var("SEGMENTS").is_ok() {
        segment_growth(&seq, cfg.allocator);
    }
}

/// Prints every request that made the simulated allocator map new memory (SEGMENTS=1).
#[allow(dead_code)]
pub fn segment_growth(seq: &estimator::sequence::Sequence, mode: estimator::Allocator) {
    use estimator::allocator::CachingAllocator;
    use estimator::sequence::Action;
    let mut a = CachingAllocator::new(mode, None);
    let mut ids = std::collections::HashMap::new();
    for (i, e) in seq.events.iter().enumerate() {
        match e.action {
            Action::Alloc => {
                let before = a.reserved();
                if let Ok(id) = a.malloc(e.bytes) {
                    ids.insert(e.tensor, id);
                }
                if a.reserved() > before {
                    let m = seq.mark_at(i).expect("marked");
                    println!(
                        "event {i}: +{} for {} ({}) in {:?} {} {}",
                        a.reserved() - before,
                        e.bytes,
                        e.term.id(),
                        m.phase,
                        m.stage.id(),
                        m.micro_step
                    );
                }
            }
            Action::Free => {
                if let Some(id) = ids.remove(&e.tensor) {
                    a.free(id);
                }
            }
        }
    }
}
