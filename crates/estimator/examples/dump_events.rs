//! Development aid: any program's generated allocation sequence, one event per line
//! (`index a|f bytes term tensor`, and `# phase stage micro` marks), to lay beside a real
//! allocator trace request by request and by identity (which tensor each free releases): the
//! method of docs/allocation-order.md §7. `--program=ID` and `--gpu=NAME` (default H100) pick the
//! program and the card; every other argument is the program's own flag, as the CLI takes them.
//! With `RESERVED=1` each line ends with the bytes reserved after it (the uncapped replay's), to
//! find where the replay maps or cudaMallocs what a trace's segment events do not.
//! With `--layout-at=PHASE/STAGE[/N]` (the `N`-th mark of that phase and stage, as the marks are
//! printed, e.g. `TrainFirstIter/optimizer_step`) or `--layout-at=event:N` (before event `N`) it
//! prints instead the replayed allocator's segments and free blocks there, uncapped, in the mode
//! the run was replayed in (the program's allocator setting): which requests a layout serves
//! without new memory decides what a run reserves (allocation-order.md §12).
//! `cargo run --release -p estimator --example dump_events -- --program=lfs-ch07 --model=small`

use estimator::engine::allocator::{BlockId, CachingAllocator};
use estimator::engine::events::{Action, Event, Sequence};
use estimator::engine::settings::Allocator;
use estimator::engine::terms::Term;
use estimator::programs::Program;
use estimator::{gpu, Budget};

fn main() {
    let (mut program, mut card, mut flags) = (Program::DEFAULT, "h100".to_string(), Vec::new());
    let mut layout_at = None;
    for arg in std::env::args().skip(1) {
        if let Some(p) = arg.strip_prefix("--program=") {
            program = Program::parse(p).unwrap_or_else(|| panic!("no program {p}"));
        } else if let Some(g) = arg.strip_prefix("--gpu=") {
            card = g.to_string();
        } else if let Some(a) = arg.strip_prefix("--layout-at=") {
            layout_at = Some(a.to_string());
        } else {
            flags.push(arg);
        }
    }
    let cfg = program
        .config_from_flags(&flags)
        .unwrap_or_else(|e| panic!("{e:?}"));
    let gpu = gpu::find(&card).unwrap_or_else(|| panic!("no card {card}"));
    let analysis = cfg
        .analyze(&Budget::for_gpu(gpu))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let seq = &analysis.sequence;
    if let Some(at) = layout_at {
        print_layout(seq, analysis.allocator, &at);
        return;
    }
    let show_reserved = std::env::var_os("RESERVED").is_some();
    // ADDR=1: each allocation's address as the uncapped replay places it (its offset from the
    // lowest segment's start), to follow a block against a trace's addresses
    let mut placed = std::env::var_os("ADDR").map(|_| Placer::new(analysis.allocator));
    let mut marks = seq.marks.iter().peekable();
    for (i, e) in seq.events.iter().enumerate() {
        while let Some(m) = marks.next_if(|m| m.at <= i) {
            println!("# {:?} {} {}", m.phase, m.stage.id(), m.micro_step);
        }
        let action = match e.action {
            Action::Alloc => "a",
            Action::Free => "f",
        };
        let reserved = if show_reserved {
            format!(" {}", analysis.free_run.samples[i].reserved)
        } else {
            String::new()
        };
        let mut addr = String::new();
        if let Some(a) = placed
            .as_mut()
            .and_then(|p| p.apply(e))
            .and_then(|(p, id)| p.alloc.block_addr(id))
        {
            addr = format!(" @{a}");
        }
        println!(
            "{i} {action} {} {} {}{reserved}{addr}",
            e.bytes,
            e.term.id(),
            e.tensor
        );
    }
}

/// Replays `seq` up to `at` and prints the large pool's segments, their blocks of 1 MiB and
/// more, and the largest free blocks.
fn print_layout(seq: &Sequence, mode: Allocator, at: &str) {
    let stop = if let Some(n) = at.strip_prefix("event:") {
        n.parse().unwrap_or(seq.events.len())
    } else {
        let mut want = at.split('/');
        let (phase, stage) = (want.next().unwrap_or(""), want.next().unwrap_or(""));
        let nth: usize = want.next().and_then(|n| n.parse().ok()).unwrap_or(1);
        seq.marks
            .iter()
            .filter(|m| format!("{:?}", m.phase).contains(phase) && m.stage.id() == stage)
            .nth(nth.saturating_sub(1))
            .map_or(seq.events.len(), |m| m.at)
    };
    let mut placer = Placer::new(mode);
    for e in &seq.events[..stop.min(seq.events.len())] {
        placer.apply(e);
    }
    // which live tensor (its index and term) each used block holds
    let owner: std::collections::HashMap<BlockId, (usize, Term)> = placer
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(ix, b)| b.map(|id| (id, (ix, placer.terms[ix]))))
        .collect();
    let alloc = &placer.alloc;
    const MIB: f64 = (1u64 << 20) as f64;
    let mib = |b: u64| b as f64 / MIB;
    println!(
        "event {stop}: allocated {:.1} MiB, reserved {:.1} MiB",
        mib(alloc.allocated()),
        mib(alloc.reserved())
    );
    let mut holes = Vec::new();
    for s in alloc.layout().iter().filter(|s| !s.small) {
        println!("segment {:#x} {:.1} MiB", s.addr, mib(s.size));
        for &(addr, size, used, id) in &s.blocks {
            if !used {
                holes.push(size);
            }
            if size >= 1 << 20 {
                let what = match owner.get(&id) {
                    Some((ix, term)) if used => format!("used #{ix} {term:?}"),
                    _ if used => "used".to_string(),
                    _ => "FREE".to_string(),
                };
                println!("  +{:10.1} {:8.1} {what}", mib(addr - s.addr), mib(size));
            }
        }
    }
    holes.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<String> = holes
        .iter()
        .take(20)
        .map(|&h| format!("{:.0}", mib(h)))
        .collect();
    println!("largest free blocks (MiB): {}", top.join(" "));
}

/// The uncapped allocator replaying a sequence event by event, with each live tensor's block.
struct Placer {
    alloc: CachingAllocator,
    blocks: Vec<Option<BlockId>>,
    terms: Vec<Term>,
}

impl Placer {
    fn new(mode: Allocator) -> Self {
        Placer {
            alloc: CachingAllocator::new(mode, None),
            blocks: Vec::new(),
            terms: Vec::new(),
        }
    }

    /// Replays `e`; for an allocation, the block it got.
    fn apply(&mut self, e: &Event) -> Option<(&Self, BlockId)> {
        let ix = e.tensor as usize;
        if self.blocks.len() <= ix {
            self.blocks.resize(ix + 1, None);
            self.terms.resize(ix + 1, Term::Params);
        }
        match e.action {
            Action::Alloc => {
                self.blocks[ix] = self.alloc.malloc(e.bytes).ok();
                self.terms[ix] = e.term;
                self.blocks[ix].map(|id| (&*self, id))
            }
            Action::Free => {
                if let Some(id) = self.blocks[ix].take() {
                    self.alloc.free(id);
                }
                None
            }
        }
    }
}
