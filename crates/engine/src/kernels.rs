//! Bytes PyTorch's CUDA kernels ask the caching allocator for, beside their outputs: facts of
//! PyTorch's source and the traces that confirm them, for any program's sequence to use.

/// The SMs the kernels' launch heuristics count (an H100's or H200's, the default card's): only
/// sizes near a heuristic's threshold depend on the card.
const SMS: u128 = 132;

/// The buffer PyTorch's `embedding_backward_cuda_kernel` (ATen/native/cuda/
/// EmbeddingBackwardKernel.cu, 2.11) sums into before scattering into the weight's gradient,
/// for `indices` ids into a `rows`-row table of width `width` (fp32 gradient). It splits the
/// sorted ids into at most `indices / 10 + min(indices, rows)` partial segments of ten rows
/// (`NROWS_PER_THREAD`) and, when the scatter's grid would be wide enough, sums each into a row
/// of an fp32 `(partial segments, width)` buffer. When that grid is under four blocks per SM and
/// the partial segments outnumber it four to one — a vocabulary far smaller than the batch's
/// tokens, shakespeare_char's 65 — it adds them straight into the gradient with atomics and
/// keeps only an int64 index per partial segment. The SM count is taken as the default card's
/// 132; no vocabulary outside 88-680 grid blocks depends on the card (22-170 SMs in the presets).
/// Measured: 23,065,600 B at GPT-2 large B4 T1024 (4,505 × 1,280 × 4; `data/traces/
/// l_b4_default-events.json.gz`), 27,681,792 B at GPT-2 B8 T1024, 13,624 B at shakespeare_char
/// B64 T256 (`traces/s_b8_bf16_eager.json`, `char_b64_bf16_eager.json`).
pub fn embedding_partial_sums_bytes(indices: u128, rows: u128, width: u128) -> u128 {
    const ROWS_PER_PARTIAL: u128 = 10;
    let segments = indices.min(rows);
    let partials = indices / ROWS_PER_PARTIAL + segments;
    let warped = width.div_ceil(32) * 32;
    let block = warped.min(1024);
    let scatter_grid = (segments * warped).div_ceil(block);
    if scatter_grid < 4 * SMS && partials > 4 * scatter_grid {
        8 * partials
    } else {
        4 * width * partials
    }
}

/// The global-memory staging buffer PyTorch's reduction kernel (ATen/native/cuda/Reduce.cuh,
/// `setReduceConfig`, 2.11) takes to sum a contiguous fp32 `(rows, cols)` gradient over its rows —
/// a bias's or a LayerNorm scale's gradient: 0 where one block per output column suffices. Blocks
/// are 32 wide (four columns a thread) and up to 4 high; with at least 256 values a thread left
/// the rows are split over `ctas` blocks — the fewest of ⌈target grid / grid⌉ and ⌈values /
/// 16⌉, at least ⌈values / 256⌉ — which write `4 · cols · ctas · 128` bytes. The target grid is
/// the card's SMs × 16 blocks of 128 threads, the default card's 132 SMs here (only a sum over
/// more than about 22,000 rows can hit it). Measured: 12,582,912 B for 2,048 × 768 and 50,331,648
/// B for 2,048 × 3,072 (data/traces/lfs_in_s_L256_b8-events.json.gz, each with its 24- or 96-byte
/// semaphores, which are the small pool's).
pub fn column_sum_staging_bytes(rows: u128, cols: u128) -> u128 {
    const MAX_THREADS: u128 = 512;
    const TARGET_GRID: u128 = SMS * (2048 / 128);
    let vec: u128 = if cols.is_multiple_of(4) { 4 } else { 1 };
    let per_block = MAX_THREADS / vec;
    // a dimension's share of the block: its largest power of two, at most the block
    let pow2 = |n: u128| match n {
        0 => 1,
        n if n >= per_block => per_block,
        n => 1 << (127 - n.leading_zeros()),
    };
    let (dim0, dim0_pow2) = (cols / vec, pow2(cols / vec));
    let height = pow2(rows).min(per_block / dim0_pow2.clamp(1, 32));
    let width = dim0_pow2.min(per_block / height);
    // the rows are split over the block's warps only when each thread keeps 16 values or more
    if rows < (height * 16).min(256) {
        return 0;
    }
    let values = rows.div_ceil(height);
    let grid = dim0.div_ceil(width);
    if values < 256 || grid > TARGET_GRID {
        return 0;
    }
    let ctas = TARGET_GRID
        .div_ceil(grid)
        .min(values.div_ceil(16))
        .max(values.div_ceil(256));
    if ctas <= 1 {
        return 0;
    }
    4 * cols * ctas * width * vec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_as_the_traces_measure() {
        assert_eq!(column_sum_staging_bytes(2048, 768), 12_582_912);
        assert_eq!(column_sum_staging_bytes(2048, 3072), 50_331_648);
        // a few rows: one block per column, no staging
        assert_eq!(column_sum_staging_bytes(64, 768), 0);
    }

    #[test]
    fn partial_sums_as_the_traces_measure() {
        assert_eq!(embedding_partial_sums_bytes(4096, 50304, 1280), 23_065_600);
        assert_eq!(embedding_partial_sums_bytes(8192, 50304, 768), 27_681_792);
        assert_eq!(embedding_partial_sums_bytes(16384, 65, 384), 13_624);
    }
}
