// The page's cheap self-repulsion for a live cloth (docs/reduced-model.md, "Cloth"): the
// clip keeps the cloth free of self-intersection with the IPC Toolkit; the page's steps
// (cloth.js, where the stepper's ``repel`` is set: the live page's, not the contact-free
// steps tools/reduced_run.mjs compares with Python's) keep it apart on the simulation mesh
// with a thickness r (REPEL.thickness x its median edge), from the step's start x to z:
//   - the pairs: each vertex and each triangle of none of its 1-ring whose sweep boxes (x to
//     z, the triangle's grown by r) meet in a uniform grid of cells 2r wide, rebuilt each
//     call, where the vertex is near the plane over the triangle or passes through it;
//   - the cut: a vertex whose path crosses a triangle (its signed distance to the plane
//     changes sign where its projection is within REPEL.margin of the triangle, all moving
//     straight) stops, with the triangle, at REPEL.cut x the time of impact, the cut fading
//     over REPEL.spread rings around them (IPC's steps stop short of impact too);
//   - REPEL.passes Gauss-Seidel passes: each 2-ring pair kept REPEL.crease x its rest
//     distance apart (a fold at an edge or a vertex line stops short of flat), and each
//     vertex near a triangle pushed along its normal to r from it, on the side it came from,
//     shared by inverse mass (held vertices stay) and barycentric weights.
// ``predict`` does it to the step's inertial prediction, holding pairs at no less than they
// were (what approaches stops: inelastic); ``settle`` to the step's end; ``inelastic``
// takes the approach out of the velocities of the pairs in contact. Positions and
// velocities are Float64Array(3M), row-major.

import { barycentric, planes, Sweep } from "./cloth_sweep.js";

export const REPEL = {
  thickness: 0.5,  // r over the median edge
  margin: 0.25,  // a pair counts where the vertex is within this (barycentric) of the triangle
  crease: 0.5,  // the least distance of a 2-ring pair over its rest's
  cut: 0.5,  // a crossing's vertices stop at this x the time of impact
  spread: 10,  // over this many rings around them the cut fades
  passes: 3,  // Gauss-Seidel passes
  relax: 2,  // the stepper's local-global iterations after a settle that moved the cloth
};
const NEAR = 1.5;  // pairs kept: the vertex within this x r of the plane, at x or z,
const OVER = 0.6;  // with its projection within this of the triangle (barycentric)
const TURN = 0.5;  // a crossing counts where the triangle's normal turned less (cosine above)

export class Repel {
  /** ``faces`` (3F), ``rest`` (3M), ``mass`` (M), ``pinned`` (M, 1: held). */
  constructor(faces, rest, mass, pinned, options = {}) {
    const o = { ...REPEL, ...options }, M = mass.length, F = faces.length / 3;
    Object.assign(this, { faces, M, F, margin: o.margin, cut: o.cut, spread: o.spread,
                          passes: o.passes, relax: o.relax, share: o.share });
    this.w = Float64Array.from(mass, (m, i) => (pinned[i] ? 0 : 1 / m));
    const ring = Array.from({ length: M }, () => new Set()), lengths = [];
    for (let t = 0; t < faces.length; t += 3) {
      for (let k = 0; k < 3; k++) {
        const i = faces[t + k], j = faces[t + (k + 1) % 3];
        if (!ring[i].has(j)) lengths.push(dist(rest, i, j));
        ring[i].add(j);
        ring[j].add(i);
      }
    }
    this.ringStart = new Int32Array(M + 1);
    ring.forEach((s, i) => { this.ringStart[i + 1] = this.ringStart[i] + s.size; });
    this.ring = Int32Array.from(ring.flatMap((s) => [...s]));
    const second = [];  // the 2-ring pairs (i < k)
    ring.forEach((near, i) => {
      const seen = new Set();
      for (const j of near) {
        for (const k of ring[j]) {
          if (k > i && !near.has(k) && !seen.has(k)) { seen.add(k); second.push(i, k); }
        }
      }
    });
    this.second = Int32Array.from(second);
    this.least = Float64Array.from({ length: second.length / 2 },
                                   (_, q) => o.crease * dist(rest, second[2 * q], second[2 * q + 1]));
    lengths.sort((a, b) => a - b);
    this.r = o.thickness * (lengths[lengths.length >> 1] || 0);
    this.sweep = new Sweep(faces, M);
    this._consider = this._consider.bind(this);
    this.pairs = new Int32Array(2048);  // (p, t)
    this.d0 = new Float64Array(1024);  // p's signed distance to t's plane at x
    this.count = 0;
    this.nx = new Float64Array(4 * F);  // each triangle's unit normal and offset at x
    this.nz = new Float64Array(4 * F);  // ... at z
    this.alpha = new Float64Array(M);
    this.alpha2 = new Float64Array(M);
    this.before = new Float64Array(3 * M);
    this.b = new Float64Array(3);
    this.stats = { pairs: 0, pushed: 0, crossed: 0, creased: 0, cut: 0 };  // (the last call's)
  }

  /** The step's prediction ``y`` (in place) from ``x``: pairs held at r, or at no less
   * than they were at ``x``. */
  predict(x, y) { this._run(x, y, true); }

  /** The step's end ``z`` (in place) from ``x`` -> ``x`` moved by the pushes (not the cut):
   * the history BDF2's next step reads, so that a push carries no velocity (``x`` itself
   * where nothing was pushed). */
  settle(x, z) {
    if (!this._run(x, z, false)) return x;
    const out = Float64Array.from(x);
    for (let i = 0; i < z.length; i++) out[i] += z[i] - this.before[i];
    return out;
  }

  _run(x, z, keep) {
    const st = this.stats;
    st.pushed = st.crossed = st.cut = st.creased = 0;
    if (!(this.r > 0)) return false;
    planes(x, this.faces, this.nx);
    planes(z, this.faces, this.nz);
    if (keep || !this.share) this._candidates(x, z);  // (share: settle reads predict's pairs)
    st.pairs = this.count;
    if (this.cut > 0) this._cut(x, z);
    this.before.set(z);
    const nz = this.nz, f = this.faces, b = this.b, r = this.r, pairs = this.pairs;
    for (let pass = 0; pass < this.passes; pass++) {
      if (pass > 0) planes(z, f, nz);
      this._creases(x, z, keep);
      for (let k = 0; k < this.count; k++) {
        const p = pairs[2 * k], t = pairs[2 * k + 1], t4 = 4 * t, d0 = this.d0[k];
        const a = f[3 * t], c1 = f[3 * t + 1], c2 = f[3 * t + 2];
        const d1 = nz[t4] * z[3 * p] + nz[t4 + 1] * z[3 * p + 1] + nz[t4 + 2] * z[3 * p + 2]
          - nz[t4 + 3];
        const limit = keep ? Math.min(r, Math.abs(d0)) : r;
        if (d0 * d1 < 0) {  // through the plane: back to the side it came from, if it hit
          if (!this._hit(x, z, p, t, d0, d1)) continue;
          st.crossed++;
          this._push(z, p, a, c1, c2, t4, (d0 > 0 ? limit : -limit) - d1, Infinity);
        } else if (Math.abs(d1) < limit && barycentric(z, p, a, c1, c2, b, this.margin)) {
          st.pushed++;
          this._push(z, p, a, c1, c2, t4, (d1 > 0 ? limit : -limit) - d1, r);
        }
      }
    }
    return st.pushed + st.crossed + st.creased > 0;
  }

  /** The velocities ``v`` (in place) of the pairs within r at ``z`` less their approach
   * along the triangle's normal. */
  inelastic(z, v) {
    const f = this.faces, nz = this.nz, b = this.b, r = 1.01 * this.r, pairs = this.pairs;
    planes(z, f, nz);
    for (let k = 0; k < this.count; k++) {
      const p = pairs[2 * k], t = pairs[2 * k + 1], t4 = 4 * t;
      const a = f[3 * t], c1 = f[3 * t + 1], c2 = f[3 * t + 2];
      const d = nz[t4] * z[3 * p] + nz[t4 + 1] * z[3 * p + 1] + nz[t4 + 2] * z[3 * p + 2]
        - nz[t4 + 3];
      if (!(Math.abs(d) < r) || !barycentric(z, p, a, c1, c2, b, this.margin)) continue;
      let vn = 0;
      for (let c = 0; c < 3; c++) {
        vn += nz[t4 + c] * (v[3 * p + c] - b[0] * v[3 * a + c] - b[1] * v[3 * c1 + c]
                            - b[2] * v[3 * c2 + c]);
      }
      if (vn * d < 0) this._push(v, p, a, c1, c2, t4, -vn, Infinity);
    }
  }

  /** The pairs (p, t) whose sweep boxes meet (cloth_sweep.js) where p is not of t's 1-ring
   * and is near the plane over t, or passes through it. */
  _candidates(x, z) {
    this.count = 0;
    this.sweep.pairs(x, z, this.r, this._consider);
  }

  /** Keep (p, t) where p is no vertex of t and is near t's plane over t, or crosses it. */
  _consider(p, t, x, z) {
    const f = this.faces, a = f[3 * t], c1 = f[3 * t + 1], c2 = f[3 * t + 2];
    for (let q = this.ringStart[p]; q < this.ringStart[p + 1]; q++) {  // (the 1-ring: the
      const n = this.ring[q];  // creases' 2-ring pairs hold folds there)
      if (n === a || n === c1 || n === c2) return;
    }
    const nx = this.nx, nz = this.nz, t4 = 4 * t, P = 3 * p;
    const d0 = nx[t4] * x[P] + nx[t4 + 1] * x[P + 1] + nx[t4 + 2] * x[P + 2] - nx[t4 + 3];
    const d1 = nz[t4] * z[P] + nz[t4 + 1] * z[P + 1] + nz[t4 + 2] * z[P + 2] - nz[t4 + 3];
    const near = NEAR * this.r, b = this.b;
    if (!(d0 * d1 < 0)
        && !(Math.abs(d0) < near && barycentric(x, p, a, c1, c2, b, OVER))
        && !(Math.abs(d1) < near && barycentric(z, p, a, c1, c2, b, OVER))) return;
    if (2 * this.count + 2 > this.pairs.length) {  // (twice as many)
      [this.pairs, this.d0] = [grow(this.pairs, Int32Array), grow(this.d0, Float64Array)];
    }
    this.pairs[2 * this.count] = p;
    this.pairs[2 * this.count + 1] = t;
    this.d0[this.count++] = d0;
  }

  /** Whether p's path from x to z went through triangle t (its plane turning less than
   * TURN), where it crossed: its barycentric coordinates into ``b``. */
  _hit(x, z, p, t, d0, d1) {
    const nx = this.nx, nz = this.nz, t4 = 4 * t, f = this.faces;
    if (!(nx[t4] * nz[t4] + nx[t4 + 1] * nz[t4 + 1] + nx[t4 + 2] * nz[t4 + 2] > TURN)) {
      return false;
    }
    const s = d0 / (d0 - d1), y = CROSSING;
    for (let k = 0; k < 4; k++) {
      const i = 3 * (k === 0 ? p : f[3 * t + k - 1]);
      for (let c = 0; c < 3; c++) y[3 * k + c] = x[i + c] + s * (z[i + c] - x[i + c]);
    }
    return barycentric(y, 0, 1, 2, 3, this.b, this.margin);
  }

  /** The moves from ``x`` to ``z`` (in place) of each pair that crosses, and of the
   * vertices within ``spread`` rings of it, cut short of the impact (three rounds). */
  _cut(x, z) {
    const M = this.M, w = this.w, f = this.faces, pairs = this.pairs, nz = this.nz;
    let alpha = this.alpha, next = this.alpha2;
    for (let round = 0; round < 3; round++) {
      if (round > 0) planes(z, f, nz);
      alpha.fill(1);
      let any = false;
      for (let k = 0; k < this.count; k++) {
        const p = pairs[2 * k], t = pairs[2 * k + 1], t4 = 4 * t, d0 = this.d0[k];
        const d1 = nz[t4] * z[3 * p] + nz[t4 + 1] * z[3 * p + 1] + nz[t4 + 2] * z[3 * p + 2]
          - nz[t4 + 3];
        if (!(d0 * d1 < 0) || !this._hit(x, z, p, t, d0, d1)) continue;
        const a = this.cut * d0 / (d0 - d1);
        any = true;
        alpha[p] = Math.min(alpha[p], a);
        for (let c = 0; c < 3; c++) alpha[f[3 * t + c]] = Math.min(alpha[f[3 * t + c]], a);
      }
      if (!any) break;
      this.stats.cut++;
      for (let s = 0; s < this.spread; s++) {
        for (let i = 0; i < M; i++) {
          let least = alpha[i];
          for (let q = this.ringStart[i]; q < this.ringStart[i + 1]; q++) {
            least = Math.min(least, alpha[this.ring[q]] + 1 / this.spread);
          }
          next[i] = least;
        }
        const swap = alpha;
        alpha = next;
        next = swap;
      }
      for (let i = 0; i < M; i++) {
        if (!(w[i] > 0) || alpha[i] >= 1) continue;
        for (let c = 3 * i; c < 3 * i + 3; c++) z[c] = x[c] + alpha[i] * (z[c] - x[c]);
      }
    }
    planes(z, f, nz);
  }

  /** Each 2-ring pair of ``z`` (in place) nearer than its least distance (``keep``: or
   * than it was at ``x``) pushed apart to it. */
  _creases(x, z, keep) {
    const s = this.second, w = this.w;
    let pushed = 0;
    for (let q = 0; q < this.least.length; q++) {
      const i = 3 * s[2 * q], j = 3 * s[2 * q + 1], wi = w[s[2 * q]], wj = w[s[2 * q + 1]];
      const d = dist(z, i / 3, j / 3);
      let least = this.least[q];
      if (!(d < least) || !(d > 1e-12) || !(wi + wj > 0)) continue;
      if (keep) least = Math.min(least, dist(x, i / 3, j / 3));
      if (!(d < least)) continue;
      const l = (least - d) / (d * (wi + wj));
      pushed++;
      for (let c = 0; c < 3; c++) {
        const m = l * (z[i + c] - z[j + c]);
        z[i + c] += wi * m;
        z[j + c] -= wj * m;
      }
    }
    this.stats.creased += pushed;
  }

  /** Move p along triangle t's normal (its unit normal at 4t in ``nz``) by ``C`` (at most
   * ``most``) relative to the triangle (a, c1, c2) at barycentric ``b``: shared by inverse
   * mass (``y``: positions or velocities, in place). */
  _push(y, p, a, c1, c2, t4, C, most) {
    const w = this.w, b = this.b, n = this.nz;
    const b0 = clamp01(b[0]), b1 = clamp01(b[1]), b2 = clamp01(b[2]);
    const denom = w[p] + b0 * b0 * w[a] + b1 * b1 * w[c1] + b2 * b2 * w[c2];
    if (!(denom > 0)) return;
    const l = Math.min(Math.max(C, -most), most) / denom;
    for (let c = 0; c < 3; c++) {
      const m = l * n[t4 + c];
      y[3 * p + c] += w[p] * m;
      y[3 * a + c] -= b0 * w[a] * m;
      y[3 * c1 + c] -= b1 * w[c1] * m;
      y[3 * c2 + c] -= b2 * w[c2] * m;
    }
  }
}

const CROSSING = new Float64Array(12);

function grow(a, Type) {
  const out = new Type(2 * a.length);
  out.set(a);
  return out;
}

function clamp01(u) { return u < 0 ? 0 : u > 1 ? 1 : u; }

function dist(x, i, j) {
  const a = x[3 * i] - x[3 * j], b = x[3 * i + 1] - x[3 * j + 1], c = x[3 * i + 2] - x[3 * j + 2];
  return Math.sqrt(a * a + b * b + c * c);
}
