// The Stepper's ground contact and friction (reduced_step.js installs these methods): the
// vertices' grid cells that bound where they can be, the ground's candidate points and the
// normal forces they carry, the penalty and smoothed friction's energy, and the refactor
// with the contact as it stands.

import { mul, mulT, take } from "./reduced_sparse.js";

// -- contact ----------------------------------------------------------------------------

export const contact = {
  /** The vertices in cells of a grid over their rest (at most 8 a side), each cell's box
   * and the handles that move it: bounds on where a cell can be (_nearClusters). */
  _clusters() {
    const n = this.n, x = this.rest, R = this.vertexRows;
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < 3; c++) {
        lo[c] = Math.min(lo[c], x[3 * i + c]);
        hi[c] = Math.max(hi[c], x[3 * i + c]);
      }
    }
    const side = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 8 || 1;
    const dims = [0, 1, 2].map((c) => Math.max(1, Math.ceil((hi[c] - lo[c]) / side + 1e-9)));
    const cells = new Map();
    this.cellOf = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = [0, 1, 2].map((c) => Math.min(dims[c] - 1,
                                              Math.floor((x[3 * i + c] - lo[c]) / side)));
      const key = (k[0] * dims[1] + k[1]) * dims[2] + k[2];
      if (!cells.has(key)) {
        cells.set(key, { box: [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity],
                         handles: new Set() });
      }
      const cl = cells.get(key);
      for (let c = 0; c < 3; c++) {
        cl.box[c] = Math.min(cl.box[c], x[3 * i + c]);
        cl.box[3 + c] = Math.max(cl.box[3 + c], x[3 * i + c]);
      }
      for (let p = R.indptr[i]; p < R.indptr[i + 1]; p++) cl.handles.add(R.indices[p] >> 2);
      this.cellOf[i] = key;
    }
    const list = [...cells.entries()];
    const id = new Map(list.map(([key], j) => [key, j]));
    for (let i = 0; i < n; i++) this.cellOf[i] = id.get(this.cellOf[i]);
    const rows = list.map(() => []), TT = this.touch.T;  // the ground's points on each cell
    for (let i = 0; i < TT.rows; i++) {
      for (let p = TT.indptr[i]; p < TT.indptr[i + 1]; p++) {
        rows[this.cellOf[TT.indices[p]]].push(i);
      }
    }
    this.cells = list.map(([, cl], j) => ({ box: cl.box, handles: Int32Array.from(cl.handles),
                                            rows: Int32Array.from(new Set(rows[j])) }));
  },

  /** (cells,) 1 where a cell's vertices may reach the ground's candidates this step: its
   * box's lowest height under the least its handles' affine maps can give, against their
   * fastest fall (exact bounds: the weights are a partition of unity, non-negative; a cell
   * far above is skipped, its vertices not read). */
  _nearClusters(Z, V) {
    if (!this.cells) this._clusters();
    const c = this.centres, size = this.size, out = new Uint8Array(this.cells.length);
    const margin = 1e-9 * size;
    this.cells.forEach((cl, k) => {
      const b = cl.box;
      let low = Infinity, slow = Infinity;  // the least height change, the least speed up
      for (const hh of cl.handles) {
        let g = Z[(4 * hh + 3) * 3 + 1], gv = V[(4 * hh + 3) * 3 + 1];
        for (let j = 0; j < 3; j++) {
          const a = Z[(4 * hh + j) * 3 + 1], av = V[(4 * hh + j) * 3 + 1];
          const l = b[j] - c[3 * hh + j], u = b[3 + j] - c[3 * hh + j];
          g += Math.min(a * l, a * u);
          gv += Math.min(av * l, av * u);
        }
        low = Math.min(low, g);
        slow = Math.min(slow, gv);
      }
      const fall = 2 * this.h * Math.max(-slow, 0);
      out[k] = b[1] + low - margin * (1 + Math.abs(low)) < fall + this.k.reach * size ? 1 : 0;
    });
    return out;
  },

  /** The ground's candidates at Z, V: the points near enough to reach it (their fall over
   * two steps, and a margin), with the normal forces they carry now -> [contact or null,
   * the points touching (C,)]. Heights alone (a third of the positions), summed as the
   * Python step sums them: the vertices' (rest + rows Z), then the touch rows over them
   * (another order flipped a point's touching flag at the teapot's landing, and its
   * unconverged step went elsewhere). */
  _contact(Z, V) {
    const T = this.touch, C = T.rows.rows, h = this.h, size = this.size, R = this.vertexRows;
    const n = this.n, near = this._nearClusters(Z, V);
    const xy = this.xy || (this.xy = new Float64Array(n));  // the vertices' heights and
    const vy = this.vy || (this.vy = new Float64Array(n));  // upward speeds, where read
    const stamp = this.stamp || (this.stamp = new Int32Array(n));
    const now = (this.stampNow = (this.stampNow || 0) + 1);
    const height = (i) => {
      if (stamp[i] === now) return;
      stamp[i] = now;
      let s = 0, sv = 0;
      for (let p = R.indptr[i]; p < R.indptr[i + 1]; p++) {
        const a = 3 * R.indices[p] + 1;
        s += R.data[p] * Z[a];
        sv += R.data[p] * V[a];
      }
      xy[i] = this.rest[3 * i + 1] + s;
      vy[i] = sv;
    };
    const index = [], active = new Uint8Array(C), yAt = new Float64Array(C), TT = T.T;
    const seen = this.rowStamp || (this.rowStamp = new Int32Array(C)), read = [];
    this.cells.forEach((cl, k) => {  // the points on near cells (a point between far
      if (!near[k]) return;  // vertices is far: it is their mean)
      for (const i of cl.rows) if (seen[i] !== now) { seen[i] = now; read.push(i); }
    });
    read.sort((a, b) => a - b);  // (in order: the candidates as the Python step lists them)
    for (const i of read) {
      let y = 0, yd = 0;
      for (let p = TT.indptr[i]; p < TT.indptr[i + 1]; p++) {
        height(TT.indices[p]);
        y += TT.data[p] * xy[TT.indices[p]];
        yd += TT.data[p] * vy[TT.indices[p]];
      }
      const fall = 2 * h * Math.max(-yd, 0);
      if (y < fall + this.k.reach * size) index.push(i);
      active[i] = y - fall < this.k.penetration * size * 0.5 ? 1 : 0;
      yAt[i] = y;
    }
    if (!index.length) return [null, active];
    const m = index.length;
    const vx = this.vx || (this.vx = new Float64Array(n));  // the candidates' vertices'
    const vz = this.vz || (this.vz = new Float64Array(n));  // horizontal velocities
    for (const i of index) {
      for (let p = TT.indptr[i]; p < TT.indptr[i + 1]; p++) {
        const v = TT.indices[p];
        let sx = 0, sz = 0;
        for (let q = R.indptr[v]; q < R.indptr[v + 1]; q++) {
          sx += R.data[q] * V[3 * R.indices[q]];
          sz += R.data[q] * V[3 * R.indices[q] + 2];
        }
        vx[v] = sx;
        vz[v] = sz;
      }
    }
    const ct = { rows: take(T.rows, index), k: new Float64Array(m), close: new Uint8Array(m),
                 yRest: new Float64Array(m) };
    const lam = new Float64Array(m), slide = new Float64Array(m);
    index.forEach((i, q) => {
      ct.k[q] = T.k[i];
      ct.close[q] = active[i];
      ct.yRest[q] = T.rest[3 * i + 1];
      lam[q] = T.k[i] * Math.max(-yAt[i], 0);
      let sx = 0, sz = 0;
      for (let p = TT.indptr[i]; p < TT.indptr[i + 1]; p++) {
        sx += TT.data[p] * vx[TT.indices[p]];
        sz += TT.data[p] * vz[TT.indices[p]];
      }
      slide[q] = this.hh * Math.hypot(sx, sz);
    });
    ct.friction = null;
    if (this.friction > 0) {
      const touching = [];
      for (let q = 0; q < m; q++) if (this.friction * lam[q] > 0) touching.push(q);
      ct.rowsF = take(ct.rows, touching);
      ct.friction = Float64Array.from(touching, (q) => this.friction * lam[q]);
      ct.slide = Float64Array.from(touching, (q) => slide[q]);
    }
    return [ct, active];
  },

  _contactEnergy(ct, Z, Zn, grad) {
    const n = ct.rows.rows, eps = this.k.slip * this.hh;
    const y = this._lift(ct, Z);
    const force = new Float64Array(n);
    let val = 0;
    for (let i = 0; i < n; i++) {
      const pen = Math.min(ct.yRest[i] + y[i], 0);
      val += 0.5 * ct.k[i] * pen * pen;
      force[i] = ct.k[i] * pen;
    }
    const gy = mulT(ct.rows, force, 1, new Float64Array(this.H4));
    for (let a = 0; a < this.H4; a++) grad[3 * a + 1] += gy[a];
    if (ct.friction && ct.friction.length) {
      const dZ = new Float64Array(Z.length);
      for (let i = 0; i < Z.length; i++) dZ[i] = Z[i] - Zn[i];
      const ut = mul(ct.rowsF, dZ, 3);
      const ft = new Float64Array(ut.length);
      for (let i = 0; i < ct.friction.length; i++) {
        const u0 = ut[3 * i], u1 = ut[3 * i + 2], st = Math.hypot(u0, u1);
        const lo = st < eps;
        const f0 = lo ? -(st ** 3) / (3 * eps * eps) + st * st / eps + eps / 3 : st;
        const f1 = lo ? -(st * st) / (eps * eps) + 2 * st / eps : 1;
        val += ct.friction[i] * f0;
        const coef = ct.friction[i] * f1 / Math.max(st, 1e-30);
        ft[3 * i] = coef * u0;
        ft[3 * i + 2] = coef * u1;
      }
      mulT(ct.rowsF, ft, 3, grad);
    }
    return val;
  },

  /** The contact's candidates' heights over their rest at Z (their rows of Z's y column). */
  _lift(ct, Z) {
    const zy = new Float64Array(this.H4);
    for (let a = 0; a < this.H4; a++) zy[a] = Z[3 * a + 1];
    return mul(ct.rows, zy, 1);
  },

  /** Refactor with the contact as it stands at Z: the points pushing into the ground, and
   * friction's curvature at how far each has slid in the step. */
  _refresh(ct, Z, Zn) {
    const y = this._lift(ct, Z);
    for (let i = 0; i < ct.rows.rows; i++) ct.close[i] = ct.yRest[i] + y[i] < 0 ? 1 : 0;
    if (ct.friction && ct.friction.length) {
      const dZ = new Float64Array(Z.length);
      for (let i = 0; i < Z.length; i++) dZ[i] = Z[i] - Zn[i];
      const ut = mul(ct.rowsF, dZ, 3);
      for (let i = 0; i < ct.friction.length; i++) {
        ct.slide[i] = Math.hypot(ut[3 * i], ut[3 * i + 2]);
      }
    }
    this._factor(ct);
    this.factorActive = null;  // (the next step factors afresh)
  },
};
