// A cloth's own steps, in the page (docs/reduced-model.md, "Cloth"): the projective dynamics
// that `neurok animate` integrates on the cloth's simulation mesh (deform/own/cloth_step.py:
// ClothStep.step without a contact object), read from the model's description
// (deform/own/cloth_model.py: describe_cloth). Each step: BDF2 (implicit Euler's on the
// first step and after a push), the inertial prediction under gravity and the air, the
// fabric's local-global iterations (the projections in cloth_fabric.js, the global solve
// with the shipped banded factor in cloth_band.js), the floor (y >= 0, where the model has
// a ground) and Coulomb friction on the velocities. Self-contact is the clip's (IPC); with
// ``repel`` set (the live page's), cloth_repel.js keeps the cloth off itself cheaply.
//
// The page adds a hand: a grip pulled by a spring (implicit: its stiffness on the global
// step's diagonal, which the page factors again when a grab starts) and a poke (a velocity
// kick, after which the next step is Euler's). cloth_carry.js takes the
// simulation vertices to the welded surface that the page binds.
//
// Positions and velocities are Float64Array(3M) over the M simulation vertices, row-major.

import { coupling, factorBanded, shipped, solveBanded } from "./cloth_band.js";
import { Carry } from "./cloth_carry.js";
import { Repel } from "./cloth_repel.js";
import { airForce, clampStretch, turnCurvature, vertexNormals } from "./cloth_fabric.js";
import { csr, mul, mulT } from "./reduced_sparse.js";

export { readModel } from "./reduced_model.js";

export const FLOOR_REACH = 1e-9;  // friction holds vertices this near the floor (m):
// cloth_step.py's reach without a contact object
export const GRIP_PULL = 100;  // the hand's spring: this x m / h^2 on each grip vertex,
// implicit. Explicit (in the prediction, stable to a few), a grip of 20 of the flag's
// vertices left its corner 0.69 m from a target 0.7 m up after 1 s at 0.5, 0.26 m at 4
// (implicit at 4: 0.24 m): the fabric's stiff terms hold a few vertices back. Implicit, a
// target 0.7 m across: 0.13 m at 20, 0.06 m at 100.
export const GRIP_REACH = 0.1;  // the grip: the free vertices this x the cloth's size from
// the vertex under the pointer, at rest (at least GRIP_LEAST): the spring pulls a patch, not
// a vertex the stiff fabric would hold back
export const GRIP_LEAST = 4;

export class ClothStepper {
  constructor(model) {
    const { values: v, arrays: a } = model;
    Object.assign(this, { values: v, arrays: a, h: v.step, k: v.constants || {} });
    this.mass = a.mass;
    this.M = a.mass.length;
    this.free = a.free;
    this.held = a.held;
    this.faces = a.sim_faces;
    this.G = csr(a, "stretch");
    this.L = csr(a, "laplacian");
    this.K = csr(a, "stiffness");
    this.w = new Float64Array(2 * a.stretch_weight.length);  // each row of F: its triangle's
    a.stretch_weight.forEach((w, t) => { this.w[2 * t] = w; this.w[2 * t + 1] = w; });
    this.bendWeight = a.bend_weight;
    this.restCurvature = a.rest_curvature;
    this.restNormals = a.rest_normals;
    [this.lo, this.hi] = v.strain_limit;
    this.iterations = v.iterations;
    this.g = Float64Array.from(v.gravity);
    this.windBase = Float64Array.from(v.wind);
    this.wind = Float64Array.from(v.wind);
    Object.assign(this, { gust: v.gust, air: v.air, skin: v.skin, hz: v.gust_hz,
                          friction: v.friction, ground: v.ground });
    this.shipped = { euler: shipped(a.euler_order, a.euler_band),
                     bdf2: shipped(a.bdf2_order, a.bdf2_band) };
    this.coupling = coupling(this.K, this.free, this.held);
    this.pinned = new Uint8Array(this.M);
    for (const i of this.held) this.pinned[i] = 1;
    this.carry = new Carry(v, a);
    this.stiffness = 1;  // the page's scale on the fabric's weights (its Young's modulus)
    this.gravityOn = 1;
    this.factors = null;  // { key, euler, bdf2 }: the page's own (a stiffness or a grip)
    this.pull = null;  // { grip, target (3), offset (3) }
    this.repel = false;  // the cheap self-repulsion (cloth_repel.js): the live page's on;
    // off, the steps are Python's contact-free ones (tests/interop/test_cloth_js.py)
    const M3 = 3 * this.M, R3 = 3 * this.G.rows;
    this.buf = { Fx: new Float64Array(R3), P: new Float64Array(R3), n: new Float64Array(M3),
                 B: new Float64Array(M3), pullG: new Float64Array(M3),
                 pullL: new Float64Array(M3), rhs: new Float64Array(3 * this.free.length),
                 zfree: new Float64Array(3 * this.free.length),
                 zheld: new Float64Array(3 * this.held.length),
                 couple: new Float64Array(3 * this.free.length), air: new Float64Array(M3) };
  }

  /** The state at the model's start (its rest, its start velocity); the first step from it
   * is Euler's. */
  start() {
    const a = this.arrays;
    return { x: Float64Array.from(a.sim_rest), v: Float64Array.from(a.start_velocity), t: 0,
             previous: null, steps: 0 };
  }

  /** The simulation positions at the clip's frame ``f`` (int16 over its bounding box). */
  clipPositions(f) {
    const a = this.arrays, M3 = 3 * this.M, q = a.clip_positions, out = new Float64Array(M3);
    for (let i = 0; i < M3; i++) {
      out[i] = a.clip_centre[i % 3] + q[f * M3 + i] * a.clip_scale[i % 3];
    }
    return out;
  }

  /** The state at the clip's frame ``f``, to step on from: its velocity the start's at
   * frame 0, else the last frame's travel over a frame's time. */
  clipState(f) {
    const x = this.clipPositions(f), fps = this.values.fps;
    let v = Float64Array.from(this.arrays.start_velocity);
    if (f > 0) {
      const before = this.clipPositions(f - 1);
      v = x.map((xi, i) => (xi - before[i]) * fps);
    }
    return { x, v, t: f / fps, previous: null, steps: 0 };
  }

  /** The factor of the global step's matrix for step length ``hh``: the shipped one, or
   * the page's own where the stiffness is not 1 or a grip's spring adds to its diagonal. */
  _factor(hh, euler) {
    const name = euler ? "euler" : "bdf2", pull = this.pull;
    if (this.stiffness === 1 && !pull) return this.shipped[name];
    const key = `${this.stiffness}|${pull ? pull.p : -1}`;
    if (!this.factors || this.factors.key !== key) {
      const f = (h, like) => factorBanded(this.K, this.free, this.mass, h, this.stiffness, like,
                                          pull && pull.k);
      this.factors = { key, euler: f(this.h, this.shipped.euler),
                       bdf2: f(2 * this.h / 3, this.shipped.bdf2) };
    }
    return this.factors[name];
  }

  /** One step of ``st`` (x, v, t, previous) on, in place. */
  step(st) {
    const M = this.M, h = this.h, m = this.mass, x = st.x, v = st.v;
    const fAir = airForce(x, v, st.t, this.faces, this, this.buf.air);
    let xb = x, vb = v, hh = h;
    if (st.previous) {  // BDF2: x' = xb + hh v', v' = vb + hh a' with hh = 2h/3
      const [xp, vp] = st.previous;
      xb = new Float64Array(3 * M);
      vb = new Float64Array(3 * M);
      for (let i = 0; i < 3 * M; i++) {
        xb[i] = (4 * x[i] - xp[i]) / 3;
        vb[i] = (4 * v[i] - vp[i]) / 3;
      }
      hh = 2 * h / 3;
    }
    const factor = this._factor(hh, !st.previous);
    const y = new Float64Array(3 * M), inertia = new Float64Array(3 * M);
    for (let i = 0; i < M; i++) {
      for (let c = 0; c < 3; c++) {
        const j = 3 * i + c;
        y[j] = xb[j] + hh * vb[j] + hh * hh * (this.gravityOn * this.g[c] + fAir[j] / m[i]);
      }
    }
    for (const i of this.held) for (let c = 0; c < 3; c++) y[3 * i + c] = x[3 * i + c];
    const repel = this.repel ? this._repel() : null;
    if (repel) repel.predict(x, y);  // (what would approach in it stops)
    for (let i = 0; i < M; i++) {
      const s = m[i] / (hh * hh);
      for (let c = 0; c < 3; c++) inertia[3 * i + c] = s * y[3 * i + c];
    }
    this._hand(x, inertia);
    let z = y;
    for (let it = 0; it < this.iterations; it++) z = this._global(z, inertia, factor);
    if (this.ground) {  // the floor
      for (let i = 1; i < 3 * M; i += 3) z[i] = Math.max(z[i], 0.0);
    }
    const vNew = new Float64Array(3 * M);
    for (let i = 0; i < 3 * M; i++) vNew[i] = (z[i] - xb[i]) / hh;
    this._friction(z, vNew, hh);
    let before = x;  // BDF2's history
    if (repel) {  // pushed apart, the history moved alike; approaching pairs stop
      before = repel.settle(x, z);
      if (repel.relax && (repel.stats.cut || before !== x)) {  // the fabric after it
        const settled = Float64Array.from(z), target = new Float64Array(3 * M);
        for (let i = 0; i < 3 * M; i++) target[i] = m[(i / 3) | 0] / (hh * hh) * z[i];
        this._hand(x, target);
        for (let k = 0; k < repel.relax; k++) z = this._global(z, target, factor);
        if (before === x) before = Float64Array.from(x);
        for (let i = 0; i < 3 * M; i++) before[i] += z[i] - settled[i];
      }
      repel.inelastic(z, vNew);
      if (this.ground) for (let i = 1; i < 3 * M; i += 3) z[i] = Math.max(z[i], 0.0);
    }
    if (!z.every(Number.isFinite)) throw new Error(`the motion diverged at ${st.t.toFixed(3)} s`);
    st.previous = [before, v];
    st.x = z;
    st.v = vNew;
    st.t += h;
    st.steps += 1;
  }

  /** The self-repulsion, made once. */
  _repel() {
    if (!this.repeller) {
      this.repeller = new Repel(this.faces, this.arrays.sim_rest, this.mass, this.pinned);
    }
    return this.repeller;
  }

  /** One local-global iteration from ``z``: the positions minimizing the step's quadratic
   * with every projection taken at ``z``. */
  _global(z, inertia, factor) {
    const b = this.buf, s = this.stiffness;
    mul(this.G, z, 3, b.Fx);
    clampStretch(b.Fx, this.lo, this.hi, b.P);
    vertexNormals(z, this.faces, b.n);
    turnCurvature(this.restCurvature, this.restNormals, b.n, b.B);
    for (let r = 0; r < b.P.length; r++) b.P[r] *= s * this.w[(r / 3) | 0];
    for (let r = 0; r < b.B.length; r++) b.B[r] *= s * this.bendWeight[(r / 3) | 0];
    b.pullG.fill(0);
    b.pullL.fill(0);
    mulT(this.G, b.P, 3, b.pullG);
    mulT(this.L, b.B, 3, b.pullL);
    this.held.forEach((i, q) => { for (let c = 0; c < 3; c++) b.zheld[3 * q + c] = z[3 * i + c]; });
    mul(this.coupling, b.zheld, 3, b.couple);
    this.free.forEach((i, q) => {
      for (let c = 0; c < 3; c++) {
        const j = 3 * i + c;
        b.rhs[3 * q + c] = inertia[j] + (b.pullG[j] + b.pullL[j]) - s * b.couple[3 * q + c];
      }
    });
    solveBanded(factor, b.rhs, b.zfree);
    const out = Float64Array.from(z);
    this.free.forEach((i, q) => {
      for (let c = 0; c < 3; c++) out[3 * i + c] = b.zfree[3 * q + c];
    });
    return out;
  }

  /** The velocities ``v`` of the free vertices on the floor (within FLOOR_REACH of it at
   * ``z``) with no rise (cloth does not bounce) and Coulomb friction's share taken: the
   * sliding speed less mu g hh, or all. */
  _friction(z, v, hh) {
    if (this.ground) {  // cloth does not bounce: no rise off the floor
      for (let i = 0; i < this.M; i++) {
        const j = 3 * i + 1;
        if (z[j] < FLOOR_REACH && !this.pinned[i]) v[j] = Math.min(v[j], 0.0);
      }
    }
    if (!(this.friction > 0)) return;
    const hold = this.friction * Math.max(-this.gravityOn * this.g[1], 0.0) * hh;
    for (let i = 0; i < this.M; i++) {
      if (!(z[3 * i + 1] < FLOOR_REACH) || this.pinned[i]) continue;
      const speed = Math.sqrt(v[3 * i] * v[3 * i] + v[3 * i + 2] * v[3 * i + 2]);
      const keep = Math.min(Math.max(1.0 - hold / Math.max(speed, 1e-30), 0.0), 1.0);
      v[3 * i] *= keep;
      v[3 * i + 2] *= keep;
    }
  }

  // -- the page's hand --------------------------------------------------------------------

  /** The free simulation vertices within GRIP_REACH x the cloth's size of welded vertex
   * ``p`` at rest, or its GRIP_LEAST nearest (a hand's grip); null where ``p`` is no cloth
   * (a fixed part). */
  grip(p) {
    if (this.gripOf === p) return this.gripped;
    const a = this.arrays, c = a.cloth_vertex[p], x = a.sim_rest;
    this.gripOf = p;
    this.gripped = null;
    if (c < 0) return null;
    const s = this.carry.proxy ? a.carry_index[c * a.carry_index.shape[1]] : c;
    if (this.size === undefined) {
      const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      x.forEach((xi, i) => {
        lo[i % 3] = Math.min(lo[i % 3], xi);
        hi[i % 3] = Math.max(hi[i % 3], xi);
      });
      this.size = Math.max(...hi.map((h, k) => h - lo[k]));
    }
    const near = [];
    for (let i = 0; i < this.M; i++) {
      if (this.pinned[i]) continue;
      near.push([Math.hypot(x[3 * i] - x[3 * s], x[3 * i + 1] - x[3 * s + 1],
                            x[3 * i + 2] - x[3 * s + 2]), i]);
    }
    near.sort((u, w) => u[0] - w[0]);
    let k = near.findIndex(([d]) => d > GRIP_REACH * this.size);
    k = Math.max(GRIP_LEAST, k < 0 ? near.length : k);
    this.gripped = near.length ? Int32Array.from(near.slice(0, k), ([, i]) => i) : null;
    return this.gripped;
  }

  /** The grip's mass-weighted mean of ``x`` (3). */
  _mean(grip, x) {
    const out = [0, 0, 0];
    let mass = 0;
    for (const i of grip) {
      mass += this.mass[i];
      for (let c = 0; c < 3; c++) out[c] += this.mass[i] * x[3 * i + c];
    }
    return out.map((s) => s / Math.max(mass, 1e-300));
  }

  /** Pull welded vertex ``p`` toward ``target`` (3, the model's frame) through its grip
   * (the grip's centre keeps its offset from the vertex at ``x``, the simulation positions,
   * where the pull starts); null ``p``: let go. */
  pullVertex(p, target, x) {
    if (p === null) { this.pull = null; return; }
    const grip = this.grip(p);
    if (!grip) { this.pull = null; return; }
    if (!this.pull || this.pull.p !== p) {
      const at = this.carry.welded(x), mean = this._mean(grip, x);
      const k = new Float64Array(this.M);
      for (const i of grip) k[i] = GRIP_PULL * this.mass[i] / (this.h * this.h);
      this.pull = { p, grip, k, offset: mean.map((m, c) => m - at[3 * p + c]) };
    }
    this.pull.target = Array.from(target, (t, c) => t + this.pull.offset[c]);
  }

  /** The hand's spring in the global step's right-hand side (``rhs``, 3M): each grip
   * vertex drawn by k_i toward where the move that takes the grip's centre at ``x`` to the
   * target takes it (its diagonal is in the factor). */
  _hand(x, rhs) {
    if (!this.pull) return;
    const { grip, target, k } = this.pull, at = this._mean(grip, x);
    for (const i of grip) {
      for (let c = 0; c < 3; c++) rhs[3 * i + c] += k[i] * (x[3 * i + c] + target[c] - at[c]);
    }
  }

  /** The velocity jump (3M) of a poke at welded vertex ``p``: its grip at ``dv`` (3, m/s). */
  impulse(p, dv) {
    const out = new Float64Array(3 * this.M), grip = this.grip(p);
    if (grip) for (const i of grip) for (let c = 0; c < 3; c++) out[3 * i + c] = dv[c];
    return out;
  }

  /** A velocity jump (3M) on the free vertices; the next step is Euler's. */
  push(st, dv) {
    for (let i = 0; i < this.M; i++) {
      if (this.pinned[i]) continue;
      for (let c = 0; c < 3; c++) st.v[3 * i + c] += dv[3 * i + c];
    }
    st.previous = null;
  }

  /** The welded surface's vertices (N * 3) at simulation positions ``x``. */
  positions(x) { return this.carry.welded(x); }
}

/** Integrate ``seconds`` from the model's start (or the state ``st``, a clip's frame) ->
 * the welded surface's vertices (N * 3 floats, metres) at each frame, the first at the
 * start. */
export function integrate(stepper, seconds, st = stepper.start()) {
  const v = stepper.values, t0 = st.t;
  const frames = [stepper.positions(st.x)];
  const count = Math.floor(seconds * v.fps + 1e-9);
  for (let fi = 1; fi <= count; fi++) {
    for (let s = 0; s < v.substeps; s++) {
      st.t = t0 + ((fi - 1) * v.substeps + s) * v.step;
      stepper.step(st);
    }
    frames.push(stepper.positions(st.x));
  }
  return { frames, steps: st.steps, iterations: v.iterations };
}
