//! base_train.py's and chat_sft.py's settings as the page lays them out, by their argparse names
//! (`--device-batch-size` shown, `device_batch_size` in the URL). The scripts share the model,
//! the batch and attention; `--fp8` is base_train.py's alone, and chat_sft.py loads the base
//! run's optimizer state or not.

use super::config::{NanochatAttention, NanochatDtype};
use crate::engine::settings::Allocator;
use crate::programs::inputs::{as_written, Group, Input, Label, Section, PY_BOOL};

const MODEL: Group = Group {
    section: Section::Model,
    inputs: &[
        Input::number(
            "depth",
            &[
                2., 4., 6., 8., 10., 12., 14., 16., 18., 20., 22., 24., 26., 28., 32.,
            ],
        ),
        Input::number("aspect_ratio", &[32., 48., 64., 80., 96., 128.]),
        Input::number("head_dim", &[64., 96., 128., 192., 256.]),
    ],
};

const BATCH: Group = Group {
    section: Section::Batch,
    inputs: &[
        Input::number("device_batch_size", &[1., 2., 4., 8., 16., 32., 64., 128.]),
        // -1: base_train.py picks it from the depth (the batch line shows what it resolves to)
        Input::number(
            "total_batch_size",
            &[
                -1., 8192., 16384., 32768., 65536., 131072., 262144., 524288., 1048576., 2097152.,
            ],
        ),
        Input::BatchLine,
        Input::number("max_seq_len", &[256., 512., 1024., 2048., 4096., 8192.]),
    ],
};

const WINDOW: Input = Input::Choice {
    key: "window_pattern",
    options: &[
        as_written("L"),
        as_written("SL"),
        as_written("SSL"),
        as_written("SSSL"),
    ],
};

const ATTENTION: Input = Input::Choice {
    key: "attention",
    options: &[
        (NanochatAttention::Sdpa.as_str(), Label::Text("SDPA")),
        (NanochatAttention::Fa3.as_str(), Label::Text("FA3")),
    ],
};

/// NANOCHAT_DTYPE: auto lets the card decide (fp32 below SM 8.0).
const DTYPE: Input = Input::Choice {
    key: "dtype",
    options: &[
        as_written(NanochatDtype::Auto.as_str()),
        as_written(NanochatDtype::Bfloat16.as_str()),
        as_written(NanochatDtype::Float32.as_str()),
    ],
};

/// base_train.py sets expandable segments itself: its default first.
const ALLOCATOR: Input = Input::Choice {
    key: "allocator",
    options: &[
        (
            Allocator::ExpandableSegments.as_str(),
            Label::AllocatorExpandable,
        ),
        (Allocator::Default.as_str(), Label::AllocatorDefault),
    ],
};

const EVAL_TOKENS: Input = Input::number(
    "eval_tokens",
    &[
        524288., 2097152., 10485760., 20971520., 41943040., 83886080.,
    ],
);

/// base_train.py's.
pub const BASE: &[Group] = &[
    MODEL,
    BATCH,
    Group {
        section: Section::Attention,
        inputs: &[
            WINDOW,
            ATTENTION,
            DTYPE,
            Input::Choice {
                key: "fp8",
                options: PY_BOOL,
            },
            ALLOCATOR,
        ],
    },
    Group {
        section: Section::Eval,
        inputs: &[EVAL_TOKENS],
    },
];

/// chat_sft.py's.
pub const SFT: &[Group] = &[
    MODEL,
    BATCH,
    Group {
        section: Section::Attention,
        inputs: &[WINDOW, ATTENTION, DTYPE, ALLOCATOR],
    },
    Group {
        section: Section::Eval,
        inputs: &[
            EVAL_TOKENS,
            Input::Choice {
                key: "load_optimizer",
                options: &[as_written("1"), as_written("0")],
            },
        ],
    },
];
