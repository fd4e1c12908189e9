//! karpathy/nanoGPT's `train.py`: its config and configurator, parameter count, memory physics
//! (the closed form), allocation sequence, DDP, speed, fixes and config snippets.

pub mod allocator_rounding;
pub mod analysis;
pub mod closed_verdict;
pub mod config;
pub mod configurator;
pub mod ddp;
pub mod estimate;
pub mod explain;
pub mod fixes;
pub mod params;
pub mod physics;
pub mod sequence;
pub mod snippet;
pub mod speed;
