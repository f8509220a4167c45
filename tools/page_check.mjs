// Open a page `neurok animate X -o x.html` wrote, from file:// as a user does, in headless
// Chromium, and report what it did.
//
//   node tools/page_check.mjs PAGE.html SHOT.png TIME [TIME ...]
//
// Waits for the page's window.neurok to be ready, samples every vertex in world space at
// each TIME (window.neurok.sample), lets it play for a second and screenshots it to SHOT.png.
// Prints JSON: {errors: [console errors and page errors], duration, played (the clock after
// a second of playing), times, positions: [per time, x, y, z, ...]}.
//
// WebGL comes from SwiftShader (Chromium's software renderer), so no GPU is needed.

import { openPage } from "./page_open.mjs";

const [file, shot, ...timeArgs] = process.argv.slice(2);
if (!file || !shot || timeArgs.length === 0) {
  console.error("usage: node page_check.mjs PAGE.html SHOT.png TIME [TIME ...]");
  process.exit(2);
}
const times = timeArgs.map(Number);
const { browser, page, errors, ready } = await openPage(file, { timeout: 120000 });
try {
  const result = { errors, times, positions: [], duration: 0, played: 0 };
  if (ready) {
    result.duration = await page.evaluate(() => window.neurok.duration);
    for (const t of times) result.positions.push(await page.evaluate((t) => window.neurok.sample(t), t));
    await page.evaluate(() => { window.neurok.seek(0); window.neurok.play(); });
    await page.waitForTimeout(1000);
    result.played = await page.evaluate(() => window.neurok.time);
    await page.screenshot({ path: shot });
  }
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
