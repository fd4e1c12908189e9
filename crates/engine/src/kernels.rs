//! Bytes PyTorch's CUDA kernels ask the caching allocator for, beside their outputs: facts of
//! PyTorch's source and the traces that confirm them, for any program's sequence to use.

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
    const SMS: u128 = 132;
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
