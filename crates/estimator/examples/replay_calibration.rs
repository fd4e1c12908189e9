//! Development aid: the sequence replay against every measured run (peaks per phase, and the
//! capped runs' fit), next to the closed form. `cargo run --release --example replay_calibration`

use std::path::PathBuf;

use estimator::allocator::{Cap, CapKind};
use estimator::configurator::Configurator;
use estimator::physics::Patches;
use estimator::replay::replay;
use estimator::sequence::generate;
use estimator::{estimate, gpu, Phase};

fn main() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/measured/calibration.jsonl");
    let text = std::fs::read_to_string(path).expect("calibration data");
    let card = gpu::find("h100").expect("preset");
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let name = field(line, "\"name\": \"");
        let cfg_text = &line[line.find("\"config\": {").unwrap_or(0) + 11..];
        let cfg_text = &cfg_text[..cfg_text.find('}').unwrap_or(0)];
        let mut c = Configurator::new();
        for kv in cfg_text.split(", ") {
            let Some((k, v)) = kv.split_once(": ") else {
                continue;
            };
            let k = k.trim_matches('"');
            let v = v.trim_matches('"');
            let v = match v {
                "true" => "True",
                "false" => "False",
                x => x,
            };
            c.apply_override(&format!("--{k}={v}")).expect("valid");
        }
        let (cfg, _) = c.finish().expect("valid");
        let est = estimate(&cfg, card).expect("valid");
        let seq = generate(&cfg, card, Patches::default());
        // the probes cap with a memory fraction
        let cap = num(line, "\"allocator_cap_gib\": ").map(|g| Cap {
            bytes: (g * (1u64 << 30) as f64) as u128,
            kind: CapKind::Fraction,
        });
        let r = replay(&seq, cfg.allocator, cap);
        let meas = |k: &str| num(line, &format!("\"{k}\": "));
        let mut row = format!("{name:26} ");
        for (p, k) in [
            (Phase::TrainSteady, "peak_allocated_train_steady"),
            (Phase::TrainFirstIter, "peak_allocated_train_iter0"),
            (Phase::Eval, "peak_allocated_eval"),
        ] {
            let m = meas(k).unwrap_or(0.0);
            let sim = r.phase_peak(p).unwrap_or(0) as f64;
            let req = r.phase_requested(p).unwrap_or(0) as f64;
            let cf = est.phase_bytes(p) as f64;
            if m > 0.0 {
                row += &format!(
                    "{}: sim {:+.2}% req {:+.2}% cf {:+.2}% | ",
                    p.id(),
                    (sim - m) / m * 100.0,
                    (req - m) / m * 100.0,
                    (cf - m) / m * 100.0
                );
            }
        }
        let status = field(line, "\"status\": \"");
        row += &format!(
            "status {status} sim {} reserved {:.2} meas_res {:.2}",
            if r.fits() { "ok" } else { "oom" },
            r.peak_reserved as f64 / (1u64 << 30) as f64,
            meas("peak_reserved").unwrap_or(0.0) / (1u64 << 30) as f64
        );
        if std::env::var("MARKS").is_ok() {
            let marks: Vec<String> = reserved_at_marks(&seq, &r)
                .iter()
                .map(|x| format!("{x:.3}"))
                .collect();
            row += &format!(
                "\n    sim reserved at phase ends: {}\n    measured marks: {}",
                marks.join(" "),
                field_marks(line)
            );
        }
        println!("{row}");
    }
}

fn field_marks(line: &str) -> String {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("\"tag\": \"") {
        rest = &rest[i + 8..];
        let tag = &rest[..rest.find('"').unwrap_or(0)];
        let r = num(rest, "\"reserved\": ").unwrap_or(0.0) / (1u64 << 30) as f64;
        out.push(format!("{tag} {r:.3}"));
    }
    out.join(", ")
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.find(key).map_or("", |i| {
        let rest = &line[i + key.len()..];
        &rest[..rest.find('"').unwrap_or(0)]
    })
}

fn num(line: &str, key: &str) -> Option<f64> {
    let i = line.find(key)?;
    let rest = &line[i + key.len()..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// Reserved bytes at the end of each stretch the harness marks (eval, each iteration).
#[allow(dead_code)]
fn reserved_at_marks(
    seq: &estimator::sequence::Sequence,
    r: &estimator::replay::Replay,
) -> Vec<f64> {
    let mut out = Vec::new();
    for w in seq.marks.windows(2) {
        let end = w[1].at.saturating_sub(1);
        if w[0].phase != w[1].phase {
            if let Some(s) = r.samples.get(end) {
                out.push(s.reserved as f64 / (1u64 << 30) as f64);
            }
        }
    }
    out
}
