// The first bar, before the page: a module a third of the page's size (the estimator and the words,
// crates/first-bar) paints the peak, the verdict and the six components for the URL's state, and
// the page replaces it when it mounts. The page's own module is fetched only once this one has
// painted and its frame is out (index.html's loader awaits `vramfitFirstBar`, see
// scripts/post-build.py): on a slow network the two would otherwise share the bandwidth, and on a
// fast one the page's module would arrive while the first bar computes, its compile and start
// holding the first bar's frame back (measured: ~420 ms unthrottled). Whatever fails here, the
// page still starts: the promise always settles.
let arrived;
window.vramfitFirstBar = new Promise((resolve) => { arrived = resolve; });
(async () => {
  // a shared link that names one of the build's languages: its bar words are fetched while the
  // module arrives (the module decides the language; a guess it does not take is a wasted small fetch)
  const named = new URLSearchParams(location.search).get('lang');
  const files = document.querySelector('meta[name="vramfit-languages"]')?.content.split(' ') ?? [];
  // (English's words are in the module)
  const early = named !== 'en' && files.includes(named) ? { tag: named, text: words(named) } : null;
  try {
    const bar = await import('./first-bar/vramfit_first_bar.js');
    await bar.default({ module_or_path: new URL('first-bar/vramfit_first_bar_bg.wasm', document.baseURI) });
    performance.mark('vramfit:first-bar-ready');
    const tag = bar.lang();
    const text = tag === 'en' ? undefined : await (early?.tag === tag ? early.text : words(tag));
    // without the file of a language other than English it paints nothing (crates/first-bar)
    bar.paint(text);
    performance.mark('vramfit:first-bar-painted');
    // the next frame shows the bar; the task after it runs once that frame is out (a hidden tab
    // or an embed scrolled out of view draws no frames: then 100 ms is enough)
    await new Promise((shown) => {
      requestAnimationFrame(() => setTimeout(shown, 0));
      setTimeout(shown, 100);
    });
  } catch (e) {
    console.warn('vramfit: no first bar, the page follows', e);
  }
  arrived();
})();

/**
 * A language's words of the first bar (first-bar/{tag}.txt, written by scripts/post-build.py: the
 * nine lines of its file the bar shows, not the page's whole file beside the module on a slow
 * network), or undefined (offline without a cached copy, an error status).
 */
function words(tag) {
  return fetch(`first-bar/${tag}.txt`).then((r) => (r.ok ? r.text() : undefined), () => undefined);
}
