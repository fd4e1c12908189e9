//! `--gpu auto`: the card this machine has, as `nvidia-smi` reports it — its name (matched to a
//! preset, else a custom card of its size), its total memory, and what other processes already
//! use of it.

use std::process::Command;

use estimator::gpu::{self, Budget};

/// One GPU as `nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct SmiGpu {
    pub name: String,
    pub total_mib: u64,
    pub used_mib: u64,
}

/// Reads `nvidia-smi`'s CSV (a header line, then one line per GPU: `NVIDIA GeForce RTX 4090,
/// 24564 MiB, 1234 MiB`).
pub fn parse(csv: &str) -> Result<Vec<SmiGpu>, String> {
    let mib = |s: &str| -> Result<u64, String> {
        let t = s.trim().trim_end_matches("MiB").trim();
        t.parse().map_err(|_| {
            format!(
                "nvidia-smi printed '{}' where a size in MiB belongs",
                s.trim()
            )
        })
    };
    csv.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("name"))
        .map(|l| {
            let cols: Vec<&str> = l.split(',').collect();
            let [name, total, used] = cols.as_slice() else {
                return Err(format!(
                    "nvidia-smi printed a line vramfit cannot read: '{l}'"
                ));
            };
            Ok(SmiGpu {
                name: name.trim().to_string(),
                total_mib: mib(total)?,
                used_mib: mib(used)?,
            })
        })
        .collect()
}

/// The preset of a name as nvidia-smi spells it (`NVIDIA GeForce RTX 4090`, `NVIDIA RTX A6000`,
/// `NVIDIA H100 80GB HBM3`), else the preset of its size.
pub fn preset(g: &SmiGpu) -> Option<&'static gpu::Gpu> {
    let short = g
        .name
        .trim_start_matches("NVIDIA ")
        .trim_start_matches("GeForce ")
        .to_string();
    let first_two: String = short
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    // `NVIDIA GeForce RTX 4060 Laptop GPU`: the laptop part, not the desktop card of that number
    let laptop = short
        .contains("Laptop")
        .then(|| gpu::find(&format!("{first_two} Laptop")))
        .flatten();
    laptop
        .or_else(|| gpu::find(&short))
        .or_else(|| gpu::find(short.trim_start_matches("RTX ")))
        .or_else(|| gpu::find(&first_two))
        .or_else(|| gpu::nearest_by_capacity(u128::from(g.total_mib) << 20))
}

/// The budget for GPU `index` of this machine: its preset (or a custom card of its size) with
/// the memory other processes use as "other".
pub fn budget(index: usize) -> Result<Budget, String> {
    // VRAMFIT_NVIDIA_SMI: another nvidia-smi (the tests' stand-in, which prints a known card)
    let program = std::env::var_os("VRAMFIT_NVIDIA_SMI").unwrap_or_else(|| "nvidia-smi".into());
    let out = Command::new(program)
        .args([
            "--query-gpu=name,memory.total,memory.used",
            "--format=csv",
        ])
        .output()
        .map_err(|e| {
            format!("--gpu auto needs nvidia-smi, which could not be run ({e}): name the card with --gpu")
        })?;
    if !out.status.success() {
        return Err(format!(
            "--gpu auto: nvidia-smi failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let gpus = parse(&String::from_utf8_lossy(&out.stdout))?;
    let g = gpus.get(index).ok_or_else(|| {
        format!(
            "--gpu-index={index}: nvidia-smi lists {} GPU(s) (indices from 0)",
            gpus.len()
        )
    })?;
    let mut b = match preset(g) {
        Some(p) => Budget::for_gpu(p),
        None => {
            let mut card = estimator::query::custom_card();
            card.total_bytes = u128::from(g.total_mib) << 20;
            Budget::for_gpu(&card)
        }
    };
    b.other_bytes = u128::from(g.used_mib) << 20;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nvidia_smi_and_finds_the_presets() {
        let csv = "name, memory.total [MiB], memory.used [MiB]\n\
                   NVIDIA GeForce RTX 4090, 24564 MiB, 1234 MiB\n\
                   NVIDIA RTX A6000, 49140 MiB, 0 MiB\n\
                   NVIDIA H100 80GB HBM3, 81559 MiB, 5 MiB\n\
                   NVIDIA GeForce RTX 4060 Laptop GPU, 8188 MiB, 512 MiB\n\
                   NVIDIA GeForce RTX 3070, 8192 MiB, 300 MiB\n";
        let g = parse(csv).unwrap();
        assert_eq!(g.len(), 5);
        assert_eq!(preset(&g[3]).map(|p| p.id), Some("rtx4060laptop"));
        assert_eq!(preset(&g[4]).map(|p| p.id), Some("rtx3070"));
        assert_eq!(g[0].used_mib, 1234);
        assert_eq!(preset(&g[0]).map(|p| p.id), Some("rtx4090"));
        assert_eq!(preset(&g[1]).map(|p| p.id), Some("a6000"));
        assert_eq!(preset(&g[2]).map(|p| p.id), Some("h100"));
        assert!(parse("name, x\nRTX, lots, 1 MiB").is_err());
    }
}
