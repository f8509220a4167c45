// Drive the live object of a page `neurok animate X -o x.html` wrote, in headless Chromium
// from file://, and report what it did (tests/interop/test_page.py).
//
//   node tools/page_live.mjs PAGE.html SECONDS [drag|cloth [SHOT.png]]
//
// Prints JSON: {errors, handles, fps, steps: the page's own run from the clip's start
// (window.neurok.live.integrate), clip: the baked clip at the same frames (sample), and with
// "drag": a drag with the mouse from where the vertex nearest the middle is shown, up and
// right (moved: the most a vertex moved, live: whether the page went live; SHOT.png: a
// screenshot while it pulls), then a scripted pull of the top vertex upward
// for a second (pulled: how far it rose, in world units), let go, four seconds on (speed:
// the fastest vertex then, m/s; size: the clip's diagonal), then a poke at the top vertex
// (poked: the fastest vertex right after) and four seconds on (still: the fastest then);
// skin: the most a vertex three.js skins (as the GPU does) is off the model's, x size.
// With "cloth" (a cloth's page): the cloth live from the clip's end for 2 s, its edges'
// stretch against their rest lengths (clothLive below), the mouse's drag, then a scripted
// pull and a poke (clothHand).
import { openPage } from "./page_open.mjs";

const [file, seconds, mode, shot] = process.argv.slice(2);
const { browser, page, errors } = await openPage(file, { timeout: 120000 });
try {
  const result = await page.evaluate((seconds) => {
    const n = window.neurok;
    if (!n.ready) return { error: n.error };
    n.pause();
    const steps = n.live.integrate(seconds);
    const fps = (steps.length - 1) / seconds;
    const clip = steps.map((_, f) => n.sample(f / fps));
    return { handles: n.live.handles, fps, steps, clip };
  }, Number(seconds));
  if (mode === "drag" && !result.error) {
    Object.assign(result, await mouseDrag(page, shot));
    await page.mouse.up();
    Object.assign(result, await page.evaluate(() => {
      const n = window.neurok;
      n.pause();
      n.live.step(2);  // what the mouse left moving settles
      const x = n.live.positions();
      let top = 0;
      for (let i = 0; i < x.length; i += 3) if (x[i + 1] > x[top + 1]) top = i;
      let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < x.length; i += 3) {
        for (let c = 0; c < 3; c++) {
          lo[c] = Math.min(lo[c], x[i + c]);
          hi[c] = Math.max(hi[c], x[i + c]);
        }
      }
      const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
      const target = [x[top], x[top + 1] + 0.3 * size, x[top + 2]];
      n.live.pull(top / 3, target);
      n.live.step(1);
      const pulled = n.live.positions()[top + 1] - x[top + 1];
      n.live.release();
      n.live.step(4);
      const speed = n.live.speed();
      const model = n.live.positions(), drawn = n.live.shown();  // three.js's skinning
      let skin = 0;
      for (let i = 0; i < model.length; i++) skin = Math.max(skin, Math.abs(model[i] - drawn[i]));
      n.live.poke(top / 3, [1, 0, 0]);  // a click's push, sideways
      const poked = n.live.speed();
      n.live.step(4);
      return { pulled, size, speed, poked, still: n.live.speed(), skin: skin / size };
    }));
  }
  if (mode === "cloth" && !result.error) {
    Object.assign(result, await page.evaluate(clothLive));
    Object.assign(result, await mouseDrag(page, shot));
    await page.mouse.up();
    Object.assign(result, await page.evaluate(clothHand, [result.far, result.size]));
  }
  result.errors = errors;
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}

/** A drag with the mouse from where the vertex nearest the middle is shown, up and right:
 * {moved: the most a vertex moved, live}; the mouse is left down. */
async function mouseDrag(page, shot) {
  const [before, from] = await page.evaluate(() => {
    const n = window.neurok, t = n.duration;
    n.seek(t);
    const x = n.sample(t);
    const c = [0, 1, 2].map((k) => x.filter((_, i) => i % 3 === k)
      .reduce((a, b) => a + b) * 3 / x.length);
    let best = 0, near = Infinity;
    for (let i = 0; i < x.length; i += 3) {
      const d = Math.hypot(x[i] - c[0], x[i + 1] - c[1], x[i + 2] - c[2]);
      if (d < near) { near = d; best = i; }
    }
    n.play();
    return [x, n.live.screen(best / 3)];
  });
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  for (let k = 1; k <= 20; k++) {
    await page.mouse.move(from[0] + 3 * k, from[1] - 5 * k);
    await page.waitForTimeout(50);
  }
  await page.waitForTimeout(500);
  if (shot) await page.screenshot({ path: shot });
  return page.evaluate((before) => {
    const n = window.neurok, now = n.live.positions();
    let moved = 0;
    for (let i = 0; i < now.length; i += 3) {
      moved = Math.max(moved, Math.hypot(now[i] - before[i], now[i + 1] - before[i + 1],
                                         now[i + 2] - before[i + 2]));
    }
    return { moved, live: n.live.isLive() };
  }, before);
}

/** In the page: a cloth live from the clip's end for 2 s, its edges against their rest
 * lengths: {kind, stretch: the most |l / l0 - 1| of an edge, stretch99 and stretchMean: the
 * most of its 99th percentile and of its mean over the edges, in frames 0.25 s apart; travel: the most a vertex went from where it
 * went live; far: the page vertex that went furthest; size: the rest's diagonal; caption,
 * title: what the page says of the live cloth}. */
function clothLive() {
  const n = window.neurok, t = n.duration;
  n.pause();
  n.seek(t);
  n.live.enter(t);
  const rest = n.live.rest(), faces = n.live.faces(), seen = new Set(), edges = [];
  for (let i = 0; i < faces.length; i += 3) {
    for (const [a, b] of [[0, 1], [1, 2], [2, 0]]) {
      const u = Math.min(faces[i + a], faces[i + b]), w = Math.max(faces[i + a], faces[i + b]);
      if (!seen.has(`${u} ${w}`)) { seen.add(`${u} ${w}`); edges.push([u, w]); }
    }
  }
  const len = (x, [u, w]) => Math.hypot(x[3 * u] - x[3 * w], x[3 * u + 1] - x[3 * w + 1],
                                        x[3 * u + 2] - x[3 * w + 2]);
  const start = n.live.positions();
  let stretch = 0, stretch99 = 0, stretchMean = 0, travel = 0, far = 0;
  for (let k = 0; k < 8; k++) {
    n.live.step(0.25);
    const x = n.live.positions();
    const s = edges.filter((e) => len(rest, e) > 0)
      .map((e) => Math.abs(len(x, e) / len(rest, e) - 1)).sort((a, b) => a - b);
    stretch = Math.max(stretch, s[s.length - 1]);
    stretch99 = Math.max(stretch99, s[Math.floor(0.99 * (s.length - 1))]);
    stretchMean = Math.max(stretchMean, s.reduce((a, b) => a + b) / s.length);
    for (let i = 0; i < x.length; i += 3) {
      const d = Math.hypot(x[i] - start[i], x[i + 1] - start[i + 1], x[i + 2] - start[i + 2]);
      if (d > travel) { travel = d; far = i / 3; }
    }
  }
  let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < rest.length; i++) {
    lo[i % 3] = Math.min(lo[i % 3], rest[i]);
    hi[i % 3] = Math.max(hi[i % 3], rest[i]);
  }
  const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  return { kind: n.live.kind, stretch, stretch99, stretchMean, travel, far, size,
           caption: document.getElementById("caption").textContent,
           title: document.getElementById("live").title };
}

/** In the page, after clothLive: a scripted pull of the vertex ``far`` up by a third of
 * ``size`` for 1 s (reach: its distance to the target then over at the start), let go,
 * then a poke there sideways (calm: the fastest vertex, m/s, before it; poked: the largest
 * jump of a vertex's velocity; after: the fastest vertex half a second on). */
function clothHand([far, size]) {
  const n = window.neurok;
  n.pause();
  const x = n.live.positions(), at = (y) => [y[3 * far], y[3 * far + 1], y[3 * far + 2]];
  const target = at(x);
  target[1] += size / 3;
  n.live.pull(far, target);
  n.live.step(1);
  const reach = Math.hypot(...at(n.live.positions()).map((y, c) => y - target[c])) / (size / 3);
  n.live.release();
  const before = n.live.velocities(), calm = n.live.speed();
  n.live.poke(far, [0, 0, 1]);
  const after = n.live.velocities();
  let poked = 0;  // the largest jump of a vertex's velocity
  for (let i = 0; i < after.length; i += 3) {
    poked = Math.max(poked, Math.hypot(after[i] - before[i], after[i + 1] - before[i + 1],
                                       after[i + 2] - before[i + 2]));
  }
  n.live.step(0.5);
  return { reach, calm, poked, after: n.live.speed() };
}
