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

/// A task in the autograd engine's ready queue: its node's sequence number (an
/// AccumulateGrad's is `u64::MAX`, so it runs before any other node) and what it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready<T> {
    pub sequence_nr: u64,
    pub task: T,
}

/// The order the autograd engine runs the tasks one node's outputs made ready, `pushed` in the
/// order it pushed them (the node's `next_edges`: for a compiled graph, its inputs' order). The
/// ready queue is a `std::priority_queue` by sequence number (`CompareNodeTaskTime`), libstdc++'s
/// binary heap, so tasks of one sequence number — the AccumulateGrad of every parameter a piece
/// of a compiled backward returns — come out in the order its `push_heap`/`pop_heap` leave them,
/// not in the pushed order. DDP's Reducer marks each gradient ready as its AccumulateGrad runs,
/// and rebuilds its buckets in that order: the DDP script's ranks logged it for GPT-2 124M
/// (`136, 112, 114, 115, 125, 135, 134, …`), and this order is theirs to the index.
pub fn ready_order<T: Copy>(pushed: &[Ready<T>]) -> Vec<T> {
    // `comp(a, b)`: a runs after b
    let after = |a: &Ready<T>, b: &Ready<T>| a.sequence_nr < b.sequence_nr;
    let mut heap: Vec<Ready<T>> = Vec::with_capacity(pushed.len());
    for &value in pushed {
        // push_heap: sift the new last element up
        heap.push(value);
        let mut hole = heap.len() - 1;
        while hole > 0 && after(&heap[(hole - 1) / 2], &value) {
            heap[hole] = heap[(hole - 1) / 2];
            hole = (hole - 1) / 2;
        }
        heap[hole] = value;
    }
    let mut out = Vec::with_capacity(heap.len());
    while let Some(value) = heap.pop() {
        // pop_heap: the top out, the last element moved into the hole `__adjust_heap` walks down
        let Some(&top) = heap.first() else {
            out.push(value.task);
            break;
        };
        out.push(top.task);
        let len = heap.len();
        let (mut hole, mut child) = (0, 0);
        while child < (len - 1) / 2 {
            child = 2 * (child + 1);
            if after(&heap[child], &heap[child - 1]) {
                child -= 1;
            }
            heap[hole] = heap[child];
            hole = child;
        }
        if len.is_multiple_of(2) && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            heap[hole] = heap[child - 1];
            hole = child - 1;
        }
        while hole > 0 && after(&heap[(hole - 1) / 2], &value) {
            heap[hole] = heap[(hole - 1) / 2];
            hole = (hole - 1) / 2;
        }
        heap[hole] = value;
    }
    out
}

#[cfg(test)]
mod ready_tests {
    use super::*;

    fn grad(task: u32) -> Ready<u32> {
        Ready {
            sequence_nr: u64::MAX,
            task,
        }
    }

    /// GPT-2 124M's top pair of blocks (10 and 11) under DDPOptimizer: its compiled backward's
    /// parameters in its inputs' order, the lower piece's node pushed where the residual enters;
    /// the AccumulateGrads ran in the order the DDP script's rank logged (spd_ddp1_* runs).
    #[test]
    fn the_logged_order_of_a_pair_of_blocks() {
        let lower = Ready {
            sequence_nr: 5,
            task: 0,
        };
        let mut pushed: Vec<Ready<u32>> = [112, 113, 114].map(grad).to_vec();
        pushed.push(lower);
        pushed.extend(
            [
                121, 122, 115, 116, 117, 118, 130, 131, 123, 124, 125, 132, 133, 126, 127, 128,
                129, 134, 135,
            ]
            .map(grad),
        );
        assert_eq!(
            ready_order(&pushed),
            vec![
                112, 114, 115, 125, 135, 134, 129, 128, 127, 126, 133, 124, 122, 131, 123, 130,
                118, 117, 132, 113, 116, 121, 0
            ]
        );
    }

    #[test]
    fn one_and_none() {
        assert_eq!(ready_order(&[grad(7)]), vec![7]);
        assert!(ready_order::<u32>(&[]).is_empty());
    }
}
