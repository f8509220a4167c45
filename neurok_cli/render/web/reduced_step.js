// The reduced model's Stepper: what it reads from the model, its state, one implicit BDF2
// step, and the page's hand (a grip's pull and push). Its other methods live by concern in
// reduced_elastic.js, reduced_potential.js, reduced_contact.js, reduced_precondition.js and
// reduced_minimize.js, installed on its prototype below.

import { contact } from "./reduced_contact.js";
import { cholesky, dense } from "./reduced_dense.js";
import { elastic } from "./reduced_elastic.js";
import { minimizer } from "./reduced_minimize.js";
import { potential } from "./reduced_potential.js";
import { preconditioner } from "./reduced_precondition.js";
import { basisRows, csr, mul, mulT, take } from "./reduced_sparse.js";

// -- the step -------------------------------------------------------------------------------

export class Stepper {
  constructor(model) {
    const { values: v, arrays: a } = model;
    this.values = v;
    this.arrays = a;
    const H = v.handles, H4 = 4 * H;
    this.H = H;
    this.H4 = H4;
    this.n = v.vertices;
    this.h = v.step;
    this.k = v.constants;
    this.size = v.size;
    this.weight = v.weight;
    this.beta = v.damping;
    this.solid = v.solid;
    this.law = v.law;
    this.rest = a.rest;
    this.centres = a.centres;
    const K = (name) => a[`${name}_index`].shape[1];
    this.vertexRows = basisRows(a.skin_index, a.skin_weight, K("skin"), a.rest, a.centres);
    if (!a.material_rest) {  // a sheet: its vertices carry the mass
      Object.assign(a, { material_rest: a.rest, material_index: a.skin_index,
                         material_weight: a.skin_weight });
    }
    this.massRows = basisRows(a.material_index, a.material_weight, K("material"),
                              a.material_rest, a.centres);
    this.M = a.mass_matrix;
    this.N = a.free;
    this.r = a.free.shape[1];
    const pm = a.point_mass, g = v.gravity;
    const weighted = new Float64Array(pm.length * 3);
    for (let i = 0; i < pm.length; i++) {
      for (let c = 0; c < 3; c++) weighted[3 * i + c] = pm[i] * g[c];
    }
    this.gravity = mulT(this.massRows, weighted, 3, new Float64Array(H4 * 3));
    this.elements = v.elements === "operator" ? csr(a, "elements") : this._operator();
    this.F0 = a.elements_rest;
    this.d = a.elements_rest.shape[2];
    this.measure = a.elements_measure;
    this.E = this.measure.length;
    this.patches = null;
    if (this.law.patches > 0) {  // a cloth's stretch, part of it on patches' mean strain
      const index = a.patches_index, weight = a.patches_weight, k = index.shape[1];
      const A = new Float64Array(H);
      for (let e = 0; e < this.E; e++) {
        for (let q = 0; q < k; q++) A[index[e * k + q]] += this.measure[e] * weight[e * k + q];
      }
      this.patches = { share: this.law.patches, index, weight, k, A };
    }
    this.K0 = this._restHessian();
    this.bending = null;
    if (a.laplacian_data) {
      const L = csr(a, "laplacian");
      this.bending = { L, invArea: a.bending_inv_area, Q: a.bending_hessian,
                       rigidity: v.bending.rigidity, rest: mul(L, a.rest, 3) };
    }
    this.touch = null;
    if (a.touch_data) {
      const T = csr(a, "touch");
      const touchRest = mul(T, a.rest, 3);
      // the vertices first (their own rows), then the points between them
      const more = basisRows(a.touch_handles_index, a.touch_handles_weight, K("touch_handles"),
                             touchRest.subarray(3 * this.n), a.centres);
      const own = this.vertexRows, cut = own.indptr[this.n];
      const rows = { indptr: new Int32Array(T.rows + 1), rows: T.rows, cols: own.cols,
                     indices: new Int32Array(cut + more.indptr[more.rows]),
                     data: new Float64Array(cut + more.indptr[more.rows]) };
      rows.indptr.set(own.indptr);
      for (let i = 1; i <= more.rows; i++) rows.indptr[this.n + i] = cut + more.indptr[i];
      rows.indices.set(own.indices);
      rows.indices.set(more.indices, cut);
      rows.data.set(own.data);
      rows.data.set(more.data, cut);
      this.touch = { T, rest: touchRest, k: a.touch_stiffness, rows };
    }
    this.friction = v.friction;
    this.air = v.air;
    this.windBase = Float64Array.from(v.wind);
    this.wind = Float64Array.from(v.wind);
    this.gust = v.gust;
    this.airIndex = a.air_index;
    this.airWeight = a.air_weight;
    this.airFaces = a.air_faces;
    this.airRows = take(this.vertexRows, a.air_index);
    // the vertices air reads (its points and their triangles'): a step moves only these
    const seen = new Uint8Array(this.n);
    for (const i of a.air_faces) seen[i] = 1;
    for (const i of a.air_index) seen[i] = 1;
    const verts = [];
    seen.forEach((on, i) => { if (on) verts.push(i); });
    this.airVerts = Int32Array.from(verts);
    this.airVertRows = take(this.vertexRows, this.airVerts);
    this.xAir = new Float64Array(3 * this.n);
    this.vAir = new Float64Array(3 * this.n);
    // the lagged rotations' data: the handles' weights over the material's points
    const P = a.material_rest.length / 3, km = K("material");
    const mass = new Float64Array(H), mc = new Float64Array(H * 3), sq = new Float64Array(H);
    for (let p = 0; p < P; p++) {
      for (let s = 0; s < km; s++) {
        const w = a.material_weight[p * km + s];
        if (w === 0) continue;
        const hh = a.material_index[p * km + s];
        mass[hh] += w;
        for (let c = 0; c < 3; c++) {
          mc[3 * hh + c] += w * a.material_rest[3 * p + c];
          sq[hh] += w * a.material_rest[3 * p + c] ** 2;
        }
      }
    }
    this.materialCentres = mc;
    this.materialSpread = new Float64Array(H);
    for (let hh = 0; hh < H; hh++) {
      const m = Math.max(mass[hh], 1e-30);
      let c2 = 0;
      for (let c = 0; c < 3; c++) { mc[3 * hh + c] /= m; c2 += mc[3 * hh + c] ** 2; }
      this.materialSpread[hh] = 1e-2 * Math.max(sq[hh] - m * c2, 1e-30);
    }
    this.materialRest = a.material_rest;
    this.materialIndex = a.material_index;
    this.materialWeight = a.material_weight;
    this.km = km;
    const MN = dense(this.M, this.N, H4, H4, this.r);  // N^T M N, its Cholesky factor
    const Mn = dense(this.N, MN, this.r, H4, this.r, true);
    this.massFactor = cholesky(Mn, this.r);
    this.stiffness = 1;  // the page's scale on the material's Young's modulus
    this.lazy = 0;  // steps a factor is kept at least though the handles turn or the object
    // slides (animate's steps: 0; the live page trades a few iterations for fewer factors)
    this.gravityOn = 1;
    this.pull = null;  // { rows (1, 4H), rest (3), target (3), k }
    this.Rh = new Float64Array(H * 9);
    for (let hh = 0; hh < H; hh++) this.Rh.set([1, 0, 0, 0, 1, 0, 0, 0, 1], 9 * hh);
    this.bend = { b: new Float64Array(H4 * 3), c: 0 };
    this.factor = null;
    this.factorKey = null;
    this.factorR = Float64Array.from(this.Rh);
  }

  /** A state at ``Z`` moving at ``V`` (default: at rest, at the model's start velocity)
   * at time ``t``; the first step from it is Euler's. */
  start(Z = null, V = null, t = 0) {
    const Z0 = Z ? Float64Array.from(Z) : new Float64Array(this.H4 * 3);
    const V0 = Float64Array.from(V || this.arrays.start_velocity);
    return { Z: Z0, V: V0, t, previous: null, steps: 0, iterations: 0 };
  }

  /** The vertices' velocities (N * 3) at coordinate velocities V. */
  velocities(V) { return mul(this.vertexRows, V, 3); }

  positions(Z) {
    const x = mul(this.vertexRows, Z, 3);
    for (let i = 0; i < x.length; i++) x[i] += this.rest[i];
    return x;
  }

  // -- one step ---------------------------------------------------------------------------

  /** One step of ``state`` (Z, V, t, previous) on, in place. */
  step(st) {
    const H4 = this.H4, n3 = 3 * H4, h = this.h;
    if (this.air !== 0) {  // the air's vertices now
      const x = mul(this.airVertRows, st.Z, 3), v = mul(this.airVertRows, st.V, 3);
      this.airVerts.forEach((i, q) => {
        for (let c = 0; c < 3; c++) {
          this.xAir[3 * i + c] = this.rest[3 * i + c] + x[3 * q + c];
          this.vAir[3 * i + c] = v[3 * q + c];
        }
      });
    }
    const fAir = this.airForce(this.xAir, this.vAir, st.t);
    const fExt = mulT(this.airRows, fAir, 3, new Float64Array(n3));
    for (let i = 0; i < n3; i++) fExt[i] += this.gravityOn * this.gravity[i];
    let Zb, Vb;
    if (!st.previous) {
      Zb = st.Z;
      Vb = st.V;
      this.hh = h;
    } else {
      const [Zp, Vp] = st.previous;
      Zb = new Float64Array(n3);
      Vb = new Float64Array(n3);
      for (let i = 0; i < n3; i++) {
        Zb[i] = (4 * st.Z[i] - Zp[i]) / 3;
        Vb[i] = (4 * st.V[i] - Vp[i]) / 3;
      }
      this.hh = 2 * h / 3;
    }
    const hh = this.hh, acc = this.accelerate(fExt);
    const Zt = new Float64Array(n3);
    for (let i = 0; i < n3; i++) Zt[i] = Zb[i] + hh * Vb[i] + hh * hh * acc[i];
    let contact = null, active = new Uint8Array(0);
    if (this.touch) {
      [contact, active] = this._contact(st.Z, st.V);
    }
    const key = `${hh}|${this.pull ? 1 : 0}`;
    const moved = !this.factorActive || active.length !== this.factorActive.length ||
      active.some((on, i) => on !== this.factorActive[i]);  // the contact set changed
    this.rotations(st.Z);
    const sliding = contact && contact.friction && contact.friction.length > 0;
    this.sinceFactor = (this.sinceFactor || 0) + 1;
    const stale = (sliding || this._turned() > this.k.turn) && this.sinceFactor > this.lazy;
    if (!this.factor || key !== this.factorKey || moved || stale) {
      this._factor(contact);
      this.factorKey = key;
      this.factorActive = active;
      this.sinceFactor = 0;
    }
    const [Znew, iters] = this._minimize(Zb, Zt, contact);
    const Vnew = new Float64Array(n3);
    for (let i = 0; i < n3; i++) Vnew[i] = (Znew[i] - Zb[i]) / hh;
    if (!Znew.every(Number.isFinite)) {
      throw new Error(`the motion diverged at ${st.t.toFixed(3)} s`);
    }
    st.previous = [st.Z, st.V];
    st.Z = Znew;
    st.V = Vnew;
    st.t += h;
    st.steps += 1;
    st.iterations += iters;
  }

  /** The mass points nearest vertex ``p`` at rest (a solid's lattice nodes, a sheet's
   * vertices): a hand's grip. A surface vertex's own row reaches directions that carry
   * almost no mass in a solid (a poke there gave one vertex 60 m/s and the motion blew up),
   * as deform/own/motion.py: _push says. */
  _grip(p) {
    if (this.gripOf === p) return this.grip;  // (a drag asks again at every move)
    const P = this.materialRest.length / 3, x = this.rest, m = this.materialRest;
    const k = Math.min(P, Math.max(4, Math.min(64, Math.round(P / 64))));
    const d = Array.from({ length: P }, (_, i) => [Math.hypot(m[3 * i] - x[3 * p],
      m[3 * i + 1] - x[3 * p + 1], m[3 * i + 2] - x[3 * p + 2]), i]);
    d.sort((a, b) => a[0] - b[0]);
    this.gripOf = p;
    this.grip = d.slice(0, k).map(([, i]) => i);
    return this.grip;
  }

  /** Pull the grip at vertex ``p`` (its mass points' mean) toward where ``target`` (3,
   * metres) puts the vertex, with a spring of ``k`` N/m, at coordinates ``Z`` (null p:
   * let go); the preconditioner takes the spring at the next step. */
  pullVertex(p, target, k, Z) {
    if (p === null) { this.pull = null; return; }
    const grip = this._grip(p), w = new Float64Array(grip.length).fill(1 / grip.length);
    const rows = take(this.massRows, grip);
    for (let i = 0; i < rows.rows; i++) {
      for (let q = rows.indptr[i]; q < rows.indptr[i + 1]; q++) rows.data[q] *= w[i];
    }
    const mean = { indptr: Int32Array.of(0, rows.indptr[rows.rows]), indices: rows.indices,
                   data: rows.data, rows: 1, cols: rows.cols };  // (one row: their sum)
    const rest = [0, 1, 2].map((c) => grip.reduce((s, i) => s + this.materialRest[3 * i + c], 0) /
                               grip.length);
    // the grip keeps where it is from the vertex: the target moves by the same
    const at = mul(mean, Z, 3), own = mul(take(this.vertexRows, [p]), Z, 3);
    const off = [0, 1, 2].map((c) => at[c] + rest[c] - own[c] - this.rest[3 * p + c]);
    this.pull = { rows: mean, rest, target: Float64Array.from(target, (t, c) => t + off[c]), k };
  }

  /** The momentum (4H, 3) of a push at vertex ``p``: its grip's mass points at velocity
   * ``v`` (3, m/s), as ``--push`` moves a region (deform/own/motion.py: _push). */
  impulse(p, v) {
    const grip = this._grip(p), pm = this.arrays.point_mass;
    const rows = take(this.massRows, grip), f = new Float64Array(3 * grip.length);
    grip.forEach((i, q) => { for (let c = 0; c < 3; c++) f[3 * q + c] = pm[i] * v[c]; });
    return mulT(rows, f, 3, new Float64Array(this.H4 * 3));
  }

  /** The state at the clip's frame ``f`` (its coordinates and velocities, float32), to step
   * on from. */
  clipState(f) {
    const a = this.arrays, n3 = this.H4 * 3;
    const Z = a.clip_coords.subarray(f * n3, (f + 1) * n3);
    const V = a.clip_velocities.subarray(f * n3, (f + 1) * n3);
    return this.start(Z, V, f / this.values.fps);
  }

  /** A velocity jump from a momentum (4H, 3) on the coordinates; the next step is Euler's. */
  push(st, momentum) {
    const dv = this.accelerate(momentum);
    for (let i = 0; i < dv.length; i++) st.V[i] += dv[i];
    st.previous = null;
  }
}

// the methods the other modules hold, the class's own (a name defined twice is an error)
for (const methods of [elastic, potential, contact, preconditioner, minimizer]) {
  for (const name of Object.keys(methods)) {
    if (name in Stepper.prototype) throw new Error(`Stepper.${name}: defined twice`);
  }
  Object.assign(Stepper.prototype, methods);
}
