//! Development aid: prints nanochat base_train.py's generated allocation sequence, one event per
//! line with what is allocated and reserved after it (`index a|f bytes term allocated reserved
//! tensor`,
//! and `# phase stage micro` marks), to lay beside a real allocator trace's events and mapped
//! bytes (data/traces/nc_tr_*-events.json.gz) and find the first request where the two layouts
//! part. `--gpu=NAME` picks the card (its L2 sizes Inductor's autotuning buffer; default H100);
//! every other argument is base_train.py's, as the CLI takes them.
//! `cargo run --release -p estimator --example dump_nanochat -- --gpu=h200 --depth=16
//! --device-batch-size=8 --max-seq-len=512 --window-pattern=L --allocator=expandable_segments`
//! `--layout-at=N` prints instead the allocator's segments just before event N, each block with
//! its tensor and term (`+offset:MiB@tensor term`), as compare_trace.py's `live` prints a trace's:
//! which blocks keep a segment split when a request finds no room.

use estimator::allocator::CachingAllocator;
use estimator::engine::events::{Action, Sequence};
use estimator::programs::nanochat::{analyze, NanochatConfig};
use estimator::{gpu, Allocator, Budget};

fn main() {
    let mut card = "h100".to_string();
    let mut args = Vec::new();
    let mut layout_at = None;
    for arg in std::env::args().skip(1) {
        if let Some(g) = arg.strip_prefix("--gpu=") {
            card = g.to_string();
        } else if let Some(n) = arg.strip_prefix("--layout-at=") {
            layout_at = Some(n.parse::<usize>().expect("--layout-at=EVENT_INDEX"));
        } else {
            args.push(arg);
        }
    }
    let cfg = NanochatConfig::from_args(&args).unwrap_or_else(|e| panic!("{e:?}"));
    let gpu =
        gpu::find(&card).unwrap_or_else(|| panic!("no card {card} (see vramfit --list-gpus)"));
    let run = analyze(&cfg, &Budget::for_gpu(gpu))
        .unwrap_or_else(|e| panic!("{e:?}"))
        .run;
    if let Some(at) = layout_at {
        print_layout(&run.sequence, cfg.allocator, at);
        return;
    }
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

/// Replays `seq` up to event `at` (not run) and prints the live segments, largest first.
fn print_layout(seq: &Sequence, mode: Allocator, at: usize) {
    let mut alloc = CachingAllocator::new(mode, None);
    let mut blocks = Vec::new();
    let mut owner = std::collections::HashMap::new();
    for e in &seq.events[..at] {
        let ix = e.tensor as usize;
        if blocks.len() <= ix {
            blocks.resize(ix + 1, None);
        }
        match e.action {
            Action::Alloc => {
                let b = alloc.malloc(e.bytes).expect("no cap");
                owner.insert(b, (e.tensor, e.term.id()));
                blocks[ix] = Some(b);
            }
            Action::Free => {
                if let Some(b) = blocks[ix].take() {
                    alloc.free(b);
                }
            }
        }
    }
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let mut segments = alloc.layout();
    segments.sort_by_key(|s| std::cmp::Reverse(s.size));
    for s in segments.iter().filter(|s| !s.small) {
        let held: u64 = s.blocks.iter().filter(|b| b.2).map(|b| b.1).sum();
        print!("{:.0} MiB, {:.2} held:", mib(s.size), mib(held));
        for &(addr, size, allocated, id) in &s.blocks {
            let who = if allocated {
                owner
                    .get(&id)
                    .map_or("?".into(), |(t, term)| format!("@{t} {term}"))
            } else {
                "free".into()
            };
            print!(" +{:.2}:{:.2}{who};", mib(addr - s.addr), mib(size));
        }
        println!();
    }
}
