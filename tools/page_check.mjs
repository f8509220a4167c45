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

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { chromium } from "playwright-core";

const [file, shot, ...timeArgs] = process.argv.slice(2);
if (!file || !shot || timeArgs.length === 0) {
  console.error("usage: node page_check.mjs PAGE.html SHOT.png TIME [TIME ...]");
  process.exit(2);
}
const times = timeArgs.map(Number);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(pathToFileURL(resolve(file)).href);
  await page.waitForFunction(() => window.neurok && (window.neurok.ready || window.neurok.error),
                             null, { timeout: 120000 });
  const state = await page.evaluate(() => ({ ready: window.neurok.ready,
                                              error: window.neurok.error }));
  if (!state.ready) errors.push(`not ready: ${state.error}`);
  const result = { errors, times, positions: [], duration: 0, played: 0 };
  if (state.ready) {
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
