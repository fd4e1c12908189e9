//! DistributedDataParallel's gradient buckets, as PyTorch sizes them for any model: the
//! parameters in reverse order, a first bucket closed at 1 MiB (`dist._DEFAULT_FIRST_BUCKET_BYTES`)
//! and the rest at 25 MiB (`bucket_cap_mb`), a bucket closing once it reaches its limit
//! (`_compute_bucket_assignment_by_size`). Each bucket is one flat gradient buffer of the
//! parameters' dtype on every rank (`gradient_as_bucket_view=False`, the default).

/// DDP's first bucket limit: `torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`.
pub const FIRST_BUCKET_BYTES: u128 = 1 << 20;
/// DDP's `bucket_cap_mb` default (25) in bytes.
pub const BUCKET_CAP_BYTES: u128 = 25 << 20;

/// `DDP(model)`'s broadcast of the module's state from rank 0 (`_sync_module_states`, every
/// rank, one GPU too): the parameters and then the buffers, flattened into chunks closed once
/// they reach 250 MiB (`broadcast_bucket_size`), at most two in flight (`broadcast_coalesced`).
/// Trace `ddp1_s_b16_ev` (GPT-2 124M): chunks of 270,950,400 B (wte, wpe, blocks 0-3) and
/// 226,544,640 B, the first freed after the second is made.
pub const BROADCAST_CHUNK_BYTES: u128 = 250 << 20;

/// The bytes of each bucket, in the order the Reducer allocates them, for parameters of
/// `bytes` each given last parameter first.
pub fn buckets(reversed: impl IntoIterator<Item = u128>) -> Vec<u128> {
    assign_by_size(reversed, FIRST_BUCKET_BYTES, BUCKET_CAP_BYTES)
}

/// The flat chunks `DDP(model)` broadcasts the module's state in, for tensors of `bytes` each
/// in the module's order ([`BROADCAST_CHUNK_BYTES`]).
pub fn broadcast_chunks(states: impl IntoIterator<Item = u128>) -> Vec<u128> {
    assign_by_size(states, BROADCAST_CHUNK_BYTES, BROADCAST_CHUNK_BYTES)
}

/// `compute_bucket_assignment_by_size` for one dtype: tensors in order, a bucket closing once
/// it reaches its limit (`first` for the first bucket, then `limit`).
fn assign_by_size(sizes: impl IntoIterator<Item = u128>, first: u128, limit: u128) -> Vec<u128> {
    let mut out = Vec::new();
    let (mut size, mut cap) = (0u128, first);
    for p in sizes {
        size += p;
        if size >= cap {
            out.push(size);
            size = 0;
            cap = limit;
        }
    }
    if size > 0 {
        out.push(size);
    }
    out
}
