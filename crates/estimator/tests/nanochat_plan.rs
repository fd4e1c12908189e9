//! `plan`: runs/speedrun.sh's stages planned for the cards people have. Every stage fits as
//! planned; each training stage's device batch is the largest that fits with its total batch
//! kept (the next larger batch that keeps it does not fit); each evaluation stage's batch the
//! largest that fits; the script's lines are kept where nothing needs to change.

#![allow(clippy::unwrap_used)]

use estimator::gpu;
use estimator::programs::nanochat::config::{NanochatConfig, Script};
use estimator::programs::nanochat::fits_on_card;
use estimator::programs::nanochat::plan::{plan, Hardware, Plan, StageKind, Why, SPEEDRUN};
use estimator::programs::nanochat::stage::{StageConfig, StageScript};
use estimator::Budget;

fn planned(card: &str, gpus: u32) -> (Plan, Hardware) {
    let hw = Hardware {
        budget: Budget::for_gpu(gpu::find(card).unwrap()),
        gpus,
    };
    (plan(SPEEDRUN, &hw, None, None), hw)
}

/// The flag value a rewritten line gives (`--k=v` or `-k v`).
fn value(line: &str, long: &str, short: Option<&str>) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, w)| {
        w.strip_prefix(&format!("--{long}="))
            .map(str::to_string)
            .or_else(|| (Some(*w) == short).then(|| words[i + 1].to_string()))
    })
}

fn training_config(p: &Plan, kind: StageKind) -> NanochatConfig {
    let base = p
        .stages
        .iter()
        .find(|s| s.kind == StageKind::BaseTrain)
        .unwrap();
    let args: Vec<String> = base
        .rewritten
        .split(" -- ")
        .last()
        .unwrap()
        .split_whitespace()
        .skip_while(|w| !w.starts_with("--"))
        .map(str::to_string)
        .collect();
    assert_eq!(kind, StageKind::BaseTrain);
    NanochatConfig::from_script_args(Script::Base, &args).unwrap()
}

fn check(card: &str, gpus: u32) {
    let (p, hw) = planned(card, gpus);
    assert_eq!(p.stages.len(), 4, "{card}: {:?}", p.stages);
    for s in &p.stages {
        let o = s.planned.as_ref().unwrap();
        assert!(o.fits, "{card} × {gpus}: {:?} does not fit: {o:?}", s.kind);
    }
    // base_train: the largest device batch that fits and keeps the total
    let mut base = training_config(&p, StageKind::BaseTrain);
    base.world_size = gpus;
    base.core_max_tokens = p.core_max_tokens;
    let b = base.device_batch_size;
    let total = base.total_batch_tokens();
    let written = NanochatConfig::from_script_args(
        Script::Base,
        &[
            "--depth=24",
            "--target-param-data-ratio=8",
            "--device-batch-size=16",
        ],
    )
    .unwrap();
    let depth_changed = p.stages[0]
        .changes
        .iter()
        .any(|c| matches!(c.why, Why::SmallerModel { .. }));
    if !depth_changed {
        assert_eq!(
            total,
            written.total_batch_tokens(),
            "{card}: total batch kept"
        );
    }
    let larger =
        (b + 1..=16).find(|&x| total.is_multiple_of(u64::from(x) * 2048 * u64::from(gpus)));
    if let Some(x) = larger {
        let mut c = base.clone();
        c.device_batch_size = x;
        assert!(
            !fits_on_card(&c, &hw.budget),
            "{card}: batch {x} > {b} also fits"
        );
    }
    // the rewritten script carries every stage's rewritten line
    for s in &p.stages {
        assert!(p.script.contains(&s.rewritten), "{card}: {}", s.rewritten);
        if gpus == 1 {
            assert!(s.rewritten.starts_with("python -m "), "{}", s.rewritten);
        } else {
            assert!(
                s.rewritten.contains(&format!("--nproc_per_node={gpus}")),
                "{}",
                s.rewritten
            );
        }
    }
    // an evaluation stage's batch: the largest that fits (one more does not)
    for s in p
        .stages
        .iter()
        .filter(|s| matches!(s.kind, StageKind::BaseEval | StageKind::ChatEval))
    {
        let (long, short) = if s.kind == StageKind::ChatEval {
            ("batch-size", Some("-b"))
        } else {
            ("device-batch-size", None)
        };
        let b: u32 = value(&s.rewritten, long, short)
            .map_or(if s.kind == StageKind::ChatEval { 8 } else { 32 }, |v| {
                v.parse().unwrap()
            });
        let limit = if s.kind == StageKind::ChatEval { 8 } else { 16 };
        assert!(b <= limit);
        if b < limit {
            // the same stage on the planned model with one more in its batch does not fit
            let script = if s.kind == StageKind::ChatEval {
                StageScript::ChatEval
            } else {
                StageScript::BaseEval
            };
            let mut args: Vec<String> = vec![];
            if s.kind == StageKind::ChatEval {
                args.extend(["-i".to_string(), "sft".to_string()]);
            }
            args.push(format!("--{long}={}", b + 1));
            let mut model = base.clone();
            model.device_batch_size = 1;
            let stage = StageConfig::read(script, &model, gpus, &args).unwrap();
            let run = stage.run_on(&hw.budget).unwrap();
            assert!(
                !run.verdict.fits,
                "{card}: {:?} at {} fits too",
                s.kind,
                b + 1
            );
        }
    }
}

#[test]
fn the_speedrun_on_one_rtx_4090_fits_every_stage() {
    check("rtx4090", 1);
    let (p, _) = planned("rtx4090", 1);
    // the 4090 has FP8 matmuls: --fp8 stays
    assert!(p.stages[0].rewritten.contains("--fp8"));
}

#[test]
fn the_speedrun_on_eight_a100_40gb_fits_every_stage() {
    check("a100_40", 8);
    let (p, _) = planned("a100_40", 8);
    // no FP8 on SM 8.0: dropped, said why
    assert!(!p.stages[0].rewritten.contains("--fp8"));
    assert!(p.stages[0]
        .changes
        .iter()
        .any(|c| matches!(c.why, Why::NoFp8 { sm: (8, 0) })));
}

#[test]
fn the_speedrun_on_one_rtx_3060_trains_a_smaller_model_and_says_so() {
    check("rtx3060", 1);
    let (p, _) = planned("rtx3060", 1);
    let depth = p.stages[0].changes.iter().find_map(|c| match c.why {
        Why::SmallerModel { from, to } => Some((from, to)),
        _ => None,
    });
    let (from, to) = depth.expect("d24 does not fit a 12 GB card at any device batch");
    assert_eq!(from, 24);
    assert!(to < 24);
    assert!(p.script.contains("a different, smaller model"));
}

/// On the machine it was written for, every stage fits as written: the script comes back as it is.
#[test]
fn the_speedrun_on_eight_h100_comes_back_unchanged() {
    let (p, _) = planned("h100", 8);
    assert!(
        p.stages.iter().all(|s| s.changes.is_empty()),
        "{:?}",
        p.stages
    );
    assert_eq!(p.script, SPEEDRUN);
}

/// Lines that are not stages are kept; a stage's unknown flag gets its script's own message.
#[test]
fn other_lines_are_kept_and_bad_flags_are_the_scripts_own_errors() {
    let hw = Hardware {
        budget: Budget::for_gpu(gpu::find("rtx4090").unwrap()),
        gpus: 1,
    };
    let script = "echo hello\npython -m nanochat.dataset -n 8\ntorchrun --nproc_per_node=8 -m scripts.base_eval -- --bogus=1\n  # a comment\n";
    let p = plan(script, &hw, None, None);
    assert!(p
        .script
        .starts_with("echo hello\npython -m nanochat.dataset -n 8\n"));
    assert!(p.script.contains("  # a comment"));
    let e = p.stages[0].planned.as_ref().unwrap_err().to_string();
    assert!(
        e.contains("base_eval.py: error: unrecognized arguments: --bogus=1"),
        "{e}"
    );
    let p = plan("python -m scripts.chat_eval -b 8\n", &hw, None, None);
    let e = p.stages[0].planned.as_ref().unwrap_err().to_string();
    assert!(
        e.contains("the following arguments are required: -i/--source"),
        "{e}"
    );
    // the launcher's count read as torchrun reads it, shared with the launch-line reader
    let p = plan(
        "torchrun --nproc_per_node=x -m scripts.base_eval\n",
        &hw,
        None,
        None,
    );
    let e = p.stages[0].planned.as_ref().unwrap_err().to_string();
    assert!(e.contains("nproc_per_node"), "{e}");
    assert_eq!(
        p.script,
        "torchrun --nproc_per_node=x -m scripts.base_eval\n"
    );
    let eight = Hardware {
        gpus: 8,
        ..hw.clone()
    };
    let p = plan(
        "torchrun --nnodes=2 --nproc_per_node=4 -m scripts.base_eval\n",
        &eight,
        None,
        None,
    );
    assert!(
        p.stages[0]
            .changes
            .iter()
            .all(|c| c.flag != "nproc_per_node"),
        "2 nodes × 4 are the 8 GPUs: {:?}",
        p.stages[0].changes
    );
    // a line changed for another reason keeps its launcher as written
    assert!(
        p.stages[0]
            .rewritten
            .starts_with("torchrun --nnodes=2 --nproc_per_node=4 -m scripts.base_eval -- "),
        "{}",
        p.stages[0].rewritten
    );
    let p = plan("python -m scripts.chat_eval -i sft -b x\n", &hw, None, None);
    let e = p.stages[0].planned.as_ref().unwrap_err().to_string();
    assert!(
        e.contains("argument -b/--batch-size: invalid int value: 'x'"),
        "{e}"
    );
}

/// Nothing pasted panics: every prefix of the speedrun, and lines of odd bytes.
#[test]
fn nothing_pasted_panics() {
    let hw = Hardware {
        budget: Budget::for_gpu(gpu::find("rtx3060").unwrap()),
        gpus: 2,
    };
    for end in (0..SPEEDRUN.len())
        .filter(|&i| SPEEDRUN.is_char_boundary(i))
        .step_by(7)
    {
        let _ = plan(&SPEEDRUN[..end], &hw, None, None);
    }
    for odd in [
        "torchrun -m",
        "torchrun -m scripts.base_train -- --depth",
        "python -m scripts.base_train --depth=0",
        "python -m scripts.base_train --device-batch-size=-3",
        "python -m scripts.chat_eval -i sft -b 0",
        "python -m scripts.chat_eval -i sft -b9999999999999",
        "python -m scripts.base_eval --split-tokens=-1 \\",
        "'unterminated \"quote -m scripts.base_eval",
        "X=1 Y=2 torchrun --nproc_per_node 4 -m scripts.chat_sft -- --max-seq-len=1",
        "python -m scripts.chat_rl",
        "python -m scripts.chat_rl --num-samples=3 --device-batch-size=8",
        "python -m scripts.chat_rl --eval-every=0",
        "python -m scripts.chat_rl --examples-per-step=0 --max-new-tokens=99999999999",
        "torchrun --nproc_per_node=3 -m scripts.chat_rl -- --examples-per-step=16",
        "python -m scripts.chat_rl --model=d12",
    ] {
        let _ = plan(odd, &hw, None, None);
    }
}

/// The speedrun with chat_rl.py after SFT, as its docstring launches it, and chat_eval on the RL
/// checkpoint.
fn with_rl() -> String {
    SPEEDRUN.replace(
        "torchrun --standalone --nproc_per_node=8 -m scripts.chat_eval -- -i sft",
        "torchrun --standalone --nproc_per_node=8 -m scripts.chat_rl -- --run=default\n\
         torchrun --standalone --nproc_per_node=8 -m scripts.chat_eval -- -i rl",
    )
}

/// chat_rl.py planned: it fits; its device batch is the largest that fits of those that give
/// each example all 16 completions (the next larger divisor of 16 does not fit); its other flags
/// are kept.
#[test]
fn chat_rl_gets_the_largest_batch_that_keeps_its_samples() {
    for (card, gpus) in [("rtx4090", 1), ("a100_40", 8), ("rtx3060", 1), ("h100", 8)] {
        let hw = Hardware {
            budget: Budget::for_gpu(gpu::find(card).unwrap()),
            gpus,
        };
        let p = plan(&with_rl(), &hw, None, None);
        assert_eq!(p.stages.len(), 5);
        assert!(p.all_fit(), "{card} × {gpus}: {:?}", p.stages);
        let rl = &p.stages[3];
        assert_eq!(rl.kind, StageKind::ChatRl);
        assert!(rl.rewritten.contains("--run=default"), "{}", rl.rewritten);
        let b: u32 =
            value(&rl.rewritten, "device-batch-size", None).map_or(8, |v| v.parse().unwrap());
        assert!(16 % b == 0 && b <= 8, "{card}: {b}");
        // the SFT run the RL stage loads, as planned
        let base = training_config(&p, StageKind::BaseTrain);
        let mut sft = base.clone();
        sft.script = Script::Sft;
        sft.world_size = gpus;
        if let Some(larger) = (b + 1..=8).find(|x| 16 % x == 0) {
            let args = [format!("--device-batch-size={larger}")];
            let stage = StageConfig::read(StageScript::ChatRl, &sft, gpus, &args).unwrap();
            let run = stage.run_on(&hw.budget).unwrap();
            assert!(!run.verdict.fits, "{card}: chat_rl at {larger} fits too");
        }
        if card == "h100" {
            assert!(rl.changes.is_empty(), "{:?}", rl.changes);
        }
    }
}
