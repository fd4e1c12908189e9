//! The two settings every program's memory depends on in the same way: the autocast dtype of
//! the matmuls and the caching allocator's mode. Named as PyTorch names them.

/// Floating-point type of the autocast region (`dtype` in nanoGPT's train.py; bf16 in build-nanogpt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    Float32,
    Bfloat16,
    Float16,
}

impl Dtype {
    pub const ALL: [Dtype; 3] = [Dtype::Bfloat16, Dtype::Float16, Dtype::Float32];
    pub const NAMES: &'static [&'static str] = &["bfloat16", "float16", "float32"];

    /// The name PyTorch (and train.py) uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            Dtype::Float32 => "float32",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float16 => "float16",
        }
    }

    pub fn parse(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// Bytes of one element of a matmul output under autocast (the "16-bit" of the physics notes).
    pub fn bytes(self) -> u128 {
        match self {
            Dtype::Float32 => 4,
            Dtype::Bfloat16 | Dtype::Float16 => 2,
        }
    }

    pub fn is_16bit(self) -> bool {
        self != Dtype::Float32
    }
}

/// `PYTORCH_CUDA_ALLOC_CONF` (or `PYTORCH_ALLOC_CONF`): whether the caching allocator uses expandable segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Allocator {
    Default,
    ExpandableSegments,
}

impl Allocator {
    pub const NAMES: &'static [&'static str] = &["default", "expandable_segments"];

    pub const fn as_str(self) -> &'static str {
        match self {
            Allocator::Default => "default",
            Allocator::ExpandableSegments => "expandable_segments",
        }
    }

    pub fn parse(s: &str) -> Option<Allocator> {
        match s {
            "default" => Some(Allocator::Default),
            "expandable_segments" | "expandable_segments:True" => {
                Some(Allocator::ExpandableSegments)
            }
            _ => None,
        }
    }
}
