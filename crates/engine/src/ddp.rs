//! DistributedDataParallel's gradient buckets, as PyTorch sizes them for any model: the
//! parameters in reverse order, a first bucket closed at 1 MiB (`dist._DEFAULT_FIRST_BUCKET_BYTES`)
//! and the rest at 25 MiB (`bucket_cap_mb`), a bucket closing once it reaches its limit
//! (`_compute_bucket_assignment_by_size`). Each bucket is one flat gradient buffer of the
//! parameters' dtype on every rank (`gradient_as_bucket_view=False`, the default).

/// DDP's first bucket limit: `torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`.
pub const FIRST_BUCKET_BYTES: u128 = 1 << 20;
/// DDP's `bucket_cap_mb` default (25) in bytes.
pub const BUCKET_CAP_BYTES: u128 = 25 << 20;

/// The bytes of each bucket, in the order the Reducer allocates them, for parameters of
/// `bytes` each given last parameter first.
pub fn buckets(reversed: impl IntoIterator<Item = u128>) -> Vec<u128> {
    let mut out = Vec::new();
    let (mut size, mut limit) = (0u128, FIRST_BUCKET_BYTES);
    for p in reversed {
        size += p;
        if size >= limit {
            out.push(size);
            size = 0;
            limit = BUCKET_CAP_BYTES;
        }
    }
    if size > 0 {
        out.push(size);
    }
    out
}
