//! The cards people train on, as PyTorch sees them, and how much of each a run may use.

use crate::error::{ConfigError, Problem};
use crate::settings::Dtype;

const GIB: f64 = (1u64 << 30) as f64;

/// A GPU model: what PyTorch reports for it and what the speed model needs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Gpu {
    /// Short id used in URLs and on the command line (`rtx3060`).
    pub id: &'static str,
    pub name: &'static str,
    /// `torch.cuda.get_device_properties(0).total_memory`, in bytes: what an OOM message calls
    /// "total capacity". A 12 GB RTX 3060 reports 11.69 GiB.
    pub total_bytes: u128,
    /// Compute capability (major, minor).
    pub compute_capability: (u8, u8),
    /// Whether bf16 runs natively (Ampere and newer). On older cards train.py still picks bf16
    /// (`is_bf16_supported()` counts emulation) and runs it slowly; float16 is the real choice.
    pub bf16: bool,
    /// Peak dense tensor TFLOP/s with 16-bit inputs (fp32 accumulate); bf16 is 0 where it is emulated.
    pub tflops_bf16: f64,
    pub tflops_fp16: f64,
    /// Peak TFLOP/s of fp32 matmuls as train.py runs them (TF32 tensor cores are allowed:
    /// `torch.backends.cuda.matmul.allow_tf32 = True`), plain fp32 before Ampere.
    pub tflops_fp32: f64,
    /// GPU-to-GPU bandwidth per direction in GB/s (NVLink where the card has it, else PCIe).
    pub link_gbps: f64,
    /// Consumer cards usually also drive a desktop.
    pub consumer: bool,
    /// The L2 cache in bytes (`torch.cuda.get_device_properties().L2_cache_size`, the CUDA
    /// `l2CacheSize`). Inductor's benchmarker allocates a buffer this large to flush the L2
    /// before each timing (`InductorBenchmarker.benchmark_gpu`): on the H100 it is 50 MiB (trace
    /// nanogpt-compiled-bf16_char_T256_B64_ga1: a 50.00 MiB buffer from benchmarking.py's
    /// `benchmark_gpu`), on the H200 60 MiB (the 62,914,560-byte buffers of every cold nanochat
    /// trace taken on one, data/traces/nc_tr_*-events.json.gz). The others are NVIDIA's
    /// datasheet figures, not measured.
    pub l2_cache_bytes: u128,
    /// The streaming multiprocessors (`multi_processor_count`; NVIDIA's datasheets). Inductor
    /// sizes some kernels' work by it: a LayerNorm backward's weight gradient is summed through a
    /// workspace of one row per split of `max(16, min(128, last power of 2 ≤ rows / (8·SMs)))`
    /// rows (`_codegen_mix_order_reduction`, PyTorch 2.11 `codegen/simd.py`).
    pub sm_count: u128,
}

impl Gpu {
    /// Whether this is a card known only by its memory ([`custom_card`]): its compute
    /// capability is a guess.
    pub fn is_custom(&self) -> bool {
        self.id == custom_card().id
    }

    /// Whether cuBLAS gets its large workspace (PyTorch: 32 MiB per handle on sm90).
    pub fn is_hopper(&self) -> bool {
        self.compute_capability == (9, 0)
    }

    /// One cuBLAS workspace as PyTorch sizes it (CublasHandlePool.cpp): 4096·8·1024 bytes on
    /// sm90, else 4096·1024·2 + 16·1024·8.
    pub fn cublas_workspace_bytes(&self) -> u128 {
        if self.is_hopper() {
            4096 * 8 * 1024
        } else {
            4096 * 1024 * 2 + 16 * 1024 * 8
        }
    }

    /// Resident threads an SM holds (`max_threads_per_multi_processor`; CUDA's table of compute
    /// capabilities): 2,048 on sm70, sm80, sm90 and sm100, 1,024 on Turing, 1,536 on the other
    /// consumer architectures (sm86, sm89, sm120). With the 65,536 registers every SM since
    /// Kepler has, it decides when Inductor halves a reduction's block for occupancy.
    pub fn max_threads_per_sm(&self) -> u128 {
        match self.compute_capability {
            (7, 5) => 1024,
            (7..=10, 0) => 2048,
            _ => 1536,
        }
    }

    /// Whether [`Self::l2_cache_bytes`] was measured on the card (the H100's and the H200's), not
    /// read from a datasheet.
    pub fn l2_measured(&self) -> bool {
        matches!(self.id, "h100" | "h200")
    }

    /// Peak TFLOP/s for a dtype on this card.
    pub fn peak_tflops(&self, dtype: Dtype) -> f64 {
        match dtype {
            Dtype::Bfloat16 if self.bf16 => self.tflops_bf16,
            // emulated bf16 runs at roughly fp32 speed
            Dtype::Bfloat16 => self.tflops_fp32,
            Dtype::Float16 => self.tflops_fp16,
            Dtype::Float32 => self.tflops_fp32,
        }
    }

    /// Default CUDA context outside the caching allocator: measured 795 MiB on H200 with
    /// cuBLAS and attention kernels loaded; about 0.45 GiB on a 12 GB consumer card.
    pub fn default_context_bytes(&self) -> u128 {
        if self.is_hopper() {
            795 << 20
        } else {
            (0.45 * GIB) as u128
        }
    }
}

const fn gib_x100(hundredths: u128) -> u128 {
    hundredths * (1 << 30) / 100
}

/// Half-MiB units: L2 caches come in whole and half MiB (the RTX 3060's 3 MiB, the GTX 1660's 1.5).
const fn mib_x2(halves: u128) -> u128 {
    halves * (1 << 20) / 2
}

/// Presets, the cards users bring most first (12 / 24 / 48 GB), then the rest.
///
/// `total_bytes` is PyTorch's `total_memory` on Linux: measured to the byte on H100 and H200,
/// else the "total capacity" of published OOM messages to the hundredth of a GiB (newer drivers
/// reserve up to ~0.2 GiB more). TFLOP/s are NVIDIA's dense figures with fp32 accumulate (half
/// rate on GeForce cards), fp32 meaning TF32 tensor cores from Ampere on, which train.py enables.
/// Links are per direction: PCIe 3/4/5 x16 ≈ 16/32/64 GB/s, NVLink bridge on 3090 / A6000
/// 56 GB/s, A100 300 GB/s, H100 450 GB/s. Sources: shared notes (gpu-presets research); the
/// 6 and 8 GB cards and the laptops each name theirs: "measured" is the total capacity of a
/// published out-of-memory message on that card (Linux), "derived" the same chip and memory on a
/// sibling card. Laptop TFLOP/s are at the highest power limit (low-power models run up to ~40 %
/// slower); the speed model, not the memory, depends on them.
pub const PRESETS: &[Gpu] = &[
    gpu(
        "rtx3060",
        "RTX 3060 12 GB",
        gib_x100(1169),
        (8, 6),
        true,
        25.5,
        25.5,
        12.7,
        32.0,
        true,
        mib_x2(6),
        28,
    ),
    gpu(
        "rtx4070",
        "RTX 4070 12 GB",
        gib_x100(1173),
        (8, 9),
        true,
        58.3,
        58.3,
        29.1,
        32.0,
        true,
        mib_x2(72),
        46,
    ),
    gpu(
        "rtx3090",
        "RTX 3090 24 GB",
        gib_x100(2369),
        (8, 6),
        true,
        71.0,
        71.0,
        35.6,
        56.25,
        true,
        mib_x2(12),
        82,
    ),
    gpu(
        "a6000",
        "RTX A6000 48 GB",
        gib_x100(4754),
        (8, 6),
        true,
        154.8,
        154.8,
        77.4,
        56.25,
        false,
        mib_x2(12),
        84,
    ),
    gpu(
        "rtx3090ti",
        "RTX 3090 Ti 24 GB",
        gib_x100(2365),
        (8, 6),
        true,
        80.0,
        80.0,
        40.0,
        56.25,
        true,
        mib_x2(12),
        84,
    ),
    gpu(
        "rtx4090",
        "RTX 4090 24 GB",
        gib_x100(2365),
        (8, 9),
        true,
        165.2,
        165.2,
        82.6,
        32.0,
        true,
        mib_x2(144),
        128,
    ),
    gpu(
        "rtx3080",
        "RTX 3080 10 GB",
        gib_x100(978),
        (8, 6),
        true,
        59.5,
        59.5,
        29.8,
        32.0,
        true,
        mib_x2(10),
        68,
    ),
    gpu(
        "rtx3080_12",
        "RTX 3080 12 GB",
        gib_x100(1176),
        (8, 6),
        true,
        61.3,
        61.3,
        30.6,
        32.0,
        true,
        mib_x2(12),
        70,
    ),
    gpu(
        "rtx4060ti16",
        "RTX 4060 Ti 16 GB",
        gib_x100(1569),
        (8, 9),
        true,
        44.1,
        44.1,
        22.1,
        16.0,
        true,
        mib_x2(64),
        34,
    ),
    gpu(
        "rtx4070ti",
        "RTX 4070 Ti 12 GB",
        gib_x100(1173),
        (8, 9),
        true,
        80.2,
        80.2,
        40.1,
        32.0,
        true,
        mib_x2(96),
        60,
    ),
    gpu(
        "rtx4070tis",
        "RTX 4070 Ti Super 16 GB",
        gib_x100(1569),
        (8, 9),
        true,
        88.2,
        88.2,
        44.1,
        32.0,
        true,
        mib_x2(96),
        66,
    ),
    gpu(
        "rtx4080",
        "RTX 4080 16 GB",
        gib_x100(1569),
        (8, 9),
        true,
        97.5,
        97.5,
        48.7,
        32.0,
        true,
        mib_x2(128),
        76,
    ),
    gpu(
        "rtx5090",
        "RTX 5090 32 GB",
        gib_x100(3136),
        (12, 0),
        true,
        209.5,
        209.5,
        104.8,
        64.0,
        true,
        mib_x2(192),
        170,
    ),
    gpu(
        "rtx2080ti",
        "RTX 2080 Ti 11 GB",
        gib_x100(1076),
        (7, 5),
        false,
        0.0,
        53.8,
        13.4,
        50.0,
        true,
        mib_x2(10),
        68,
    ),
    // derived: the RTX 3070's GA104 with 8 GB
    gpu(
        "rtx3060ti",
        "RTX 3060 Ti 8 GB",
        gib_x100(778),
        (8, 6),
        true,
        32.4,
        32.4,
        16.2,
        32.0,
        true,
        mib_x2(8),
        38,
    ),
    // measured: github.com/akshitac8/OW-DETR/issues/46 and meta-llama/codellama/issues/82 (7.78)
    gpu(
        "rtx3070",
        "RTX 3070 8 GB",
        gib_x100(778),
        (8, 6),
        true,
        40.6,
        40.6,
        20.3,
        32.0,
        true,
        mib_x2(8),
        46,
    ),
    // derived: the RTX 3070's GA104 with 8 GB
    gpu(
        "rtx3070ti",
        "RTX 3070 Ti 8 GB",
        gib_x100(778),
        (8, 6),
        true,
        43.5,
        43.5,
        21.7,
        32.0,
        true,
        mib_x2(8),
        48,
    ),
    // derived: the 8 GB GA10x cards (RTX 3070: 7.76-7.79)
    gpu(
        "rtx3050",
        "RTX 3050 8 GB",
        gib_x100(778),
        (8, 6),
        true,
        18.2,
        18.2,
        9.1,
        16.0,
        true,
        mib_x2(4),
        20,
    ),
    // measured: github.com/longxiang-ai/TSGS/issues/6 (7.72)
    gpu(
        "rtx4060",
        "RTX 4060 8 GB",
        gib_x100(772),
        (8, 9),
        true,
        30.2,
        30.2,
        15.1,
        16.0,
        true,
        mib_x2(48),
        24,
    ),
    // derived: the RTX 4060's 8 GB Ada
    gpu(
        "rtx4060ti",
        "RTX 4060 Ti 8 GB",
        gib_x100(772),
        (8, 9),
        true,
        44.1,
        44.1,
        22.1,
        16.0,
        true,
        mib_x2(64),
        34,
    ),
    // measured: github.com/facebookresearch/meshrcnn/issues/92 (5.79)
    gpu(
        "rtx2060",
        "RTX 2060 6 GB",
        gib_x100(579),
        (7, 5),
        false,
        0.0,
        25.8,
        6.45,
        16.0,
        true,
        mib_x2(6),
        30,
    ),
    // derived: RTX 2070 Super, github.com/csxmli2016/DFDNet/issues/39 (7.79)
    gpu(
        "rtx2060super",
        "RTX 2060 Super 8 GB",
        gib_x100(779),
        (7, 5),
        false,
        0.0,
        28.7,
        7.18,
        16.0,
        true,
        mib_x2(8),
        34,
    ),
    // derived: RTX 2070 Super, github.com/csxmli2016/DFDNet/issues/39 (7.79)
    gpu(
        "rtx2070",
        "RTX 2070 8 GB",
        gib_x100(779),
        (7, 5),
        false,
        0.0,
        29.9,
        7.46,
        16.0,
        true,
        mib_x2(8),
        36,
    ),
    // derived: RTX 2070 Super, github.com/csxmli2016/DFDNet/issues/39 (7.79)
    gpu(
        "rtx2080",
        "RTX 2080 8 GB",
        gib_x100(779),
        (7, 5),
        false,
        0.0,
        40.3,
        10.07,
        16.0,
        true,
        mib_x2(8),
        46,
    ),
    // measured: github.com/zhou13/lcnn/issues/23 (5.81); no tensor cores
    gpu(
        "gtx1660ti",
        "GTX 1660 Ti 6 GB",
        gib_x100(581),
        (7, 5),
        false,
        0.0,
        5.44,
        5.44,
        16.0,
        true,
        mib_x2(3),
        24,
    ),
    // derived: the GTX 1660 Ti's TU116 with 6 GB; no tensor cores
    gpu(
        "gtx1660",
        "GTX 1660 6 GB",
        gib_x100(581),
        (7, 5),
        false,
        0.0,
        5.03,
        5.03,
        16.0,
        true,
        mib_x2(3),
        22,
    ),
    // measured: github.com/JiehongLin/SAM-6D/issues/13 (5.80)
    gpu(
        "rtx3060laptop",
        "RTX 3060 Laptop 6 GB",
        gib_x100(580),
        (8, 6),
        true,
        26.2,
        26.2,
        13.1,
        32.0,
        true,
        mib_x2(6),
        30,
    ),
    // derived: the RTX 3070's GA104 with 8 GB
    gpu(
        "rtx3070laptop",
        "RTX 3070 Laptop 8 GB",
        gib_x100(778),
        (8, 6),
        true,
        33.2,
        33.2,
        16.6,
        32.0,
        true,
        mib_x2(8),
        40,
    ),
    // derived: RTX A4000 (GA104, 16 GB), github.com/Zeqiang-Lai/Mini-DALLE3/issues/9 (15.73)
    gpu(
        "rtx3080laptop",
        "RTX 3080 Laptop 16 GB",
        gib_x100(1573),
        (8, 6),
        true,
        42.0,
        42.0,
        21.0,
        32.0,
        true,
        mib_x2(8),
        48,
    ),
    // measured: github.com/ESRSchao/EdgeRegNet/issues/2 (7.75)
    gpu(
        "rtx4060laptop",
        "RTX 4060 Laptop 8 GB",
        gib_x100(775),
        (8, 9),
        true,
        29.1,
        29.1,
        14.6,
        16.0,
        true,
        mib_x2(64),
        24,
    ),
    // derived: the RTX 4060 Laptop's 8 GB Ada
    gpu(
        "rtx4070laptop",
        "RTX 4070 Laptop 8 GB",
        gib_x100(775),
        (8, 9),
        true,
        40.1,
        40.1,
        20.0,
        16.0,
        true,
        mib_x2(64),
        36,
    ),
    // derived: RTX 4070 Ti (AD104, 12 GB), github.com/OpenLMLab/LOMO/issues/17 (11.73)
    gpu(
        "rtx4080laptop",
        "RTX 4080 Laptop 12 GB",
        gib_x100(1173),
        (8, 9),
        true,
        67.7,
        67.7,
        33.9,
        32.0,
        true,
        mib_x2(96),
        58,
    ),
    // derived: RTX 4060 Ti 16 GB, github.com/boson-ai/higgs-audio/issues/48 (15.55)
    gpu(
        "rtx4090laptop",
        "RTX 4090 Laptop 16 GB",
        gib_x100(1555),
        (8, 9),
        true,
        79.4,
        79.4,
        39.7,
        32.0,
        true,
        mib_x2(128),
        76,
    ),
    gpu(
        "t4",
        "Tesla T4 16 GB",
        gib_x100(1456),
        (7, 5),
        false,
        0.0,
        65.0,
        8.1,
        16.0,
        false,
        mib_x2(8),
        40,
    ),
    gpu(
        "v100_16",
        "V100 16 GB",
        gib_x100(1578),
        (7, 0),
        false,
        0.0,
        125.0,
        15.7,
        150.0,
        false,
        mib_x2(12),
        80,
    ),
    gpu(
        "v100_32",
        "V100 32 GB",
        gib_x100(3174),
        (7, 0),
        false,
        0.0,
        125.0,
        15.7,
        150.0,
        false,
        mib_x2(12),
        80,
    ),
    gpu(
        "l4",
        "L4 24 GB",
        gib_x100(2200),
        (8, 9),
        true,
        121.0,
        121.0,
        60.0,
        32.0,
        false,
        mib_x2(96),
        58,
    ),
    gpu(
        "a10",
        "A10 24 GB",
        gib_x100(2200),
        (8, 6),
        true,
        125.0,
        125.0,
        62.5,
        32.0,
        false,
        mib_x2(12),
        72,
    ),
    gpu(
        "rtx6000ada",
        "RTX 6000 Ada 48 GB",
        gib_x100(4750),
        (8, 9),
        true,
        364.2,
        364.2,
        182.1,
        32.0,
        false,
        mib_x2(192),
        142,
    ),
    gpu(
        "a100_40",
        "A100 40 GB",
        gib_x100(3939),
        (8, 0),
        true,
        312.0,
        312.0,
        156.0,
        300.0,
        false,
        mib_x2(80),
        108,
    ),
    gpu(
        "a100_80",
        "A100 80 GB",
        gib_x100(7925),
        (8, 0),
        true,
        312.0,
        312.0,
        156.0,
        300.0,
        false,
        mib_x2(80),
        108,
    ),
    gpu(
        "h100",
        "H100 80 GB",
        85_017_493_504,
        (9, 0),
        true,
        989.4,
        989.4,
        494.7,
        450.0,
        false,
        mib_x2(100),
        132,
    ),
    gpu(
        "h200",
        "H200 141 GB",
        150_109_880_320,
        (9, 0),
        true,
        989.4,
        989.4,
        494.7,
        450.0,
        false,
        mib_x2(120),
        132,
    ),
];

#[allow(clippy::too_many_arguments)]
const fn gpu(
    id: &'static str,
    name: &'static str,
    total_bytes: u128,
    cc: (u8, u8),
    bf16: bool,
    tflops_bf16: f64,
    tflops_fp16: f64,
    tflops_fp32: f64,
    link_gbps: f64,
    consumer: bool,
    l2_cache_bytes: u128,
    sm_count: u128,
) -> Gpu {
    Gpu {
        id,
        name,
        total_bytes,
        compute_capability: cc,
        bf16,
        tflops_bf16,
        tflops_fp16,
        tflops_fp32,
        link_gbps,
        consumer,
        l2_cache_bytes,
        sm_count,
    }
}

/// Finds a preset by id, or by a loose spelling of its name (`3060`, `RTX 4090`, `a100-80`).
pub fn find(name: &str) -> Option<&'static Gpu> {
    let norm = |s: &str| {
        s.to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
    };
    let n = norm(name);
    if n.is_empty() {
        return None;
    }
    PRESETS
        .iter()
        .find(|g| norm(g.id) == n || norm(g.name) == n)
        .or_else(|| {
            PRESETS.iter().find(|g| {
                norm(g.id) == format!("rtx{n}") || norm(g.id).trim_start_matches("rtx") == n
            })
        })
}

/// The preset whose total memory is nearest to a reported "total capacity", if any is within
/// 1.5 % (else the card is treated as custom).
pub fn nearest_by_capacity(total_bytes: u128) -> Option<&'static Gpu> {
    PRESETS
        .iter()
        .map(|g| (g, g.total_bytes.abs_diff(total_bytes)))
        .filter(|(g, d)| (*d as f64) <= 0.015 * g.total_bytes as f64)
        .min_by_key(|(_, d)| *d)
        .map(|(g, _)| g)
}

/// The smallest and largest card memory vramfit takes (a custom card, a cap), in GiB.
pub const MIN_CARD_GIB: f64 = 0.25;
pub const MAX_CARD_GIB: f64 = 4096.0;
/// [`MIN_CARD_GIB`] in bytes.
pub const MIN_CARD_BYTES: u128 = 1 << 28;

/// The card a run is checked against, with what else takes memory from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub gpu: Gpu,
    /// CUDA context, cuBLAS/attention kernels: outside the allocator.
    pub context_bytes: u128,
    /// Other processes on the card: a desktop, a notebook kernel, another run.
    pub other_bytes: u128,
    /// A cap on the allocator (`torch.cuda.set_per_process_memory_fraction`, an OOM message's
    /// "X allowed").
    pub cap_bytes: Option<u128>,
}

/// NCCL's memory on each rank of a multi-GPU run, outside the caching allocator (its
/// communicators' channels and buffers, made as the collectives are first used): measured on
/// four H200s with NCCL 2.28.3 (NVLS off), nanochat's base_train.py, device memory in use minus
/// the allocator's reserve: 1,612-1,618 MiB at the end of every rank's run against 776-795 MiB
/// on one GPU (data/measured/nanochat-ranks.jsonl); two GPUs held less (1,126-1,418 MiB).
pub const NCCL_RANK_BYTES: u128 = 823 << 20;

impl Budget {
    /// The budget of one rank among `world` processes: NCCL's memory joins the context.
    pub fn for_ranks(mut self, world: u32) -> Budget {
        if world > 1 {
            self.context_bytes += NCCL_RANK_BYTES;
        }
        self
    }

    /// A preset with its default context and nothing else on the card.
    pub fn for_gpu(gpu: &Gpu) -> Budget {
        Budget {
            gpu: gpu.clone(),
            context_bytes: gpu.default_context_bytes(),
            other_bytes: 0,
            cap_bytes: None,
        }
    }

    /// What the caching allocator may reserve: total − context − other processes, and no
    /// more than the cap.
    pub fn allocator_budget(&self) -> u128 {
        let free = self
            .gpu
            .total_bytes
            .saturating_sub(self.context_bytes)
            .saturating_sub(self.other_bytes);
        self.cap_bytes.map_or(free, |c| c.min(free))
    }

    /// [`Budget::allocator_budget`] with what imposes it: the fraction where it binds (PyTorch
    /// then checks each request whole against it), else the card's memory.
    pub fn allocator_cap(&self) -> crate::allocator::Cap {
        let bytes = self.allocator_budget();
        let kind = match self.cap_bytes {
            Some(c) if c == bytes => crate::allocator::CapKind::Fraction,
            _ => crate::allocator::CapKind::Card,
        };
        crate::allocator::Cap { bytes, kind }
    }

    /// Sets the card's memory from a GiB figure (a custom card, or `--vram-gib`).
    /// The one rule from the card a user names to its budget, for every door (the page's URL,
    /// the CLI's options, the npm package's card object): a preset, with its memory replaced where
    /// `vram_gib` is given; no preset, a [`custom_card`] of `vram_gib`; neither, the
    /// [`default_cli_gpu`].
    pub fn for_card(preset: Option<&Gpu>, vram_gib: Option<f64>) -> Result<Budget, ConfigError> {
        let budget = match (preset, vram_gib) {
            (Some(g), _) => Budget::for_gpu(g),
            (None, Some(_)) => Budget::for_gpu(&custom_card()),
            (None, None) => Budget::for_gpu(default_cli_gpu()),
        };
        match vram_gib {
            Some(x) => budget.with_total_gib(x),
            None => Ok(budget),
        }
    }

    pub fn with_total_gib(mut self, gib: f64) -> Result<Budget, ConfigError> {
        self.gpu.total_bytes = gib_to_bytes("vram-gib", gib, MIN_CARD_GIB, MAX_CARD_GIB)?;
        Ok(self)
    }

    pub fn with_context_gib(mut self, gib: f64) -> Result<Budget, ConfigError> {
        self.context_bytes = gib_to_bytes("context-gib", gib, 0.0, 64.0)?;
        Ok(self)
    }

    pub fn with_other_gib(mut self, gib: f64) -> Result<Budget, ConfigError> {
        self.other_bytes = gib_to_bytes("other-gib", gib, 0.0, 4096.0)?;
        Ok(self)
    }
}

/// A GiB figure from a user, checked: finite and within `[min, max]`.
pub fn gib_to_bytes(key: &str, gib: f64, min: f64, max: f64) -> Result<u128, ConfigError> {
    if !gib.is_finite() || gib < min || gib > max {
        return Err(ConfigError::new(
            key,
            crate::decimal::compact(gib),
            Problem::OutOfRange {
                min: crate::decimal::shortest(min),
                max: crate::decimal::shortest(max),
            },
        ));
    }
    Ok((gib * GIB).round() as u128)
}

/// The memory a custom card has until one is given (the page's starting value).
pub const DEFAULT_CUSTOM_GIB: f64 = 16.0;

/// A card known only by its memory (typed in, or read from a message or from nvidia-smi):
/// Ampere-like otherwise — a consumer card's CUDA context and cuBLAS workspace — as most cards
/// that are not presets are.
pub fn custom_card() -> Gpu {
    Gpu {
        id: "custom",
        name: "custom card",
        total_bytes: (DEFAULT_CUSTOM_GIB * GIB) as u128,
        compute_capability: (8, 6),
        bf16: true,
        tflops_bf16: 100.0,
        tflops_fp16: 100.0,
        tflops_fp32: 50.0,
        link_gbps: 32.0,
        consumer: true,
        // an H100's: what every card not in the presets was given before these were fields
        l2_cache_bytes: mib_x2(100),
        sm_count: 132,
    }
}

/// The card used when none is named: the kind the calibration runs were measured on. (Only the
/// cuBLAS workspace size of a run depends on the card: 32 MiB per handle on Hopper.)
pub fn default_cli_gpu() -> &'static Gpu {
    find("h100").unwrap_or(&PRESETS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_presets_loosely() {
        assert_eq!(find("rtx3060").map(|g| g.id), Some("rtx3060"));
        assert_eq!(find("3060").map(|g| g.id), Some("rtx3060"));
        assert_eq!(find("RTX 4090").map(|g| g.id), Some("rtx4090"));
        assert_eq!(find("A100_80").map(|g| g.id), Some("a100_80"));
        assert_eq!(find("h100").map(|g| g.id), Some("h100"));
        assert!(find("").is_none());
        assert!(find("voodoo2").is_none());
    }

    /// The two L2 sizes measured: the autotuning flush buffer of cold compiled runs, 50 MiB on an
    /// H100 (nanogpt-compiled traces) and 60 MiB on an H200 (nc_tr_* traces).
    #[test]
    fn measured_l2_sizes() {
        let l2 = |id| find(id).map(|g| g.l2_cache_bytes);
        assert_eq!(l2("h100"), Some(52_428_800));
        assert_eq!(l2("h200"), Some(62_914_560));
    }

    #[test]
    fn ids_are_unique() {
        for (i, g) in PRESETS.iter().enumerate() {
            assert!(PRESETS[i + 1..].iter().all(|h| h.id != g.id), "{}", g.id);
        }
    }

    #[test]
    fn budget_subtracts_context_and_others() {
        let b = Budget::for_gpu(find("rtx3060").unwrap())
            .with_context_gib(0.44)
            .unwrap()
            .with_other_gib(0.0)
            .unwrap();
        let expected = 11.25 * GIB;
        assert!((b.allocator_budget() as f64 - expected).abs() < 2.0);
        assert!(Budget::for_gpu(&PRESETS[0])
            .with_other_gib(f64::NAN)
            .is_err());
        assert!(Budget::for_gpu(&PRESETS[0]).with_total_gib(-1.0).is_err());
    }

    #[test]
    fn nearest_card_by_capacity() {
        assert_eq!(
            nearest_by_capacity(gib_x100(1169)).map(|g| g.id),
            Some("rtx3060")
        );
        assert_eq!(
            nearest_by_capacity(150_109_880_320).map(|g| g.id),
            Some("h200")
        );
        assert!(nearest_by_capacity(gib_x100(500)).is_none());
    }
}
