// The page's snapshot worker: reads a dropped snapshot, explains it and writes vramfit's run as
// one with the module beside it (crates/snapshot-web), off the page's thread. A classic worker
// with the no-modules glue: every engine the page supports runs it.
//
// Messages in:  {kind: 'read', file: File, query, lang} · {kind: 'view', query, lang}
//               · {kind: 'export', query}
// Messages out: {kind: 'progress', stage} · {kind: 'view', html} · {kind: 'export', bytes}
//               · {kind: 'error', message, crashed}
importScripts('vramfit_snapshot_web.js');

let ready = null;

onmessage = async ({ data }) => {
  try {
    ready ??= wasm_bindgen({ module_or_path: 'vramfit_snapshot_web_bg.wasm' });
    await ready;
    if (data.kind === 'read') {
      // (not even read into memory: the module's own check needs the bytes)
      const limit = wasm_bindgen.limit_bytes();
      if (data.file.size > limit) throw `too_large ${data.file.size} ${limit}`;
      postMessage({ kind: 'progress', stage: 'load' });
      const bytes = new Uint8Array(await data.file.arrayBuffer());
      wasm_bindgen.read_snapshot(data.file.name, bytes, (stage) => postMessage({ kind: 'progress', stage }));
    }
    if (data.kind === 'read' || data.kind === 'view') {
      postMessage({ kind: 'view', html: wasm_bindgen.view(data.query, data.lang) });
    } else if (data.kind === 'export') {
      const bytes = wasm_bindgen.export_snapshot(data.query);
      postMessage({ kind: 'export', bytes }, [bytes.buffer]);
    }
  } catch (e) {
    // a string is the reader's own refusal; anything else (a trap, memory the browser would not
    // give) leaves the module unusable: the page starts a fresh worker next time
    const refused = typeof e === 'string';
    postMessage({ kind: 'error', message: refused ? e : String((e && e.message) || e), crashed: !refused });
  }
};
