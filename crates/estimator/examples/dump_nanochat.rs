//! Development aid: prints nanochat base_train.py's generated allocation sequence, one event per
//! line with what is allocated and reserved after it (`index a|f bytes term allocated reserved
//! tensor`,
//! and `# phase stage micro` marks), to lay beside a real allocator trace's events and mapped
//! bytes (data/traces/nc_tr_*-events.json.gz) and find the first request where the two layouts
//! part. `--gpu=NAME` picks the card (its L2 sizes Inductor's autotuning buffer; default H100);
//! every other argument is base_train.py's, as the CLI takes them.
//! `cargo run --release -p estimator --example dump_nanochat -- --gpu=h200 --depth=16
//! --device-batch-size=8 --max-seq-len=512 --window-pattern=L --allocator=expandable_segments`

use estimator::engine::events::Action;
use estimator::programs::nanochat::{analyze, NanochatConfig};
use estimator::{gpu, Budget};

fn main() {
    let mut card = "h100".to_string();
    let mut args = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.strip_prefix("--gpu=") {
            Some(g) => card = g.to_string(),
            None => args.push(arg),
        }
    }
    let cfg = NanochatConfig::from_args(&args).unwrap_or_else(|e| panic!("{e:?}"));
    let gpu =
        gpu::find(&card).unwrap_or_else(|| panic!("no card {card} (see vramfit --list-gpus)"));
    let run = analyze(&cfg, &Budget::for_gpu(gpu))
        .unwrap_or_else(|e| panic!("{e:?}"))
        .run;
    let mut marks = run.sequence.marks.iter().peekable();
    for (i, (e, s)) in run
        .sequence
        .events
        .iter()
        .zip(&run.free_run.samples)
        .enumerate()
    {
        while let Some(m) = marks.next_if(|m| m.at <= i) {
            println!("# {:?} {} {}", m.phase, m.stage.id(), m.micro_step);
        }
        let action = match e.action {
            Action::Alloc => "a",
            Action::Free => "f",
        };
        println!(
            "{i} {action} {} {} {} {} {}",
            e.bytes,
            e.term.id(),
            s.allocated,
            s.reserved,
            e.tensor
        );
    }
    eprintln!(
        "peak allocated {}, peak reserved {}",
        run.free_run.peak_allocated, run.free_run.peak_reserved
    );
}
