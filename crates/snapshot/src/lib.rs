//! PyTorch's own answer to "where did my memory go" is the memory snapshot
//! (`torch.cuda.memory._record_memory_history()`, then `_dump_snapshot("snapshot.pickle")`).
//! This crate reads one ([`read`]) and follows its recorded history ([`history`]): the memory
//! allocated and reserved over the run, the peak, and the cache at an out-of-memory request;
//! and says what was live at such a moment ([`explain`]): vramfit's components and the lines of
//! the user's code that allocated it.

pub mod explain;
pub mod export;
pub mod history;
pub mod pickle;
pub mod read;

pub use explain::{moment, segments_at_dump, Moment, SegmentUse};
pub use history::{follow, History, Oom};
pub use read::{read, ReadError, Snapshot};
