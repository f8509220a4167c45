// A cloth's global step, in the page (docs/reduced-model.md, "Cloth"): the matrix
// A = M / hh^2 + K over the free vertices as the banded Cholesky factor that
// deform/own/banded.py: BandedCholesky.page_form ships (A[order][:, order] = L L^T, L lower-banded,
// band[i, k] = L[i, i - k]), its solves, and the page's own factor of the same matrix with
// the fabric's weights scaled (the stiffness control), in the same order and band.

/** The factor as the model ships it: { order (n,), band (n * (b + 1)), n, b }. */
export function shipped(order, band) {
  const n = order.length, b = band.shape[1] - 1;
  return { order, band, n, b };
}

/** Solve A z = r for three right-hand sides (r: Float64Array(3n), row-major, in the free
 * vertices' order), with A's factor ``f``; writes z into ``out``. */
export function solveBanded(f, r, out) {
  const { order, band, n, b } = f, w = b + 1, u = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {  // L u = P r
    const o = 3 * order[i], row = i * w;
    let s0 = r[o], s1 = r[o + 1], s2 = r[o + 2];
    const top = Math.min(b, i);
    for (let k = 1; k <= top; k++) {
      const l = band[row + k], j = 3 * (i - k);
      s0 -= l * u[j];
      s1 -= l * u[j + 1];
      s2 -= l * u[j + 2];
    }
    const d = band[row];
    u[3 * i] = s0 / d;
    u[3 * i + 1] = s1 / d;
    u[3 * i + 2] = s2 / d;
  }
  for (let i = n - 1; i >= 0; i--) {  // L^T (P z) = u
    let s0 = u[3 * i], s1 = u[3 * i + 1], s2 = u[3 * i + 2];
    const top = Math.min(b, n - 1 - i);
    for (let k = 1; k <= top; k++) {
      const l = band[(i + k) * w + k], j = 3 * (i + k);
      s0 -= l * u[j];
      s1 -= l * u[j + 1];
      s2 -= l * u[j + 2];
    }
    const d = band[i * w];
    u[3 * i] = s0 / d;
    u[3 * i + 1] = s1 / d;
    u[3 * i + 2] = s2 / d;
    const o = 3 * order[i];
    out[o] = u[3 * i];
    out[o + 1] = u[3 * i + 1];
    out[o + 2] = u[3 * i + 2];
  }
  return out;
}

/** The factor of M / hh^2 + s K (+ diag(``extra``)) over the free vertices (``K``: CSR rows
 * over every vertex, ``free``: the free vertices, ``mass`` and ``extra`` (n,)), in the order
 * and band of ``like`` (a shipped factor of the same matrix at s = 1: the sparsity is the
 * same). */
export function factorBanded(K, free, mass, hh, s, like, extra = null) {
  const { order, n, b } = like, w = b + 1;
  const at = new Int32Array(K.rows).fill(-1);  // a vertex's place in the order, or -1
  for (let i = 0; i < n; i++) at[free[order[i]]] = i;
  const band = new Float64Array(n * w);  // A's lower band first: band[i, k] = A[i, i - k]
  for (let i = 0; i < n; i++) {
    const v = free[order[i]];
    band[i * w] = mass[v] / (hh * hh) + (extra ? extra[v] : 0);
    for (let p = K.indptr[v]; p < K.indptr[v + 1]; p++) {
      const j = at[K.indices[p]];
      if (j < 0 || j > i) continue;
      if (i - j > b) throw new Error("the fabric's matrix is wider than its shipped band");
      band[i * w + i - j] += s * K.data[p];
    }
  }
  for (let i = 0; i < n; i++) {  // Cholesky, in place, row by row
    const row = i * w;
    for (let k = Math.min(b, i); k >= 1; k--) {  // L[i, j], j = i - k, from left to right
      const j = i - k, rowj = j * w;
      let s2 = band[row + k];
      const top = Math.min(b - k, j);  // sum over m < j: L[i, m] L[j, m]
      for (let q = 1; q <= top; q++) s2 -= band[row + k + q] * band[rowj + q];
      band[row + k] = s2 / band[rowj];
    }
    let d = band[row];
    for (let k = 1; k <= Math.min(b, i); k++) d -= band[row + k] * band[row + k];
    if (!(d > 0)) throw new Error("the fabric's matrix is not positive definite");
    band[row] = Math.sqrt(d);
  }
  return { order, band, n, b };
}

/** CSR rows (free, held) of s K: what couples the free vertices to the held ones. */
export function coupling(K, free, held) {
  const at = new Int32Array(K.rows).fill(-1);
  held.forEach((v, j) => { at[v] = j; });
  const indptr = new Int32Array(free.length + 1), idx = [], data = [];
  free.forEach((v, i) => {
    for (let p = K.indptr[v]; p < K.indptr[v + 1]; p++) {
      const j = at[K.indices[p]];
      if (j >= 0) { idx.push(j); data.push(K.data[p]); }
    }
    indptr[i + 1] = idx.length;
  });
  return { indptr, indices: Int32Array.from(idx), data: Float64Array.from(data),
           rows: free.length, cols: held.length };
}
