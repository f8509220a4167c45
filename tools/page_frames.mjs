// Frame times of a page `neurok animate X -o x.html` wrote, playing in headless Chromium.
//
//   node tools/page_frames.mjs PAGE.html SECONDS [WIDTH HEIGHT] [live]
//
// Opens the page from file:// (WebGL from SwiftShader, Chromium's software renderer, unless
// the machine gives Chromium a GPU), plays the clip from its start (with "live": the object
// itself from the clip's end, stepped by the page) and records the interval between
// requestAnimationFrame callbacks for SECONDS. Prints JSON: {frames, intervals_ms, rate:
// the live motion's seconds a second of the page's}.

import { openPage } from "./page_open.mjs";

const [file, secondsArg, w = "800", h = "600", mode = ""] = process.argv.slice(2);
if (!file || !secondsArg) {
  console.error("usage: node page_frames.mjs PAGE.html SECONDS [WIDTH HEIGHT] [live]");
  process.exit(2);
}
const { browser, page } = await openPage(file, { width: Number(w), height: Number(h) });
try {
  const intervals = await page.evaluate(([seconds, live]) => new Promise((done) => {
    window.neurok.seek(live ? window.neurok.duration : 0);
    if (live) window.neurok.live.enter(window.neurok.duration);
    window.neurok.play();
    const out = [];
    let last = null;
    const end = performance.now() + 1000 * seconds;
    const tick = (now) => {
      if (last !== null) out.push(now - last);
      last = now;
      if (now < end) requestAnimationFrame(tick); else done(out);
    };
    requestAnimationFrame(tick);
  }), [Number(secondsArg), mode === "live"]);
  const rate = mode === "live" ? await page.evaluate(() => window.neurok.live.rate()) : null;
  console.log(JSON.stringify({ frames: intervals.length, intervals_ms: intervals, rate }));
} finally {
  await browser.close();
}
