// In an iframe with ?embed=1: tell the embedding page how tall the calculator is, whenever that
// changes, so it can size the iframe. Only a height leaves the frame.
(() => {
  if (window.parent === window) return;
  if (new URLSearchParams(location.search).get('embed') !== '1') return;
  let last = 0;
  const post = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: 'vramfit:height', height }, '*');
  };
  new ResizeObserver(post).observe(document.documentElement);
  window.addEventListener('load', post);
})();
