//! One text area in, one paragraph out; everything the real page computes happens in between.

use estimator::fixes::rank_fixes;
use estimator::query::PageState;
use leptos::prelude::*;
use vramfit_i18n::{fill, format, Lang};

/// Every answer the page gives, as one string: a value of each kind the page renders.
fn answer(text: &str) -> String {
    let (state, issues) = PageState::from_query(text);
    let pasted = estimator::paste::interpret(text, &state);
    let state = pasted.state;
    let tr = Lang::negotiate(["en"]).strings();
    let mut out = issues
        .iter()
        .map(|i| vramfit_i18n::issue(tr, i))
        .collect::<Vec<_>>();
    if let Some(e) = &pasted.error {
        out.push(vramfit_i18n::error(tr, e));
    }
    let budget = state.budget();
    match estimator::analyze(&state.configs.nanogpt, &budget) {
        Err(e) => out.push(vramfit_i18n::error(tr, &e)),
        Ok(a) => {
            out.push(format::gib(a.peak_bytes()));
            let parts = a.components();
            for c in estimator::Component::ALL {
                out.push(fill(
                    tr.component(c),
                    &[("bytes", &format::bytes(parts.get(c)))],
                ));
            }
            if let Some(r) = rank_fixes(
                &state.configs.nanogpt,
                &budget,
                estimator::speed::DEFAULT_MFU,
                true,
            ) {
                for f in &r.fixes {
                    let words = estimator::fixes::words(f, &state.configs.nanogpt, 0);
                    let (title, why) = vramfit_i18n::fix_text::fix_words(
                        tr,
                        estimator::programs::Program::NanoGpt,
                        &words,
                    );
                    out.push(
                        title
                            + &why
                            + &estimator::snippet::config_file(
                                &f.config,
                                Some(&state.configs.nanogpt),
                            ),
                    );
                }
            }
        }
    }
    out.push(state.to_query());
    // the other languages arrive as text and are parsed into the same table
    out.push(
        vramfit_i18n::parse(Box::leak(text.to_string().into_boxed_str()), Some(tr))
            .0
            .lang
            .to_string(),
    );
    out.join("\n")
}

fn main() {
    leptos::mount::mount_to_body(|| {
        let text = RwSignal::new(String::new());
        view! {
            <textarea on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <pre>{move || text.with(|t| answer(t))}</pre>
        }
    })
}
