//! The page ranks fixes in slices: the ranking hands its thread back before each replay and is
//! polled again later. Handing back at every chance must change nothing in the answer, and a
//! deep run's ranking must offer a chance before every replay (so no slice holds more than one).

use std::cell::Cell;

use estimator::engine::ranking::{to_the_end, Pause, Yield};
use estimator::programs::{rank_page_fixes, rank_page_fixes_paused};
use estimator::query::PageState;

/// Hands back at every pause and counts them.
#[derive(Default)]
struct EveryTime {
    pauses: Cell<u32>,
}

impl Pause for EveryTime {
    fn pause(&self) -> Yield {
        self.pauses.set(self.pauses.get() + 1);
        Yield::hand_back()
    }
}

#[test]
fn handing_back_at_every_replay_changes_no_answer() {
    // each program, runs that fit and runs that do not, on one GPU and on several
    for (query, at_least) in [
        ("", 10),
        ("n_layer=16&gpu=rtx4090", 10),
        ("world_size=4&gpu=a6000", 10),
        ("program=nanochat", 5),
        ("program=nanochat&device_batch_size=1&gpu=rtx3060", 5),
        (
            "program=nanochat&nproc_per_node=2&fp8=1&depth=12&gpu=h100",
            5,
        ),
        (
            "program=nanochat-sft&depth=12&device_batch_size=8&gpu=rtx4090",
            5,
        ),
        ("program=build-nanogpt&gpu=rtx4090", 5),
        ("program=build-nanogpt&use_compile=False&gpu=h100", 5),
    ] {
        let (page, notes) = PageState::from_query(query);
        assert!(notes.is_empty(), "{query}: {notes:?}");
        let budget = page.budget();
        let whole = rank_page_fixes(&page, &budget, 0.35);
        assert!(whole.is_some(), "{query}: no fixes");
        let pause = EveryTime::default();
        let sliced = to_the_end(rank_page_fixes_paused(&page, &budget, 0.35, &pause));
        assert_eq!(sliced, whole, "{query}");
        assert!(
            pause.pauses.get() >= at_least,
            "{query}: {} pauses",
            pause.pauses.get()
        );
    }
}
