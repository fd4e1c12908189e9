//! Development aid: the caching allocator's segments and free blocks at one point of a program's
//! replayed run — at the `N`-th mark whose phase and stage are given (`--at=PHASE/STAGE[/N]`, as
//! `dump_events` prints them, e.g. `--at=TrainFirstIter/optimizer_step`) or before an event
//! (`--at=event:N`, `dump_events`' numbering), uncapped — to lay
//! beside the holes a real allocator trace shows there (which requests a layout can serve without
//! new pages decides what the run reserves). `--allocator=` picks the mode as the program's flag
//! does; every other argument is as for `dump_events`.
//! `cargo run --release -p estimator --example dump_layout -- --program=nanochat --gpu=h200
//!   --at=TrainFirstIter/optimizer_step --depth=16 --device-batch-size=8 --allocator=expandable_segments`

use estimator::engine::allocator::CachingAllocator;
use estimator::engine::events::Action;
use estimator::engine::settings::Allocator;
use estimator::programs::Program;
use estimator::{gpu, Budget};

fn main() {
    let (mut program, mut card, mut flags, mut at) = (
        Program::DEFAULT,
        "h100".to_string(),
        Vec::new(),
        String::new(),
    );
    let mut mode = Allocator::Default;
    for arg in std::env::args().skip(1) {
        if let Some(p) = arg.strip_prefix("--program=") {
            program = Program::parse(p).unwrap_or_else(|| panic!("no program {p}"));
        } else if let Some(g) = arg.strip_prefix("--gpu=") {
            card = g.to_string();
        } else if let Some(a) = arg.strip_prefix("--at=") {
            at = a.to_string();
        } else {
            if arg == "--allocator=expandable_segments" {
                mode = Allocator::ExpandableSegments;
            }
            flags.push(arg);
        }
    }
    let mut want = at.split('/');
    let (phase, stage) = (want.next().unwrap_or(""), want.next().unwrap_or(""));
    let nth: usize = want.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let cfg = program
        .config_from_flags(&flags)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let gpu = gpu::find(&card).unwrap_or_else(|| panic!("no card {card}"));
    let analysis = cfg
        .analyze(&Budget::for_gpu(gpu))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let seq = &analysis.sequence;
    // `--at=event:N`: before the N-th event itself
    let stop = if let Some(n) = at.strip_prefix("event:") {
        n.parse().unwrap_or(seq.events.len())
    } else {
        seq.marks
            .iter()
            .filter(|m| format!("{:?}", m.phase).contains(phase) && m.stage.id() == stage)
            .nth(nth - 1)
            .map_or(seq.events.len(), |m| m.at)
    };
    let mut alloc = CachingAllocator::new(mode, None);
    let mut blocks = Vec::new();
    for e in &seq.events[..stop] {
        let ix = e.tensor as usize;
        if blocks.len() <= ix {
            blocks.resize(ix + 1, None);
        }
        match e.action {
            Action::Alloc => blocks[ix] = alloc.malloc(e.bytes).ok(),
            Action::Free => {
                if let Some(id) = blocks[ix].take() {
                    alloc.free(id);
                }
            }
        }
    }
    const MIB: f64 = (1u64 << 20) as f64;
    println!(
        "event {stop}: allocated {:.1} MiB, reserved {:.1} MiB",
        alloc.allocated() as f64 / MIB,
        alloc.reserved() as f64 / MIB
    );
    let mut holes = Vec::new();
    for s in alloc.layout().iter().filter(|s| !s.small) {
        println!("segment {:#x} {:.1} MiB", s.addr, s.size as f64 / MIB);
        for &(addr, size, used, _) in &s.blocks {
            if !used {
                holes.push(size);
            }
            if size >= 1 << 20 {
                let what = if used { "used" } else { "FREE" };
                println!(
                    "  +{:10.1} {:8.1} {what}",
                    (addr - s.addr) as f64 / MIB,
                    size as f64 / MIB
                );
            }
        }
    }
    holes.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<String> = holes
        .iter()
        .take(20)
        .map(|h| format!("{:.0}", *h as f64 / MIB))
        .collect();
    println!("largest free blocks (MiB): {}", top.join(" "));
}
