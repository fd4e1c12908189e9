//! vramfit's predicted run written as a memory snapshot reads back as the prediction: the same
//! peaks, followed exactly through the segments it recorded — for every program, with either
//! allocator, and on a card it does not fit.

#![allow(clippy::unwrap_used)]

use estimator::programs::replay_page;
use estimator::query::PageState;
use vramfit_snapshot::export::{snapshot, to_pickle};

fn round_trip(query: &str) {
    let (page, notes) = PageState::from_query(query);
    assert!(notes.is_empty(), "{query}: {notes:?}");
    let budget = page.budget();
    let run = replay_page(&page, &budget).unwrap();
    let exported = snapshot(&run, "train.py");
    let bytes = to_pickle(&exported);
    let read = vramfit_snapshot::read(&bytes).unwrap();
    assert_eq!(read.events.len(), exported.events.len(), "{query}");
    let h = vramfit_snapshot::follow(&read);
    assert!(h.exact, "{query}: the exported history is followed exactly");
    let on_card = &run.on_card;
    assert_eq!(
        u128::from(h.peak_allocated),
        on_card.peak_allocated,
        "{query}"
    );
    assert_eq!(
        u128::from(h.peak_reserved),
        on_card.peak_reserved,
        "{query}"
    );
    assert_eq!(h.oom.is_some(), on_card.oom.is_some(), "{query}");
}

#[test]
fn every_programs_prediction_reads_back_as_itself() {
    for query in [
        "gpu=h200&n_layer=4&n_head=4&n_embd=256&block_size=256&batch_size=8",
        "gpu=h200&allocator=expandable_segments&n_layer=6",
        "program=nanochat&gpu=h200&depth=4&device_batch_size=8&max_seq_len=512",
        "program=build-nanogpt&gpu=h200&n_layer=4&B=4&T=256&total_batch_size=2048&use_compile=False",
        // out of memory on a 12 GB card: the snapshot ends at the failed request
        "gpu=rtx3060&batch_size=16&compile=False&n_layer=24",
    ] {
        round_trip(query);
    }
}
