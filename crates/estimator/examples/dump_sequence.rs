//! Development aid: prints a run's generated allocation sequence, one event per line
//! (`a|f bytes term` and `# phase stage micro` marks), to diff against a real allocator trace.
//! `cargo run --example dump_sequence -- --batch_size=8 --compile=False`

use estimator::configurator::Configurator;
use estimator::physics::Patches;
use estimator::sequence::{generate, Action};

fn main() {
    let mut c = Configurator::new();
    for arg in std::env::args().skip(1) {
        c.apply_override(&arg).expect("a valid --key=value");
    }
    let (cfg, _) = c.finish().expect("a valid config");
    let seq = generate(
        &cfg,
        estimator::gpu::find("h100").expect("preset"),
        Patches::default(),
    );
    let mut marks = seq.marks.iter().peekable();
    for (i, e) in seq.events.iter().enumerate() {
        while let Some(m) = marks.next_if(|m| m.at <= i) {
            println!("# {:?} {} {}", m.phase, m.stage.id(), m.micro_step);
        }
        match e.action {
            Action::Alloc => println!("a {} {} {}", e.tensor, e.bytes, e.term.id()),
            Action::Free => println!("f {}", e.tensor),
        }
    }
}
