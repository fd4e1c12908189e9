//! One launch line, one reading: the CLI given a line as words and the page given it as a paste
//! (`paste::interpret`, what the page calls) arrive at the same program and settings, or both
//! refuse it — for every program, with what torchrun and `PYTORCH_ALLOC_CONF` say either way.

#![allow(clippy::unwrap_used)]

mod common;

use estimator::paste::{interpret, Pasted};
use estimator::programs::Program;
use estimator::query::PageState;
use serde_json::Value;

/// Lines people paste, for every program; the first words of each are what a shell would run.
const LINES: &[&str] = &[
    "python train.py config/train_shakespeare_char.py --batch_size=8",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py --batch_size=4 --compile=False",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False python train.py --batch_size=4",
    "torchrun --standalone --nproc_per_node=4 train.py --batch_size=8",
    "python -m scripts.base_train --depth=12 --device-batch-size=16",
    // the page kept expandable segments here while the CLI switched them off (issue 28)
    "PYTORCH_ALLOC_CONF=expandable_segments:False python -m scripts.base_train --depth=12",
    "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=26 --device-batch-size=16",
    "python -m scripts.chat_sft --device-batch-size=4",
    "python train_gpt2.py",
    "PYTORCH_ALLOC_CONF=expandable_segments:True python train_gpt2.py",
    "torchrun --standalone --nproc_per_node=8 train_gpt2.py",
    // the page read this line and ignored --B=8, which the CLI refuses (issue 28)
    "python train_gpt2.py --B=8",
    // DDP on one GPU: by torchrun for train.py, by the script's own name for LLMs-from-scratch's 02
    "torchrun --standalone --nproc_per_node=1 train.py --batch_size=8",
    "python ch05/10_llm-training-speed/02_opt_multi_gpu_ddp.py",
    "torchrun --nproc_per_node=1 02_opt_multi_gpu_ddp.py",
    "torchrun --nproc_per_node=1 01_opt_single_gpu.py",
];

/// The page's settings for the pasted line as the CLI's JSON writes them (`config`), with the
/// program; `None` where the page refuses the line.
fn page_reading(line: &str) -> Option<(Program, Value)> {
    let out = interpret(line, &PageState::default());
    if out.error.is_some() {
        return None;
    }
    assert!(
        matches!(out.pasted, Pasted::CommandLine { .. }),
        "{line}: read as {:?}",
        out.pasted
    );
    let s = out.state;
    // the answer's config, read off the page's settings analysed on the card asked for (an
    // H100: nanochat's compute dtype is the card's)
    let budget = estimator::Budget::for_gpu(estimator::gpu::find("h100").unwrap());
    let analysis = s.configs.of(s.program).analyze(&budget).unwrap();
    let own = vramfit_report::common::value(analysis.answer(None, &budget, 0.35));
    let config = own["config"].clone();
    Some((s.program, config))
}

#[test]
fn the_page_and_the_cli_read_every_launch_line_alike() {
    let mut programs = Vec::new();
    for line in LINES {
        let words = estimator::input::command_line::shell_words(line);
        let mut args = vec!["--json", "--gpu", "h100"];
        args.extend(words.iter().map(String::as_str));
        let out = common::run(&args);
        let page = page_reading(line);
        match out.status.code() {
            Some(0) | Some(1) => {
                let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
                let (program, config) =
                    page.unwrap_or_else(|| panic!("{line}: the CLI reads it, the page refuses it"));
                assert_eq!(cli["config"], config, "{line}");
                // (nanoGPT's answer, the first vramfit gave, names no program)
                assert_eq!(
                    cli["program"].as_str().unwrap_or("nanogpt"),
                    program.id(),
                    "{line}"
                );
                programs.push(program);
            }
            Some(2) => {
                let err = String::from_utf8_lossy(&out.stderr);
                // a run the script itself refuses (its asserts across flags): the page's
                // settings still take it, and say the same
                if !err.contains("nproc") {
                    assert_eq!(
                        page, None,
                        "{line}: the CLI refuses it ({err}), the page reads it"
                    );
                }
            }
            code => panic!("{line}: exit {code:?}"),
        }
    }
    for p in [
        Program::NanoGpt,
        Program::Nanochat,
        Program::NanochatSft,
        Program::BuildNanoGpt,
    ] {
        assert!(programs.contains(&p), "no line of {p:?} was compared");
    }
}
