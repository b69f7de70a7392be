// One edit of the site's text, timed in the page from the performance
// measures the site emits (web/app/src/run.ts): shared by site-bench.mjs and
// site-gpt2-edit.mjs.

/**
 * Puts `text` in the page's text box and resolves with the timings of the
 * update it causes, or { timeout: true } when none ends within `timeoutMs`.
 * With a GPT-2 model the last 'attnscope:gpt2:forward' measure adds the
 * worker's figures (gpt2Call, gpt2Worker, modelForward, layer, gpt2Engine).
 */
export function applyTextTimed(page, text, timeoutMs) {
  return page.evaluate(
    async ({ text, timeoutMs }) => {
      const byName = (n) => performance.getEntriesByName(n, 'measure');
      const before = byName('attnscope:update').length;
      const area = document.querySelector('#text');
      const editAt = performance.now();
      area.value = text;
      area.dispatchEvent(new Event('input', { bubbles: true }));
      // Woken by the measure itself: a poll would take the page's main thread every few
      // milliseconds while the engine's workers compute, on the same CPUs.
      const updated = await new Promise((resolve) => {
        const done = (value) => {
          observer.disconnect();
          clearTimeout(timer);
          resolve(value);
        };
        const observer = new PerformanceObserver(() => {
          if (byName('attnscope:update').length > before) done(true);
        });
        observer.observe({ type: 'measure' });
        const timer = setTimeout(() => done(false), timeoutMs);
        if (byName('attnscope:update').length > before) done(true);
      });
      if (!updated) return { timeout: true };
      const update = byName('attnscope:update').at(-1);
      const last = (n) => byName(n).at(-1);
      // Two frames later the redraw has been painted.
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const painted = last('attnscope:painted');
      const frame = last('attnscope:frame');
      const ofThisUpdate = painted && painted.startTime === update.startTime;
      const forward = last('attnscope:gpt2:forward');
      return {
        update: update.duration,
        compute: last('attnscope:compute')?.duration,
        render: last('attnscope:render')?.duration,
        painted: ofThisUpdate ? painted.duration : undefined,
        toScreen: ofThisUpdate && frame ? update.duration + frame.duration : undefined,
        editToUpdateEnd: update.startTime + update.duration - editAt,
        editToPaint: performance.now() - editAt,
        gpt2Call: forward?.duration,
        gpt2Worker: forward?.detail?.worker,
        modelForward: forward?.detail?.modelForward,
        layer: forward?.detail?.layer,
        gpt2Engine: forward?.detail?.engine,
      };
    },
    { text, timeoutMs },
  );
}
