//! The training programs vramfit models. Each one is a folder: its own names, defaults and
//! asserts, its shape, the one description of its memory (an allocation sequence) and its fixes.

pub mod nanochat;
pub mod nanogpt;
