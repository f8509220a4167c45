// Open a page `neurok animate X -o x.html` wrote, from file:// as a user does, in headless
// Chromium (WebGL from SwiftShader, its software renderer: no GPU needed), and wait for its
// window.neurok to be ready (or to report why not). Shared by page_check.mjs,
// page_live.mjs and page_frames.mjs.
//
//   const { browser, page, errors, ready } = await openPage(file, { width, height });
//
// errors collects the page's errors and console errors as they come (and "not ready: ..."
// where it did not start); close the browser when done.

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { chromium } from "playwright-core";

export async function openPage(file, { width = 800, height = 600, timeout = 300000 } = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--use-angle=swiftshader",
           "--enable-unsafe-swiftshader", "--disable-background-networking"],
  });
  const page = await browser.newPage({ viewport: { width, height } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(pathToFileURL(resolve(file)).href);
  await page.waitForFunction(() => window.neurok && (window.neurok.ready || window.neurok.error),
                             null, { timeout });
  const state = await page.evaluate(() => ({ ready: window.neurok.ready,
                                              error: window.neurok.error }));
  if (!state.ready) errors.push(`not ready: ${state.error}`);
  return { browser, page, errors, ready: state.ready };
}
