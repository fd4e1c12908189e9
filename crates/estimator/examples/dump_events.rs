//! Development aid: any program's generated allocation sequence, one event per line
//! (`index a|f bytes term tensor`, and `# phase stage micro` marks), to lay beside a real
//! allocator trace request by request and by identity (which tensor each free releases): the
//! method of docs/allocation-order.md §7. `--program=ID` and `--gpu=NAME` (default H100) pick the
//! program and the card; every other argument is the program's own flag, as the CLI takes them.
//! With `RESERVED=1` each line ends with the bytes reserved after it (the uncapped replay's), to
//! find where the replay maps or cudaMallocs what a trace's segment events do not.
//! `cargo run --release -p estimator --example dump_events -- --program=lfs-ch07 --model=small`

use estimator::engine::events::Action;
use estimator::programs::Program;
use estimator::{gpu, Budget};

fn main() {
    let (mut program, mut card, mut flags) = (Program::DEFAULT, "h100".to_string(), Vec::new());
    for arg in std::env::args().skip(1) {
        if let Some(p) = arg.strip_prefix("--program=") {
            program = Program::parse(p).unwrap_or_else(|| panic!("no program {p}"));
        } else if let Some(g) = arg.strip_prefix("--gpu=") {
            card = g.to_string();
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
    let show_reserved = std::env::var_os("RESERVED").is_some();
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
        println!(
            "{i} {action} {} {} {}{reserved}",
            e.bytes,
            e.term.id(),
            e.tensor
        );
    }
}
