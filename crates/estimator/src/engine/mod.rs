//! What every training program shares: a run as allocator events, its replay through a model of
//! PyTorch's caching allocator, and the verdict for a card. Nothing here knows a program.

pub mod allocator;
pub mod allocator_rounding;
pub mod events;
pub mod ranking;
pub mod replay;
pub mod run;
pub mod verdict;
