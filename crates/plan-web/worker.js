// The page's plan worker: plans a run script for the page's cards and renders the plan view's
// results with the module beside it (crates/plan-web), off the page's thread: a plan replays every
// stage at several batch sizes (~60-240 ms on a slow machine), and its code is not part of what
// every visitor downloads. A classic worker with the no-modules glue: every engine the page
// supports runs it.
//
// Messages in:  {kind: 'plan', query, script, lang}
// Messages out: {kind: 'plan', html} · {kind: 'error', message, crashed}
// (one request at a time: the page sends the next once this one is answered)
importScripts('vramfit_plan_web.js');

let ready = null;

onmessage = async ({ data }) => {
  try {
    ready ??= wasm_bindgen({ module_or_path: 'vramfit_plan_web_bg.wasm' });
    await ready;
    postMessage({ kind: 'plan', html: wasm_bindgen.plan(data.query, data.script, data.lang) });
  } catch (e) {
    // nothing a script or a link holds makes the planner refuse (it says what is wrong in its
    // view): anything thrown here (a trap, memory the browser would not give, a module that could
    // not be fetched) leaves the module unusable, and the page starts a fresh worker next time
    postMessage({ kind: 'error', message: String((e && e.message) || e), crashed: true });
  }
};
