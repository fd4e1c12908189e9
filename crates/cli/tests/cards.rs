//! One card, one budget: the same card described on the command line and in the page's URL gives
//! the same card, context, cuBLAS workspace and usable memory — a custom card above all, which
//! the CLI once built from an H100 (a Hopper context and workspace) and the page from a consumer
//! card.

#![allow(clippy::unwrap_used)]

mod common;

use estimator::query::PageState;
use serde_json::Value;

/// (the CLI's options, the page's query) for the same card.
const CARDS: &[(&[&str], &str)] = &[
    (&["--vram-gib", "16"], "gpu=custom&vram_gib=16"),
    (
        &["--gpu", "custom", "--vram-gib", "16"],
        "gpu=custom&vram_gib=16",
    ),
    (&["--vram-gib", "8"], "gpu=custom&vram_gib=8"),
    (
        &["--vram-gib", "12", "--other-gib", "1.5"],
        "gpu=custom&vram_gib=12&other_gib=1.5",
    ),
    (&["--gpu", "rtx3060"], "gpu=rtx3060"),
    (
        &[
            "--gpu",
            "rtx4090",
            "--context-gib",
            "0.6",
            "--other-gib",
            "1",
        ],
        "gpu=rtx4090&context_gib=0.6&other_gib=1",
    ),
    (&["--gpu", "h100"], "gpu=h100"),
];

#[test]
fn the_cli_and_the_page_read_a_card_alike() {
    for (options, query) in CARDS {
        let cli = common::json(options);
        let (page, issues) = PageState::from_query(query);
        assert!(issues.is_empty(), "{query}: {issues:?}");
        let b = page.budget();
        let gpu = &cli["gpu"];
        let field = |k: &str| gpu[k].as_u64().map(u128::from);
        assert_eq!(gpu["id"], Value::from(b.gpu.id), "{query}");
        assert_eq!(field("total_bytes"), Some(b.gpu.total_bytes), "{query}");
        assert_eq!(field("context_bytes"), Some(b.context_bytes), "{query}");
        assert_eq!(field("other_bytes"), Some(b.other_bytes), "{query}");
        assert_eq!(
            field("cublas_workspace_bytes"),
            Some(b.gpu.cublas_workspace_bytes()),
            "{query}"
        );
        assert_eq!(field("usable_bytes"), Some(b.allocator_budget()), "{query}");
    }
}

/// `--gpu custom` is the page's and the answer's id for a custom card: with `--vram-gib` it is
/// one, without it the CLI says what is missing.
#[test]
fn gpu_custom_needs_its_memory() {
    let out = common::run(&["--gpu", "custom"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--gpu custom needs --vram-gib"), "{err}");
}
