// The broad phase of the page's cloth self-repulsion (cloth_repel.js): the vertex-triangle
// pairs of a simulation mesh whose boxes meet as the cloth moves from x to z, found in a
// uniform grid rebuilt each call (allocation-light: its arrays grow and are kept), and the
// plane and barycentric geometry the narrow phase reads. Positions: Float64Array(3M).

const CELLS = 64;  // the grid has at most this x M cells (wider cells where it would have more)

export class Sweep {
  /** ``faces`` (3F) over ``M`` vertices. */
  constructor(faces, M) {
    Object.assign(this, { faces, M, F: faces.length / 3 });
    this.box = new Float64Array(6 * M);  // each vertex's sweep: lo (3), hi (3)
    this.stamp = new Int32Array(M);
    this.start = new Int32Array(2);  // each cell's first entry (then the next cell's)
    this.fill = new Int32Array(2);
    this.entries = new Int32Array(2);  // the vertices whose sweep boxes meet each cell
    this.lo = new Float64Array(3);
    this.hi = new Float64Array(3);
    this.tb = new Float64Array(6);
  }

  /** ``visit(p, t, x, z)`` for each vertex p and triangle t, not one of t's vertices, whose
   * sweep boxes (from ``x`` to ``z``; t's the union of its vertices', grown by ``r``) meet,
   * once each, in a grid of cells 2r wide. */
  pairs(x, z, r, visit) {
    const n = this._grid(x, z, 2 * r), { n0, n1, n2, inv } = n, l0 = n.lo[0], l1 = n.lo[1];
    const l2 = n.lo[2], f = this.faces, box = this.box, tb = this.tb, start = this.start;
    const entries = this.entries, stamp = this.stamp;
    stamp.fill(-1);
    for (let t = 0; t < this.F; t++) {
      const a = 6 * f[3 * t], b = 6 * f[3 * t + 1], c = 6 * f[3 * t + 2];
      for (let k = 0; k < 3; k++) {
        let l = box[a + k], h = box[a + 3 + k];
        if (box[b + k] < l) l = box[b + k];
        if (box[c + k] < l) l = box[c + k];
        if (box[b + 3 + k] > h) h = box[b + 3 + k];
        if (box[c + 3 + k] > h) h = box[c + 3 + k];
        tb[k] = l - r;
        tb[3 + k] = h + r;
      }
      const i0 = cellOf(tb[0], l0, inv, n0), i1 = cellOf(tb[3], l0, inv, n0);
      const j0 = cellOf(tb[1], l1, inv, n1), j1 = cellOf(tb[4], l1, inv, n1);
      const k0 = cellOf(tb[2], l2, inv, n2), k1 = cellOf(tb[5], l2, inv, n2);
      for (let i = i0; i <= i1; i++) {
        for (let j = j0; j <= j1; j++) {
          const row = (i * n1 + j) * n2;
          for (let e = start[row + k0], end = start[row + k1 + 1]; e < end; e++) {
            const p = entries[e], o = 6 * p;
            if (stamp[p] === t) continue;
            stamp[p] = t;
            if (p === f[3 * t] || p === f[3 * t + 1] || p === f[3 * t + 2]) continue;
            if (box[o] <= tb[3] && box[o + 3] >= tb[0] && box[o + 1] <= tb[4]
                && box[o + 4] >= tb[1] && box[o + 2] <= tb[5] && box[o + 5] >= tb[2]) {
              visit(p, t, x, z);
            }
          }
        }
      }
    }
  }

  /** The vertices' sweep boxes and the grid over them (cells ``cell`` wide, or wider): each
   * cell's vertices, entries[start[c] .. start[c + 1]]. */
  _grid(x, z, cell) {
    const M = this.M, box = this.box, lo = this.lo, hi = this.hi;
    lo.fill(Infinity);
    hi.fill(-Infinity);
    for (let i = 0; i < M; i++) {
      for (let c = 0; c < 3; c++) {
        const u = x[3 * i + c], v = z[3 * i + c], l = u < v ? u : v, h = u < v ? v : u;
        box[6 * i + c] = l;
        box[6 * i + 3 + c] = h;
        if (l < lo[c]) lo[c] = l;
        if (h > hi[c]) hi[c] = h;
      }
    }
    let n0, n1, n2;
    for (;;) {
      n0 = Math.floor((hi[0] - lo[0]) / cell) + 1;
      n1 = Math.floor((hi[1] - lo[1]) / cell) + 1;
      n2 = Math.floor((hi[2] - lo[2]) / cell) + 1;
      if (n0 * n1 * n2 <= CELLS * M || !Number.isFinite(cell)) break;
      cell *= 1.5;
    }
    const inv = 1 / cell, n = n0 * n1 * n2;
    if (this.start.length < n + 1) this.start = new Int32Array(2 * n + 1);
    if (this.fill.length < n) this.fill = new Int32Array(2 * n);
    const start = this.start, fill = this.fill;
    start.fill(0, 0, n + 1);
    let total = 0;
    for (let pass = 0; pass < 2; pass++) {  // count, then place
      for (let i = 0; i < M; i++) {
        const o = 6 * i, i0 = ((box[o] - lo[0]) * inv) | 0, i1 = ((box[o + 3] - lo[0]) * inv) | 0;
        const j0 = ((box[o + 1] - lo[1]) * inv) | 0, j1 = ((box[o + 4] - lo[1]) * inv) | 0;
        const k0 = ((box[o + 2] - lo[2]) * inv) | 0, k1 = ((box[o + 5] - lo[2]) * inv) | 0;
        for (let a = i0; a <= i1; a++) {
          for (let b = j0; b <= j1; b++) {
            for (let c = (a * n1 + b) * n2 + k0, e = c + k1 - k0; c <= e; c++) {
              if (pass === 0) { start[c + 1]++; total++; } else this.entries[fill[c]++] = i;
            }
          }
        }
      }
      if (pass === 0) {
        for (let c = 0; c < n; c++) start[c + 1] += start[c];
        if (this.entries.length < total) this.entries = new Int32Array(2 * total);
        fill.set(start.subarray(0, n));
      }
    }
    return { n0, n1, n2, inv, lo };
  }
}

/** Each triangle's unit normal and offset (n . a) at ``x`` into ``out`` (4F). */
export function planes(x, faces, out) {
  for (let t = 0, o = 0; t < faces.length; t += 3, o += 4) {
    const A = 3 * faces[t], B = 3 * faces[t + 1], C = 3 * faces[t + 2];
    const u0 = x[B] - x[A], u1 = x[B + 1] - x[A + 1], u2 = x[B + 2] - x[A + 2];
    const v0 = x[C] - x[A], v1 = x[C + 1] - x[A + 1], v2 = x[C + 2] - x[A + 2];
    const n0 = u1 * v2 - u2 * v1, n1 = u2 * v0 - u0 * v2, n2 = u0 * v1 - u1 * v0;
    const l = Math.sqrt(n0 * n0 + n1 * n1 + n2 * n2) || 1;
    out[o] = n0 / l;
    out[o + 1] = n1 / l;
    out[o + 2] = n2 / l;
    out[o + 3] = (n0 * x[A] + n1 * x[A + 1] + n2 * x[A + 2]) / l;
  }
}

/** p's projection on the plane of (a, b, c) in ``x``: its barycentric coordinates into
 * ``out``; whether each is at least -``margin``. */
export function barycentric(x, p, a, b, c, out, margin) {
  const A = 3 * a, B = 3 * b, C = 3 * c, P = 3 * p;
  const u0 = x[B] - x[A], u1 = x[B + 1] - x[A + 1], u2 = x[B + 2] - x[A + 2];
  const v0 = x[C] - x[A], v1 = x[C + 1] - x[A + 1], v2 = x[C + 2] - x[A + 2];
  const w0 = x[P] - x[A], w1 = x[P + 1] - x[A + 1], w2 = x[P + 2] - x[A + 2];
  const uu = u0 * u0 + u1 * u1 + u2 * u2, uv = u0 * v0 + u1 * v1 + u2 * v2;
  const vv = v0 * v0 + v1 * v1 + v2 * v2;
  const wu = w0 * u0 + w1 * u1 + w2 * u2, wv = w0 * v0 + w1 * v1 + w2 * v2;
  const det = uu * vv - uv * uv;
  if (!(det > 0)) return false;
  const s = (vv * wu - uv * wv) / det, t = (uu * wv - uv * wu) / det;
  out[0] = 1 - s - t;
  out[1] = s;
  out[2] = t;
  return out[0] >= -margin && s >= -margin && t >= -margin;
}

/** The cell (0 .. n - 1) of coordinate ``v`` in a grid from ``lo``, 1/``inv`` a cell. */
function cellOf(v, lo, inv, n) {
  const i = Math.floor((v - lo) * inv);
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}
