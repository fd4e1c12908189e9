// Registers the service worker and offers a reload when a new version is waiting. The words
// come from the page (data attributes the app sets on <html>), so they follow its language.
(() => {
  if (!('serviceWorker' in navigator)) return;
  // an embedded calculator stays a plain page: offline use is the installed app's job
  if (new URLSearchParams(location.search).get('embed') === '1') return;
  // reload only when the user accepted an update (the first install also changes the
  // controller, and a reload then would lose what the page was showing)
  let accepted = false;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (!accepted) return;
    accepted = false;
    location.reload();
  });
  const offer = (worker) => {
    if (document.getElementById('vramfit-update')) return;
    const root = document.documentElement;
    const bar = document.createElement('div');
    bar.id = 'vramfit-update';
    bar.className = 'update';
    bar.setAttribute('role', 'status');
    const text = document.createElement('span');
    text.textContent = root.dataset.updateText || 'A new version of vramfit is available.';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'button';
    button.textContent = root.dataset.updateButton || 'Reload';
    button.addEventListener('click', () => {
      accepted = true;
      worker.postMessage('skip-waiting');
    });
    bar.append(text, button);
    document.body.append(bar);
  };
  // once the page has started and then gone idle: installing the worker fetches every file of
  // the site (a megabyte), which must share neither a slow network with the first bar's module
  // and the page's, nor the processor with the page's mount and first fix ranking (on a 2-core
  // machine, a link at every field's maximum, 30 loads each way alternating: the load's longest
  // task over 200 ms in 20 → 8 of them; tests/e2e/load_tasks.mjs)
  addEventListener('TrunkApplicationStarted', () => {
    if ('requestIdleCallback' in window) requestIdleCallback(register, { timeout: 3000 });
    else setTimeout(register, 1000);
  }, { once: true });
  function register() {
    navigator.serviceWorker.register('./sw.js').then((reg) => {
      // a browser whose policy refuses workers (an enterprise setting, an automation tool's
      // "block") may settle with no registration: the page works on, without offline use
      if (!reg) return;
      if (reg.waiting) offer(reg.waiting);
      reg.addEventListener('updatefound', () => {
        const w = reg.installing;
        // an update replaces an active worker; the first install has none. (Not the page's
        // controller when 'installed' fires: WebKit can report the first worker installed after
        // it has already claimed the page, which would offer the first install as an update.)
        if (!w || !reg.active) return;
        w.addEventListener('statechange', () => {
          if (w.state === 'installed') offer(w);
        });
      });
    }, () => {
      // refused (private windows, a file:// copy, storage off): the page works on, without
      // offline use, and says nothing in the console that a user could take for a fault
    });
  }
})();
