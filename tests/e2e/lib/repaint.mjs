// Slider input → the next frame painted, the measure of bench.mjs and repaint_ab.mjs.

/** `n` inputs of the default page's batch_size slider, each timed (ms) to the next frame painted. */
export function sliderInputs(page, n) {
  return page.evaluate(async (count) => {
    const slider = document.querySelector('input[type=range][name=batch_size]');
    const nextPaint = () => new Promise((ok) => requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => ok(performance.now());
      ch.port2.postMessage(0);
    }));
    const times = [];
    // inputs arrive at any point of a frame, not just after a paint: a seeded spread of 0–16 ms
    let seed = 12345;
    const phase = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return (seed / 2 ** 32) * 16; };
    for (let i = 0; i < count; i++) {
      await new Promise((ok) => setTimeout(ok, phase()));
      // sweep batch_size 1 … 32 back and forth: every input changes the answer
      slider.value = String([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 3, 2, 1][i % 18]);
      const t0 = performance.now();
      slider.dispatchEvent(new Event('input', { bubbles: true }));
      times.push((await nextPaint()) - t0);
    }
    return times;
  }, n);
}
