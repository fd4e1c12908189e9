//! Ranks the page's fixes in slices. A ranking replays a dozen to a few dozen changed runs; for a
//! deep model that is a second or more of work (nanoGPT at 48 layers: ~0.9 s in Chromium), which
//! in one piece would freeze the page. The estimator's ranking hands its thread back before each
//! replay ([`Pause`]); here, once a slice has run [`SLICE_MS`], it does, and the ranking goes on
//! in the next task, after the browser has drawn and answered input. A newer ranking (the inputs
//! settled again) drops the one before at its next pause.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use estimator::engine::ranking::{Pause, Yield};
use estimator::programs::{rank_page_fixes_paused, ProgramFixes};
use estimator::query::PageState;
use gloo_timers::callback::Timeout;

use crate::browser::now_ms;

/// How long one slice may run before it hands the thread back: well under a 50 ms long task
/// (a replay in progress is not cut, so a slice ends up to one replay later).
const SLICE_MS: f64 = 25.0;

/// A [`Pause`] that hands back once the slice under way has run [`SLICE_MS`].
struct Slices {
    /// When the slice under way began.
    began: Cell<f64>,
}

impl Pause for Slices {
    fn pause(&self) -> Yield {
        if now_ms() - self.began.get() >= SLICE_MS {
            Yield::hand_back()
        } else {
            Yield::go_on()
        }
    }
}

type Ranking = Pin<Box<dyn Future<Output = Option<ProgramFixes>>>>;

/// One ranking at a time: each is numbered, and a ranking whose number is no longer the
/// latest is dropped when its turn comes.
#[derive(Clone, Default)]
pub struct Ranker {
    latest: Rc<Cell<u64>>,
}

impl Ranker {
    /// Ranks `page`'s fixes (`mfu` for nanoGPT's speed model) in slices, then calls `done` with
    /// them — unless `rank` is called again first, which drops this ranking.
    pub fn rank(
        &self,
        page: PageState,
        mfu: f64,
        done: impl FnOnce(Option<ProgramFixes>) + 'static,
    ) {
        let id = self.latest.get() + 1;
        self.latest.set(id);
        let slices = Rc::new(Slices {
            began: Cell::new(now_ms()),
        });
        let pause = Rc::clone(&slices);
        let ranking: Ranking = Box::pin(async move {
            let budget = page.budget();
            rank_page_fixes_paused(&page, &budget, mfu, &*pause).await
        });
        self.step(id, ranking, slices, Box::new(done));
    }

    /// Runs one slice of ranking `id`, then either answers or schedules the next slice.
    fn step(
        &self,
        id: u64,
        mut ranking: Ranking,
        slices: Rc<Slices>,
        done: Box<dyn FnOnce(Option<ProgramFixes>)>,
    ) {
        if self.latest.get() != id {
            return;
        }
        slices.began.set(now_ms());
        // nothing in a ranking waits on anything but its own next slice: no waker to keep, the
        // timer below polls it again
        match ranking
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(fixes) => done(fixes),
            Poll::Pending => {
                let this = self.clone();
                Timeout::new(0, move || this.step(id, ranking, slices, done)).forget();
            }
        }
    }
}
