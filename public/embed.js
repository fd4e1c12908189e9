// For pages that embed vramfit: sizes every <iframe data-vramfit> to the calculator's height.
//   <iframe data-vramfit src="https://…/vramfit/?embed=1&batch_size=16" title="vramfit"></iframe>
//   <script src="https://…/vramfit/embed.js" defer></script>
(() => {
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'vramfit:height' || typeof data.height !== 'number') return;
    for (const frame of document.querySelectorAll('iframe[data-vramfit]')) {
      if (frame.contentWindow === event.source) {
        frame.style.height = `${Math.max(120, Math.min(data.height, 20000))}px`;
      }
    }
  });
})();
