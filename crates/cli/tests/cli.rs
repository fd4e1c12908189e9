//! The `vramfit` binary as a user and the scoring tool call it: the JSON contract, the text
//! report, and one line on stderr with exit code 2 for each class of bad input.

#![allow(clippy::unwrap_used)]

mod common;

use common::{json, run, run_env};
use std::process::Command;

use serde_json::Value;

#[test]
fn json_contract() {
    let v = json(&[
        "--batch_size=8",
        "--compile=False",
        "--gradient_accumulation_steps=2",
    ]);
    assert_eq!(v["params"]["total"], 124_373_760);
    assert_eq!(v["params"]["reported"], 123_587_328);
    let peak = &v["peak_bytes"];
    for k in ["overall", "train_steady", "train_first_iter", "eval"] {
        assert!(peak[k].as_u64().unwrap() > 0, "{k}");
    }
    let overall = peak["overall"].as_u64().unwrap();
    // measured on an H200 (calibration run s_b8): 10,030,128,640 bytes
    let err = (overall as f64 - 10_030_128_640.0).abs() / 10_030_128_640.0;
    assert!(err < 0.005, "{overall}");
    assert_eq!(v["peak_phase"], "train_steady");
    let comps = v["components_bytes"].as_object().unwrap();
    let mut keys: Vec<&str> = comps.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "activations",
            "gradients",
            "logits",
            "optimizer",
            "other",
            "params"
        ]
    );
    let sum: u64 = comps.values().map(|x| x.as_u64().unwrap()).sum();
    assert_eq!(sum, overall, "components sum to the peak");
    for k in ["name", "total_bytes", "usable_bytes"] {
        assert!(!v["gpu"][k].is_null(), "gpu.{k}");
    }
    assert!(v["verdict"]["fits"].is_boolean());
    assert!(["fits", "tight", "oom"].contains(&v["verdict"]["risk"].as_str().unwrap()));
    assert!(v["verdict"]["headroom_bytes"].is_i64());
    assert_eq!(v["effective_batch"], 16);
    assert_eq!(v["tokens_per_iter"], 16384);
}

#[test]
fn vram_gib_with_zero_context_is_the_whole_budget() {
    let v = json(&[
        "--batch_size=4",
        "--compile=False",
        "--vram-gib",
        "11.25",
        "--context-gib=0",
        "--other-gib=0",
    ]);
    assert_eq!(
        v["gpu"]["usable_bytes"],
        (11.25 * (1u64 << 30) as f64) as u64
    );
    assert_eq!(v["verdict"]["fits"], true);
    // batch 16 eager needs 16.5 GiB: out of memory, with the shortfall negative
    let v = json(&[
        "--batch_size=16",
        "--compile=False",
        "--vram-gib=11.25",
        "--context-gib=0",
        "--other-gib=0",
    ]);
    assert_eq!(v["verdict"]["risk"], "oom");
    assert!(v["verdict"]["headroom_bytes"].as_i64().unwrap() < 0);
}

#[test]
fn gpu_presets_change_the_verdict() {
    let small = json(&["--batch_size=16", "--gpu", "rtx3060"]);
    let big = json(&["--batch_size=16", "--gpu=a6000"]);
    assert_eq!(small["verdict"]["fits"], false);
    assert_eq!(big["verdict"]["fits"], true);
    assert_eq!(small["gpu"]["name"], "RTX 3060 12 GB");
}

#[test]
fn config_files_then_overrides_in_order() {
    let dir = std::env::temp_dir().join(format!("vramfit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("train_shakespeare_char.py");
    std::fs::write(
        &f,
        "dataset = 'shakespeare_char'\ngradient_accumulation_steps = 1\nbatch_size = 64\nblock_size = 256 # context\n\
         n_layer = 6\nn_head = 6\nn_embd = 384\ndropout = 0.2\n",
    )
    .unwrap();
    let v = json(&[f.to_str().unwrap(), "--batch_size=32"]);
    assert_eq!(v["config"]["vocab_size"], 65);
    assert_eq!(v["config"]["batch_size"], 32);
    assert_eq!(v["params"]["reported"], 10_646_784);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn plain_output_has_bar_phase_and_verdict() {
    let out = run(&["--batch_size=16", "--gpu", "rtx3060"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "parameters",
        "optimizer state",
        "activations",
        "logits & loss",
        "peak",
        "OUT OF MEMORY on RTX 3060",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

/// Each class of bad input: exit 2, exactly one line on stderr naming the problem, nothing on stdout.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--batch_sise=8"], "unknown config key: batch_sise"),
        (
            &["--batch_size=eight"],
            "batch_size='eight' has the wrong type",
        ),
        (&["--batch_size=0"], "batch_size=0 is out of range"),
        (&["--dropout=1.5"], "dropout=1.5 is out of range"),
        (&["--dtype=fp8"], "use one of bfloat16, float16, float32"),
        (&["--n_embd=770"], "must be divisible by n_head=12"),
        (
            &["/nonexistent/config.py"],
            "cannot read config file /nonexistent/config.py",
        ),
        (&["--gpu", "voodoo"], "unknown GPU 'voodoo'"),
        (&["--vram-gib=-3"], "vram-gib=-3 is out of range"),
        (&["--vram-gib=NaN"], "out of range"),
        (&["--context-gib=lots"], "not a number"),
        (&["--batch_size"], "--key=value"),
        (&["-q"], "unknown option '-q'"),
        (
            &["--lang=fr"],
            "--lang=fr is not one of en, zh-Hans, zh-Hant, ja, de",
        ),
        (&["--lang"], "--lang needs a value"),
    ];
    for (args, needle) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn unreadable_config_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("vramfit-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("junk.py");
    std::fs::write(&bin, [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let out = run(&[bin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"));
    let out = run(&[dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every `--option` a help text names, in order of first mention.
fn options_named(help: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for word in help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        let name = word.trim_end_matches('-');
        if name.starts_with("--") && name.len() > 2 && !seen.iter().any(|s| s == name) {
            seen.push(name.to_string());
        }
    }
    seen
}

/// `--help` in the report's language, naming every option and setting English names.
#[test]
fn help_speaks_the_language_and_names_every_option() {
    let english = run_env(&["--help"], &[("LANG", "C.UTF-8")]);
    assert!(english.status.success());
    let english = String::from_utf8(english.stdout).unwrap();
    assert!(english.starts_with("usage: vramfit"), "{english}");
    let options = options_named(&english);
    assert!(options.len() > 30, "{options:?}");
    for (tag, first_word) in [
        ("de", "Aufruf:"),
        ("ja", "使い方:"),
        ("zh-Hans", "用法:"),
        ("zh-Hant", "用法:"),
    ] {
        let out = run(&["--help", &format!("--lang={tag}")]);
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.starts_with(first_word), "{tag}: {help}");
        assert_eq!(options_named(&help), options, "{tag}: the options named");
    }
    let german = run_env(&["--help"], &[("LANG", "de_DE.UTF-8")]);
    assert!(String::from_utf8_lossy(&german.stdout).starts_with("Aufruf:"));
}

#[test]
fn help_and_gpu_list() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("usage: vramfit"));
    let out = run(&["--list-gpus"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // each card's L2 (a first compiled run's autotuning buffer), and where the figure comes from
    assert!(
        text.lines()
            .any(|l| l.starts_with("h200 ") && l.ends_with("L2  60 MiB (measured)")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("rtx4090 ") && l.ends_with("L2  72 MiB (datasheet)")),
        "{text}"
    );
    for id in [
        "rtx3060",
        "rtx4070",
        "rtx3090",
        "rtx3090ti",
        "rtx4090",
        "a6000",
        "rtx2080ti",
        "rtx4060ti16",
        "rtx4080",
        "t4",
        "v100_16",
        "v100_32",
        "l4",
        "a100_40",
        "a100_80",
        "h100",
    ] {
        assert!(text.contains(id), "{id}");
    }
}

#[test]
fn oom_message_is_read_and_explained() {
    let msg = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/oom-messages/cap12_s_b8.txt");
    let v = json(&[
        "--batch_size=8",
        "--compile=False",
        "--gradient_accumulation_steps=2",
        "--oom-message",
        msg.to_str().unwrap(),
    ]);
    let m = &v["oom"];
    assert_eq!(
        m["tried_to_allocate_bytes"],
        (1.54 * (1u64 << 30) as f64).round() as u64
    );
    assert_eq!(
        m["allowed_bytes"],
        (11.25 * (1u64 << 30) as f64).round() as u64
    );
    assert!(
        m["already_allocated_bytes"].is_null(),
        "a 2.x message has no 'already allocated'"
    );
    assert_eq!(m["other_processes"].as_array().unwrap().len(), 2);
    assert_eq!(v["gpu"]["id"], "h200");
    let d = &v["diagnosis"];
    assert_eq!(d["phase"], "train_steady");
    assert_eq!(d["stage"], "backward");
    assert_eq!(d["tensor"], "loss_grads");
    assert_eq!(d["reproduced"], true);
    assert!(d["explanation"].as_str().unwrap().contains("1.54 GiB"));
    // under the message's cap the run does not fit
    assert_eq!(v["verdict"]["fits"], false);
}

#[test]
fn oom_message_from_stdin_and_unreadable_files() {
    let out = common::run_stdin(
        &[
            "--json",
            "--batch_size=32",
            "--compile=False",
            "--dtype=float16",
            "--attention=manual",
            "--oom-message",
            "-",
        ],
        b"RuntimeError: CUDA out of memory. Tried to allocate 6.14 GiB (GPU 0; 15.78 GiB total capacity; 10.16 GiB already allocated; 4.05 GiB free; 10.53 GiB reserved in total by PyTorch)",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gpu"]["id"], "v100_16");
    assert_eq!(v["diagnosis"]["phase"], "eval");
    assert_eq!(v["diagnosis"]["tensor"], "loss_fp32_copy");
    let bad = run(&["--oom-message", "/nonexistent/oom.txt"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot read the out-of-memory message"));
}

/// `torchrun --nproc_per_node=1 train.py`, as a user types it: DDP on one GPU, what the measured
/// run reserved to the byte (data/measured/ddp1-race.jsonl, `ddp1_s_b16_*`: 21,550,333,952 on an
/// H200 in each of its six runs), and `python train.py` offered back as the fix that saves it.
#[test]
fn one_gpu_under_torchrun() {
    let line = [
        "--gpu=h200",
        "torchrun",
        "--standalone",
        "--nproc_per_node=1",
        "train.py",
        "--batch_size=16",
        "--gradient_accumulation_steps=2",
        "--compile=False",
        "--eval_iters=2",
    ];
    let v = json(&line);
    assert_eq!(v["peak_bytes"]["reserved"], 21_550_333_952u64);
    assert!(v["ddp"].is_null(), "one GPU has no other ranks");
    assert_eq!(v["config"]["torchrun"], true);
    let python = json(&[
        "--gpu=h200",
        "python",
        "train.py",
        "--batch_size=16",
        "--gradient_accumulation_steps=2",
        "--compile=False",
        "--eval_iters=2",
    ]);
    let reserved = |v: &Value| v["peak_bytes"]["reserved"].as_u64().unwrap();
    let fix = v["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "python_not_torchrun")
        .unwrap();
    assert_eq!(
        fix["saving_bytes"].as_u64().unwrap(),
        v["peak_bytes"]["overall"].as_u64().unwrap()
            - python["peak_bytes"]["overall"].as_u64().unwrap()
    );
    assert!(reserved(&v) - reserved(&python) > 500 << 20);
    let text = String::from_utf8(run(&line[..line.len()]).stdout).unwrap();
    assert!(text.contains("one GPU started by torchrun"), "{text}");
    assert!(text.contains("python train.py --batch_size=16"), "{text}");
}

/// `02_opt_multi_gpu_ddp.py` on one GPU, started either way: its main() wraps the model in DDP at
/// world size 1 too (the measured run: data/measured/llms-from-scratch-ch05-speed.jsonl,
/// `spd_ddp1_c1024_b16`, 12,605,980,672 B reserved on an H200; 01_opt_single_gpu.py's twin
/// 12,278,824,960), so `ddp=True`, with 01_opt_single_gpu.py as the fix that saves the buckets.
/// 01 under torchrun is not DDP, and gpt_train.py has none.
#[test]
fn the_ddp_script_on_one_gpu() {
    let run16 = [
        "--gpu=h200",
        "--batch_size=16",
        "--num_epochs=1",
        "--train_tokens=196609",
        "--val_tokens=48000",
        "--eval_freq=5",
    ];
    let with = |launch: &[&str]| json(&[&run16[..], launch].concat());
    let python = with(&[
        "python",
        "ch05/10_llm-training-speed/02_opt_multi_gpu_ddp.py",
    ]);
    let torchrun = with(&["torchrun", "--nproc_per_node=1", "02_opt_multi_gpu_ddp.py"]);
    assert_eq!(python["config"]["ddp"], true);
    assert_eq!(python["peak_bytes"], torchrun["peak_bytes"]);
    let reserved = python["peak_bytes"]["reserved"].as_f64().unwrap();
    assert!(
        (reserved / 12_605_980_672.0 - 1.0).abs() < 0.005,
        "{reserved}"
    );
    let single = with(&["torchrun", "--nproc_per_node=1", "01_opt_single_gpu.py"]);
    assert_eq!(single["config"]["ddp"], false);
    let fix = python["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "single_gpu_script")
        .unwrap();
    assert_eq!(
        fix["saving_bytes"].as_u64().unwrap(),
        python["peak_bytes"]["overall"].as_u64().unwrap()
            - single["peak_bytes"]["overall"].as_u64().unwrap()
    );
    let text = String::from_utf8(
        run(&[&run16[..], &["python", "02_opt_multi_gpu_ddp.py"]].concat()).stdout,
    )
    .unwrap();
    assert!(
        text.contains("02_opt_multi_gpu_ddp.py on one GPU"),
        "{text}"
    );
    assert!(
        text.contains("model     LLMs-from-scratch 02_opt_multi_gpu_ddp.py:"),
        "{text}"
    );
    assert!(
        text.contains("python 01_opt_single_gpu.py  # not 02"),
        "{text}"
    );
    let refused = run(&["--program=llms-from-scratch-ch05", "--ddp=True"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("gpt_train.py has no DDP"));
}

#[test]
fn ddp_per_gpu_memory_and_time() {
    let one = json(&["--batch_size=8", "--gradient_accumulation_steps=8"]);
    assert!(one["ddp"].is_null());
    let two = json(&[
        "--batch_size=8",
        "--gradient_accumulation_steps=8",
        "--nproc_per_node=2",
        "--link-gbps=32",
    ]);
    let d = &two["ddp"];
    assert_eq!(d["world_size"], 2);
    assert_eq!(d["accum_per_rank"], 4);
    // the ranks that only train need more here (their cache holds no eval blocks): theirs is judged
    assert_eq!(d["worst_rank"], 1);
    assert_eq!(d["link_gbps"], 32.0);
    // tokens per iteration are as given: the processes share the micro-steps
    assert_eq!(two["tokens_per_iter"], one["tokens_per_iter"]);
    let buckets = d["bucket_bytes"].as_u64().unwrap();
    assert!(buckets >= 4 * 124_373_760);
    // every GPU holds the whole run plus DDP's buckets; the bar is the run where NCCL released the
    // old bucket before DDP rebuilt them, the ranks' peaks count it held while it does
    let steady = |v: &Value| v["peak_bytes"]["train_steady"].as_u64().unwrap();
    // (the replay's block rounding and the rank's own layout move it by a few MiB)
    let added = steady(&two) - steady(&one);
    assert!(added.abs_diff(buckets) < 32 << 20, "{added}");
    // the rank shown runs no estimate_loss()
    assert!(two["peak_bytes"]["eval"].is_null() && !one["peak_bytes"]["eval"].is_null());
    // rank 0's steady peak without the old bucket, within a few MiB of rank 1's shown
    let without = d["steady_without_rebuild_bytes"].as_u64().unwrap();
    assert!(without.abs_diff(steady(&two)) < 16 << 20, "{without}");
    let rank0 = &d["per_rank"][0];
    let held = rank0["peak_bytes"].as_u64().unwrap() - steady(&one);
    assert!(held.abs_diff(2 * buckets) < 32 << 20, "{held}");
    // what each rank reserves either way; the verdict's need is the judged rank's released one
    for r in d["per_rank"].as_array().unwrap() {
        let released = r["reserved_released_bytes"].as_u64().unwrap();
        assert!(released <= r["reserved_held_bytes"].as_u64().unwrap());
    }
    assert_eq!(
        two["peak_bytes"]["reserved"],
        d["per_rank"][1]["reserved_released_bytes"]
    );
    assert_eq!(two["verdict"]["need_bytes"], two["peak_bytes"]["reserved"]);
    let speedup = d["speedup"].as_f64().unwrap();
    assert!(speedup > 1.5 && speedup <= 2.0, "{speedup}");
    // add_gpus is always listed, with its true memory effect
    let fixes = one["fixes"].as_array().unwrap();
    let add = fixes.iter().find(|f| f["kind"] == "add_gpus").unwrap();
    assert!(add["saving_bytes"].as_i64().unwrap() < 0);
    assert_eq!(add["impact"], "not_a_fix");
    assert!(two["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "shard_optimizer" && f["saving_bytes"].as_i64().unwrap() > 0));
    // train.py's rule, with torchrun's own flag names
    let out = run(&[
        "--nnodes=2",
        "--nproc-per-node=2",
        "--gradient_accumulation_steps=6",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "vramfit: gradient_accumulation_steps=6 must be divisible by world_size=4"
    );
    let out = run(&["--nproc_per_node=65"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn control_characters_in_a_value_stay_on_one_line() {
    let out = run(&["--n_layer=a\nb\rc"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(!err.contains('\r'), "{err:?}");
    assert!(err.contains("a\\nb\\rc"), "{err:?}");
}

#[test]
fn gpu_auto_reads_nvidia_smi() {
    // a stand-in nvidia-smi on PATH: an RTX 4090 with 2 GiB held by a desktop
    let smi = common::stand_in_nvidia_smi("auto", "NVIDIA GeForce RTX 4090, 24564 MiB, 2048 MiB");
    let dir = smi.parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["--json", "--gpu", "auto", "--batch_size=4"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gpu"]["id"], "rtx4090");
    assert_eq!(v["gpu"]["other_bytes"], 2048u64 << 20);
    // the second GPU is not there: named
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["--gpu", "auto", "--gpu-index", "1"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lists 1 GPU"));
    // no nvidia-smi at all: a clear message, exit 2
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["--gpu", "auto"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs nvidia-smi"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The text report in each language: `--lang`, else `LC_ALL` over `LC_MESSAGES` over `LANG`;
/// the JSON the same in every language.
#[test]
fn the_report_speaks_the_chosen_language() {
    let text = |args: &[&str], env: &[(&str, &str)]| {
        let out = run_env(args, env);
        assert!(out.status.success(), "{args:?} {env:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let oom = ["--batch_size=16", "--gpu", "rtx3060"];
    // the peak as the report writes it: two decimals, the language's decimal separator
    let peak = json(&oom)["peak_bytes"]["overall"].as_u64().unwrap() as f64 / (1u64 << 30) as f64;
    let peak = format!("{peak:.2} GiB");
    let ja = text(&[&["--lang", "ja"][..], &oom].concat(), &[]);
    for needle in ["メモリ不足", "パラメータ", &peak, "変更案"] {
        assert!(ja.contains(needle), "missing {needle:?} in\n{ja}");
    }
    let de = text(&oom, &[("LANG", "de_DE.UTF-8")]);
    for needle in [
        "ZU WENIG SPEICHER auf RTX 3060",
        "Aktivierungen",
        &peak.replace('.', ","),
    ] {
        assert!(de.contains(needle), "missing {needle:?} in\n{de}");
    }
    let all = [("LC_ALL", "zh_TW.UTF-8"), ("LANG", "de_DE.UTF-8")];
    assert!(text(&oom, &all).contains("記憶體不足"));
    let c = text(&oom, &[("LANG", "C.UTF-8")]);
    assert!(c.contains("OUT OF MEMORY on RTX 3060"), "{c}");
    let flag_wins = text(&[&["--lang=en"][..], &oom].concat(), &all);
    assert_eq!(flag_wins, c);
    let json_ja = run_env(
        &[&["--json"][..], &oom].concat(),
        &[("LANG", "ja_JP.UTF-8")],
    );
    let json_en = run_env(&[&["--json"][..], &oom].concat(), &[]);
    assert_eq!(json_ja.stdout, json_en.stdout);
    // a refused value is said in the language too
    let bad = run_env(&["--batch_size=0"], &[("LANG", "de_DE.UTF-8")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("außerhalb"));
}

/// Every program's report in every language fills every placeholder, and its fix table's
/// columns line up in terminal cells (a CJK character takes two).
#[test]
fn every_language_fills_and_aligns_every_report() {
    use unicode_width::UnicodeWidthStr;
    let programs: [&[&str]; 3] = [
        &["--batch_size=16", "--gpu", "rtx3060", "--nproc_per_node=2"],
        &["--program=nanochat", "--depth=12", "--gpu", "rtx4090"],
        &["--program=build-nanogpt", "--gpu", "rtx3090"],
    ];
    for lang in ["en", "zh-Hans", "zh-Hant", "ja", "de"] {
        for args in programs {
            let out = run(&[&["--lang", lang][..], args].concat());
            assert!(out.status.success(), "{lang} {args:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                !text.contains('{'),
                "{lang} {args:?}: a placeholder left\n{text}"
            );
            // the new-peak column is right-aligned: it ends at one cell on every row
            let ends: Vec<usize> = text
                .lines()
                .filter(|l| {
                    l.trim_start()
                        .split("  ")
                        .next()
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                .filter_map(|l| {
                    let at = l.find(" GiB").or_else(|| l.find(" MiB"))?;
                    Some(l[..at].width())
                })
                .collect();
            assert!(ends.len() >= 3, "{lang} {args:?}: no fix table\n{text}");
            assert!(
                ends.windows(2).all(|w| w[0] == w[1]),
                "{lang} {args:?}: {ends:?}\n{text}"
            );
        }
    }
}

#[test]
fn piped_text_has_no_colour_codes() {
    let out = run(&["--batch_size=4"]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\x1b'));
}

/// `vramfit run.json`: a JSON config is answered exactly as the same settings given as flags,
/// the command line's later flags still win, and the CLI's own answer can be fed back.
#[test]
fn json_configs_are_read_wherever_a_config_file_is() {
    let dir = std::env::temp_dir().join(format!("vramfit-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let ng = write(
        "ng.json",
        r#"{"batch_size": 8, "compile": false, "dtype": "float16"}"#,
    );
    assert_eq!(
        json(&[&ng, "--gpu", "rtx3060"]),
        json(&[
            "--batch_size=8",
            "--compile=False",
            "--dtype=float16",
            "--gpu",
            "rtx3060"
        ])
    );
    // later flags win, as after a .py config file
    let later = json(&[&ng, "--batch_size=4"]);
    assert_eq!(later["config"]["batch_size"], 4);
    assert_eq!(later["config"]["dtype"], "float16");

    let nc = write(
        "nc.json",
        r#"{"program": "nanochat", "depth": 8, "device_batch_size": 4}"#,
    );
    assert_eq!(
        json(&[&nc, "--gpu", "rtx4090"]),
        json(&[
            "--program=nanochat",
            "--depth=8",
            "--device-batch-size=4",
            "--gpu",
            "rtx4090"
        ])
    );
    let bare = write("bare.json", r#"{"depth": 8}"#);
    assert_eq!(
        json(&["--program=nanochat-sft", &bare])["config"]["depth"],
        8
    );

    // an answer read back is the same question
    let answer = json(&["--program=build-nanogpt", "--B=8", "--T=512"]);
    let fed = write("answer.json", &answer.to_string());
    assert_eq!(json(&[&fed]), answer);

    for (text, says) in [
        ("{oops", "the JSON config could not be read"),
        (
            r#"{"batch_size": [8]}"#,
            "batch_size=[…] has the wrong type",
        ),
        (r#"{"batch_size": 0}"#, "batch_size=0 is out of range"),
        (r#"{"program": "llama"}"#, "program=llama is not allowed"),
        ("[1, 2]", "config=[…] has the wrong type"),
    ] {
        let f = write("bad.json", text);
        let out = run(&[&f]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{text}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = run(&["--program=nanogpt", &nc]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a config for nanochat"));
    std::fs::remove_dir_all(&dir).ok();
}
