// The reduced model's own steps, in the page (docs/reduced-model.md): the same implicit
// BDF2 steps over affine handle coordinates that `neurok animate` integrates
// (deform/handle_motion.py), read from the model's description (io/reduced.py writes it).
// Each step minimizes the incremental potential (inertia, the material's energy, bending,
// Rayleigh damping, the ground's penalty and friction) with L-BFGS preconditioned by the
// turned rest Hessian, as the Python step does, in float64; the page adds a pulling spring.
//
// Arrays in Z's layout are Float64Array(4H * 3), row-major: row 4h + i (i < 3) holds
// handle h's affine map transposed, row 4h + 3 its translation.

const TYPES = { f8: Float64Array, f4: Float32Array, i4: Int32Array };

/** The model from io/reduced.py's bytes (an ArrayBuffer): { values, arrays }. */
export function readModel(buffer) {
  const head = new Uint8Array(buffer, 0, 8);
  if (String.fromCharCode(...head.subarray(0, 4)) !== "NRRM") {
    throw new Error("not a reduced model");
  }
  const size = new DataView(buffer).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, size)));
  if (header.values.format !== "neurok-reduced-model" || header.values.version !== 3) {
    throw new Error(`reduced model version ${header.values.version}: this page reads 3`);
  }
  const arrays = {};
  for (const [name, e] of Object.entries(header.arrays)) {
    const T = TYPES[e.type];
    const count = e.shape.reduce((a, b) => a * b, 1);
    const a = new T(buffer, 8 + size + e.offset, count);
    a.shape = e.shape;
    arrays[name] = a;
  }
  return { values: header.values, arrays };
}

// -- sparse rows ------------------------------------------------------------------------

function csr(arrays, name) {
  const shape = arrays[`${name}_shape`];
  return { indptr: arrays[`${name}_indptr`], indices: arrays[`${name}_indices`],
           data: Float64Array.from(arrays[`${name}_data`]), rows: shape[0], cols: shape[1] };
}

/** CSR rows (n, 4H) of kron(w, [x - c, 1]) for padded weights (n, K) at points x (n, 3):
 * the map from Z to the points' displacements (handles.basis_rows). */
function basisRows(index, weight, k, x, centres) {
  const n = x.length / 3;
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let c = 0;
    for (let s = 0; s < k; s++) if (weight[i * k + s] !== 0) c++;
    indptr[i + 1] = indptr[i] + 4 * c;
  }
  const indices = new Int32Array(indptr[n]);
  const data = new Float64Array(indptr[n]);
  for (let i = 0; i < n; i++) {
    let p = indptr[i];
    for (let s = 0; s < k; s++) {
      const w = weight[i * k + s];
      if (w === 0) continue;
      const h = index[i * k + s];
      for (let c = 0; c < 3; c++) {
        indices[p] = 4 * h + c;
        data[p++] = w * (x[3 * i + c] - centres[3 * h + c]);
      }
      indices[p] = 4 * h + 3;
      data[p++] = w;
    }
  }
  return { indptr, indices, data, rows: n, cols: centres.length / 3 * 4 };
}

/** out (rows, m) = A @ X (cols, m). */
function mul(A, X, m, out = new Float64Array(A.rows * m)) {
  const { indptr, indices, data } = A;
  if (m === 3) {
    for (let i = 0; i < A.rows; i++) {
      let s0 = 0, s1 = 0, s2 = 0;
      for (let p = indptr[i]; p < indptr[i + 1]; p++) {
        const a = data[p], j = 3 * indices[p];
        s0 += a * X[j];
        s1 += a * X[j + 1];
        s2 += a * X[j + 2];
      }
      out[3 * i] = s0;
      out[3 * i + 1] = s1;
      out[3 * i + 2] = s2;
    }
    return out;
  }
  for (let i = 0; i < A.rows; i++) {
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let p = indptr[i]; p < indptr[i + 1]; p++) s += data[p] * X[indices[p] * m + c];
      out[i * m + c] = s;
    }
  }
  return out;
}

/** out (cols, m) += A^T @ X (rows, m). */
function mulT(A, X, m, out) {
  const { indptr, indices, data } = A;
  if (m === 3) {
    for (let i = 0; i < A.rows; i++) {
      const x0 = X[3 * i], x1 = X[3 * i + 1], x2 = X[3 * i + 2];
      for (let p = indptr[i]; p < indptr[i + 1]; p++) {
        const a = data[p], j = 3 * indices[p];
        out[j] += a * x0;
        out[j + 1] += a * x1;
        out[j + 2] += a * x2;
      }
    }
    return out;
  }
  for (let i = 0; i < A.rows; i++) {
    for (let p = indptr[i]; p < indptr[i + 1]; p++) {
      const a = data[p], j = indices[p] * m;
      for (let c = 0; c < m; c++) out[j + c] += a * X[i * m + c];
    }
  }
  return out;
}

/** The rows ``keep`` of A. */
function take(A, keep) {
  const indptr = new Int32Array(keep.length + 1);
  for (let r = 0; r < keep.length; r++) {
    indptr[r + 1] = indptr[r] + A.indptr[keep[r] + 1] - A.indptr[keep[r]];
  }
  const indices = new Int32Array(indptr[keep.length]);
  const data = new Float64Array(indptr[keep.length]);
  for (let r = 0; r < keep.length; r++) {
    const a = A.indptr[keep[r]], b = A.indptr[keep[r] + 1];
    indices.set(A.indices.subarray(a, b), indptr[r]);
    data.set(A.data.subarray(a, b), indptr[r]);
  }
  return { indptr, indices, data, rows: keep.length, cols: A.cols };
}

/** Dense (n, n) rows^T diag(k) rows, added to ``out`` at stride ``stride`` and offset. */
function gram(rows, k, out, n, stride = 1, offset = 0) {
  const N = n * stride;
  for (let i = 0; i < rows.rows; i++) {
    const ki = k[i];
    if (ki === 0) continue;
    for (let p = rows.indptr[i]; p < rows.indptr[i + 1]; p++) {
      const a = rows.indices[p] * stride + offset, va = ki * rows.data[p];
      for (let q = rows.indptr[i]; q < rows.indptr[i + 1]; q++) {
        out[a * N + rows.indices[q] * stride + offset] += va * rows.data[q];
      }
    }
  }
}

// -- dense algebra ----------------------------------------------------------------------

/** Cholesky factor (lower, in place) of the (n, n) symmetric positive definite A. */
function cholesky(A, n) {
  for (let j = 0; j < n; j++) {
    let d = A[j * n + j];
    for (let k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0)) throw new Error("the reduced system is not positive definite");
    d = Math.sqrt(d);
    A[j * n + j] = d;
    for (let i = j + 1; i < n; i++) {
      let s = A[i * n + j];
      const ri = i * n, rj = j * n;
      for (let k = 0; k < j; k++) s -= A[ri + k] * A[rj + k];
      A[ri + j] = s / d;
    }
  }
  return { L: A, n };
}

/** Solve L L^T x = b for m right-hand sides (b: (n, m) row-major), in place. */
function cholSolve(f, b, m) {
  const { L, n } = f;
  for (let c = 0; c < m; c++) {
    for (let i = 0; i < n; i++) {
      let s = b[i * m + c];
      for (let k = 0; k < i; k++) s -= L[i * n + k] * b[k * m + c];
      b[i * m + c] = s / L[i * n + i];
    }
    for (let i = n - 1; i >= 0; i--) {
      let s = b[i * m + c];
      for (let k = i + 1; k < n; k++) s -= L[k * n + i] * b[k * m + c];
      b[i * m + c] = s / L[i * n + i];
    }
  }
  return b;
}

/** out (a, m) = A (a, b) @ X (b, m); with ``trans``, A^T (A stored (b, a)). */
function dense(A, X, a, b, m, trans = false, out = new Float64Array(a * m)) {
  out.fill(0);
  if (!trans && m === 3) {
    for (let i = 0; i < a; i++) {
      let s0 = 0, s1 = 0, s2 = 0;
      const row = i * b;
      for (let k = 0; k < b; k++) {
        const v = A[row + k];
        s0 += v * X[3 * k];
        s1 += v * X[3 * k + 1];
        s2 += v * X[3 * k + 2];
      }
      out[3 * i] = s0;
      out[3 * i + 1] = s1;
      out[3 * i + 2] = s2;
    }
  } else if (!trans && m === 1) {
    for (let i = 0; i < a; i++) {
      let s0 = 0;
      const row = i * b;
      for (let k = 0; k < b; k++) s0 += A[row + k] * X[k];
      out[i] = s0;
    }
  } else if (!trans) {
    for (let i = 0; i < a; i++) {
      for (let k = 0; k < b; k++) {
        const v = A[i * b + k];
        if (v === 0) continue;
        for (let c = 0; c < m; c++) out[i * m + c] += v * X[k * m + c];
      }
    }
  } else {
    for (let k = 0; k < b; k++) {
      for (let i = 0; i < a; i++) {
        const v = A[k * a + i];
        if (v === 0) continue;
        for (let c = 0; c < m; c++) out[i * m + c] += v * X[k * m + c];
      }
    }
  }
  return out;
}

/** X (4, k) solving A X = B for the 4x4 A (row-major) and B (4, k): elimination with
 * partial pivoting, as LAPACK's. */
function solve4(A, B, k) {
  const M = Float64Array.from(A), X = Float64Array.from(B);
  for (let c = 0; c < 4; c++) {
    let piv = c;
    for (let r = c + 1; r < 4; r++) if (Math.abs(M[4 * r + c]) > Math.abs(M[4 * piv + c])) piv = r;
    if (piv !== c) {
      for (let j = 0; j < 4; j++) [M[4 * c + j], M[4 * piv + j]] = [M[4 * piv + j], M[4 * c + j]];
      for (let j = 0; j < k; j++) [X[c * k + j], X[piv * k + j]] = [X[piv * k + j], X[c * k + j]];
    }
    for (let r = c + 1; r < 4; r++) {
      const f = M[4 * r + c] / M[4 * c + c];
      if (f === 0) continue;
      for (let j = c; j < 4; j++) M[4 * r + j] -= f * M[4 * c + j];
      for (let j = 0; j < k; j++) X[r * k + j] -= f * X[c * k + j];
    }
  }
  for (let c = 3; c >= 0; c--) {
    for (let j = 0; j < k; j++) {
      let s = X[c * k + j];
      for (let r = c + 1; r < 4; r++) s -= M[4 * c + r] * X[r * k + j];
      X[c * k + j] = s / M[4 * c + c];
    }
  }
  return X;
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** The rotation nearest the 3x3 row-major F (its polar factor; a reflection's smallest
 * direction flipped), from the eigenvectors of F^T F. */
function polar(F, out = new Float64Array(9)) {
  const S = new Float64Array(9);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      S[3 * i + j] = F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j];
    }
  }
  const lam = new Float64Array(3), V = new Float64Array(9);
  symEigen3(S, lam, V);
  const order = [0, 1, 2].sort((a, b) => lam[b] - lam[a]);
  const v = order.map((i) => [V[i], V[3 + i], V[6 + i]]);
  const u = [];
  for (let i = 0; i < 2; i++) {
    const w = [0, 1, 2].map((r) => F[3 * r] * v[i][0] + F[3 * r + 1] * v[i][1] +
                                   F[3 * r + 2] * v[i][2]);
    if (i === 1) {  // Gram-Schmidt against the first
      const d = w[0] * u[0][0] + w[1] * u[0][1] + w[2] * u[0][2];
      for (let r = 0; r < 3; r++) w[r] -= d * u[0][r];
    }
    let len = Math.hypot(w[0], w[1], w[2]);
    if (!(len > 1e-300)) {  // rank deficient: any direction across the first
      const a = Math.abs(u[0][0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
      w[0] = u[0][1] * a[2] - u[0][2] * a[1];
      w[1] = u[0][2] * a[0] - u[0][0] * a[2];
      w[2] = u[0][0] * a[1] - u[0][1] * a[0];
      len = Math.hypot(w[0], w[1], w[2]);
    }
    u.push(w.map((x) => x / len));
  }
  const detV = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1]) -
    v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0]) +
    v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
  const s = detV < 0 ? -1 : 1;
  u.push([s * (u[0][1] * u[1][2] - u[0][2] * u[1][1]),
          s * (u[0][2] * u[1][0] - u[0][0] * u[1][2]),
          s * (u[0][0] * u[1][1] - u[0][1] * u[1][0])]);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      out[3 * i + j] = u[0][i] * v[0][j] + u[1][i] * v[1][j] + u[2][i] * v[2][j];
    }
  }
  return out;
}

// -- the material -------------------------------------------------------------------------

/** Energy density and first Piola stress P (3 x d, row-major) of F (3 x d). */
const COF = new Float64Array(9);

function material(law, F, d, P) {
  if (d === 3) {  // stable Neo-Hookean
    const cof = COF;
    for (let j = 0; j < 3; j++) {
      const a = (j + 1) % 3, b = (j + 2) % 3;
      cof[j] = F[3 + a] * F[6 + b] - F[6 + a] * F[3 + b];
      cof[3 + j] = F[6 + a] * F[b] - F[a] * F[6 + b];
      cof[6 + j] = F[a] * F[3 + b] - F[3 + a] * F[b];
    }
    const J = F[0] * cof[0] + F[3] * cof[3] + F[6] * cof[6];
    let ff = 0;
    for (let i = 0; i < 9; i++) ff += F[i] * F[i];
    const psi = 0.5 * law.mu * (ff - 3) - law.mu * (J - 1) + 0.5 * law.lambda * (J - 1) ** 2;
    const k = law.lambda * (J - 1) - law.mu;
    for (let i = 0; i < 9; i++) P[i] = law.mu * F[i] + k * cof[i];
    return psi;
  }
  // a sheet's membrane: St. Venant-Kirchhoff, plane stress (for cloth its compressed part
  // weighed by law.compression)
  const a = 0.5 * (F[0] * F[0] + F[2] * F[2] + F[4] * F[4] - 1);
  const b = 0.5 * (F[0] * F[1] + F[2] * F[3] + F[4] * F[5]);
  const c = 0.5 * (F[1] * F[0] + F[3] * F[2] + F[5] * F[4]);
  const e = 0.5 * (F[1] * F[1] + F[3] * F[3] + F[5] * F[5] - 1);
  const tr = a + e, w = law.compression;
  let psi, s00, s01, s10, s11;
  if (w < 1) {  // E = E+ + E-, by the signs of its eigenvalues
    const m = 0.5 * (a + e);
    const r = Math.sqrt((0.5 * (a - e)) ** 2 + b * b);
    const hi = m + r, lo = m - r;
    const scale = lo >= 0 ? 1 : (hi <= 0 ? 0 : hi / Math.max(2 * r, 1e-300));
    const shift = lo < 0 && hi > 0 ? lo : 0;
    const pa = a * scale - scale * shift, pb = b * scale, pc = c * scale;
    const pe = e * scale - scale * shift;
    const na = a - pa, nb = b - pb, nc = c - pc, ne = e - pe;
    const tp = Math.max(tr, 0), tn = tr - tp;
    psi = law.mu * (pa * pa + pb * pb + pc * pc + pe * pe +
                    w * (na * na + nb * nb + nc * nc + ne * ne)) +
      0.5 * law.lambda * (tp * tp + w * tn * tn);
    const t = law.lambda * (tp + w * tn);
    s00 = 2 * law.mu * (pa + w * na) + t;
    s01 = 2 * law.mu * (pb + w * nb);
    s10 = 2 * law.mu * (pc + w * nc);
    s11 = 2 * law.mu * (pe + w * ne) + t;
  } else {
    psi = law.mu * (a * a + b * b + c * c + e * e) + 0.5 * law.lambda * tr * tr;
    s00 = 2 * law.mu * a + law.lambda * tr;
    s01 = 2 * law.mu * b;
    s10 = 2 * law.mu * c;
    s11 = 2 * law.mu * e + law.lambda * tr;
  }
  for (let i = 0; i < 3; i++) {
    P[2 * i] = F[2 * i] * s00 + F[2 * i + 1] * s10;
    P[2 * i + 1] = F[2 * i] * s01 + F[2 * i + 1] * s11;
  }
  return psi;
}

/** Eigenvalues (lam, 3) and eigenvectors (V, 3 x 3 row-major, columns) of a symmetric 3 x 3
 * A (row-major), by cyclic Jacobi rotations. */
function symEigen3(A, lam, V) {
  const a = Float64Array.from(A);
  V.fill(0);
  V[0] = V[4] = V[8] = 1;
  for (let sweep = 0; sweep < 32; sweep++) {
    const off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    if (off <= 1e-300 || off <= 1e-30 * (a[0] * a[0] + a[4] * a[4] + a[8] * a[8])) break;
    for (const [p, q] of [[0, 1], [0, 2], [1, 2]]) {
      const apq = a[3 * p + q];
      if (apq === 0) continue;
      const theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1), sn = t * c;
      for (let k = 0; k < 3; k++) {  // A <- A J (columns p, q)
        const akp = a[3 * k + p], akq = a[3 * k + q];
        a[3 * k + p] = c * akp - sn * akq;
        a[3 * k + q] = sn * akp + c * akq;
      }
      for (let k = 0; k < 3; k++) {  // A <- J^T A (rows p, q)
        const apk = a[3 * p + k], aqk = a[3 * q + k];
        a[3 * p + k] = c * apk - sn * aqk;
        a[3 * q + k] = sn * apk + c * aqk;
      }
      for (let k = 0; k < 3; k++) {
        const vkp = V[3 * k + p], vkq = V[3 * k + q];
        V[3 * k + p] = c * vkp - sn * vkq;
        V[3 * k + q] = sn * vkp + c * vkq;
      }
    }
  }
  lam[0] = a[0];
  lam[1] = a[4];
  lam[2] = a[8];
}

const EIG = new Float64Array(3), EIGV = new Float64Array(9);

/** A patch's mean strain E (3 x 3, row-major) -> its energy density, and its second Piola
 * stress into S (3 x 3): the membrane's law with its compressed part weighed by
 * law.compression, over the three eigenvalues (the elastic module's patch_stress). */
function patchStress(law, E, S) {
  symEigen3(E, EIG, EIGV);
  const w = law.compression, tr = E[0] + E[4] + E[8];
  const tp = Math.max(tr, 0), tn = tr - tp;
  let psi = 0.5 * law.lambda * (tp * tp + w * tn * tn);
  const s = new Float64Array(3);
  for (let i = 0; i < 3; i++) {
    const p = Math.max(EIG[i], 0), n = EIG[i] - p;
    psi += law.mu * (p * p + w * n * n);
    s[i] = 2 * law.mu * (p + w * n);
  }
  const t = law.lambda * (tp + w * tn);
  for (let a = 0; a < 3; a++) {
    for (let b = 0; b < 3; b++) {
      let v = a === b ? t : 0;
      for (let i = 0; i < 3; i++) v += EIGV[3 * a + i] * s[i] * EIGV[3 * b + i];
      S[3 * a + b] = v;
    }
  }
  return psi;
}

/** d vec(P) / d vec(F) (3d x 3d) at F0 by central differences, symmetrized (the
 * elastic module's _tangent). */
function tangent(law, F0, d) {
  const n = 3 * d, eps = 1e-6;
  const out = new Float64Array(n * n);
  const F = new Float64Array(n), Pp = new Float64Array(n), Pm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    F.set(F0);
    F[k] += eps;
    material(law, F, d, Pp);
    F.set(F0);
    F[k] -= eps;
    material(law, F, d, Pm);
    for (let i = 0; i < n; i++) out[i * n + k] = (Pp[i] - Pm[i]) / (2 * eps);
  }
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const m = 0.5 * (out[i * n + j] + out[j * n + i]);
      out[i * n + j] = m;
      out[j * n + i] = m;
    }
  }
  return out;
}

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

  /** The elements' operator D (E d, 4H): (D Z)[e d + j, c] = dF_e[c, j], built from what
   * the model holds as elastic.py builds it: a sheet's triangles over the vertices' rows,
   * or a smooth solid's moving least squares fit of the weights' gradients. */
  _operator() {
    const a = this.arrays, H4 = this.H4, n = this.n;
    const entries = [];  // per row: Map column -> value
    if (this.values.elements === "triangles") {
      const faces = a.elements_faces, F0 = a.elements_rest, x = a.rest, R = this.vertexRows;
      for (let e = 0; e < faces.length / 3; e++) {
        const i0 = faces[3 * e], i1 = faces[3 * e + 1], i2 = faces[3 * e + 2];
        const dm = [[0, 0], [0, 0]];
        for (let c = 0; c < 3; c++) {
          const e1 = x[3 * i1 + c] - x[3 * i0 + c], e2 = x[3 * i2 + c] - x[3 * i0 + c];
          for (let k = 0; k < 2; k++) {  // the edges in the triangle's own frame
            dm[k][0] += F0[6 * e + 2 * c + k] * e1;
            dm[k][1] += F0[6 * e + 2 * c + k] * e2;
          }
        }
        const det = dm[0][0] * dm[1][1] - dm[0][1] * dm[1][0];
        const inv = [[dm[1][1] / det, -dm[0][1] / det], [-dm[1][0] / det, dm[0][0] / det]];
        const grads = [[-(inv[0][0] + inv[1][0]), -(inv[0][1] + inv[1][1])], inv[0], inv[1]];
        for (let j = 0; j < 2; j++) {
          const row = new Map();
          [i0, i1, i2].forEach((vi, corner) => {
            const gv = grads[corner][j];
            for (let p = R.indptr[vi]; p < R.indptr[vi + 1]; p++) {
              row.set(R.indices[p], (row.get(R.indices[p]) || 0) + gv * R.data[p]);
            }
          });
          entries.push(row);
        }
      }
    } else {  // smooth: dF = sum_h w_h A_h + (A_h (X - c_h) + t_h) grad w_h^T
      const at = a.elements_at, near = a.elements_near, k = near.shape[1];
      const E = at.length / 3, c = this.centres;
      const kv = a.skin_index.shape[1], km = a.material_index.shape[1];
      const point = (p) => (p < n ? [a.rest, 3 * p] : [a.material_rest, 3 * (p - n)]);
      const slots = (p) => (p < n
        ? [a.skin_index, a.skin_weight, p * kv, kv]
        : [a.material_index, a.material_weight, (p - n) * km, km]);
      const fit = new Float64Array(16), rhs = new Float64Array(4 * k);
      const g = new Float64Array(k), rel = new Float64Array(3 * k), dist = new Float64Array(k);
      for (let e = 0; e < E; e++) {
        for (let q = 0; q < k; q++) {
          const [src, o] = point(near[e * k + q]);
          for (let i = 0; i < 3; i++) rel[3 * q + i] = src[o + i] - at[3 * e + i];
          dist[q] = Math.hypot(rel[3 * q], rel[3 * q + 1], rel[3 * q + 2]);
        }
        const h = Math.max(Math.max(...dist), 1e-12);
        fit.fill(0);
        for (let q = 0; q < k; q++) {
          g[q] = Math.exp(-2 * (dist[q] / h) ** 2);
          const X = [1, rel[3 * q], rel[3 * q + 1], rel[3 * q + 2]];
          for (let r = 0; r < 4; r++) {
            rhs[r * k + q] = X[r] * g[q];
            for (let s2 = 0; s2 < 4; s2++) fit[4 * r + s2] += X[r] * g[q] * X[s2];
          }
        }
        for (let r = 0; r < 4; r++) fit[5 * r] += 1e-12;
        const coef = solve4(fit, rhs, k);  // (4, k): the value's and gradient's weights
        const acc = new Map();  // handle -> [value, d/dx, d/dy, d/dz]
        for (let q = 0; q < k; q++) {
          const [idx, wt, o, K] = slots(near[e * k + q]);
          for (let s2 = 0; s2 < K; s2++) {
            const w = wt[o + s2];
            if (w === 0) continue;
            const hh = idx[o + s2];
            if (!acc.has(hh)) acc.set(hh, [0, 0, 0, 0]);
            const t = acc.get(hh);
            for (let r = 0; r < 4; r++) t[r] += coef[r * k + q] * w;
          }
        }
        for (let j = 0; j < 3; j++) {
          const row = new Map();
          for (const [hh, t] of acc) {
            const add = (col, val) => row.set(col, (row.get(col) || 0) + val);
            for (let i = 0; i < 3; i++) add(4 * hh + i, (at[3 * e + i] - c[3 * hh + i]) * t[1 + j]);
            add(4 * hh + 3, t[1 + j]);
            add(4 * hh + j, t[0]);
          }
          entries.push(row);
        }
      }
    }
    const indptr = new Int32Array(entries.length + 1);
    entries.forEach((row, i) => { indptr[i + 1] = indptr[i] + row.size; });
    const indices = new Int32Array(indptr[entries.length]);
    const data = new Float64Array(indptr[entries.length]);
    entries.forEach((row, i) => {
      const cols = [...row.keys()].sort((x, y) => x - y);
      cols.forEach((col, q) => {
        indices[indptr[i] + q] = col;
        data[indptr[i] + q] = row.get(col);
      });
    });
    return { indptr, indices, data, rows: entries.length, cols: H4 };
  }

  /** (12H, 12H) rest Hessian of the elastic energy, in Z's order (Elements.stiffness; with
   * patches, Membrane.rest_hessian: their mean strain is linear in dF at rest). */
  _restHessian() {
    const D = this.elements, d = this.d, n3 = 3 * this.H4, nd = 3 * d;
    const K0 = new Float64Array(n3 * n3);
    const cols = new Map();
    const own = this.patches ? 1 - this.patches.share : 1;
    for (let e = 0; e < this.E; e++) {
      const C = tangent(this.law, this.F0.subarray(e * nd, (e + 1) * nd), d);
      cols.clear();
      for (let j = 0; j < d; j++) {
        for (let p = D.indptr[e * d + j]; p < D.indptr[e * d + j + 1]; p++) {
          if (!cols.has(D.indices[p])) cols.set(D.indices[p], cols.size);
        }
      }
      const U = [...cols.keys()], u = U.length;
      const G = new Float64Array(d * u);
      for (let j = 0; j < d; j++) {
        for (let p = D.indptr[e * d + j]; p < D.indptr[e * d + j + 1]; p++) {
          G[j * u + cols.get(D.indices[p])] += D.data[p];
        }
      }
      const m = own * this.measure[e];
      const T = new Float64Array(u * 9 * d);  // T[a][c][c'][j'] = sum_j G[j,a] C[cd+j, c'd+j']
      for (let ia = 0; ia < u; ia++) {
        for (let c = 0; c < 3; c++) {
          for (let c2 = 0; c2 < 3; c2++) {
            for (let j2 = 0; j2 < d; j2++) {
              let s = 0;
              for (let j = 0; j < d; j++) s += G[j * u + ia] * C[(c * d + j) * nd + c2 * d + j2];
              T[((ia * 3 + c) * 3 + c2) * d + j2] = m * s;
            }
          }
        }
      }
      for (let ia = 0; ia < u; ia++) {
        for (let ib = 0; ib < u; ib++) {
          for (let c = 0; c < 3; c++) {
            const row = (U[ia] * 3 + c) * n3;
            for (let c2 = 0; c2 < 3; c2++) {
              let s = 0;
              const t0 = ((ia * 3 + c) * 3 + c2) * d;
              for (let j2 = 0; j2 < d; j2++) s += T[t0 + j2] * G[j2 * u + ib];
              K0[row + U[ib] * 3 + c2] += s;
            }
          }
        }
      }
    }
    if (this.patches) this._patchHessian(K0);
    return K0;
  }

  /** The patches' share of the rest Hessian, added into K0: each patch's mean strain's
   * rows G (9, 12H) at rest, A (1 + c) / 2 (2 mu G^T G + lambda t^T t), t G's trace. */
  _patchHessian(K0) {
    const D = this.elements, n3 = 3 * this.H4, law = this.law;
    const { share, index, weight, k, A } = this.patches;
    const rows = new Map();  // patch -> Float64Array(9 n3)
    const P = new Float64Array(9), B = new Float64Array(54);
    for (let e = 0; e < this.E; e++) {
      const fr = this.F0.subarray(e * 6, e * 6 + 6);  // (3, 2): the triangle's frame
      for (let a = 0; a < 3; a++) {
        for (let b = 0; b < 3; b++) P[3 * a + b] = fr[2 * a] * fr[2 * b] + fr[2 * a + 1] * fr[2 * b + 1];
      }
      // dE3[a][b] from dF[c][j]: (P[a][c] fr[b][j] + fr[a][j] P[c][b]) / 2
      for (let a = 0; a < 3; a++) {
        for (let b = 0; b < 3; b++) {
          for (let c = 0; c < 3; c++) {
            for (let j = 0; j < 2; j++) {
              B[(3 * a + b) * 6 + 2 * c + j] =
                0.5 * (P[3 * a + c] * fr[2 * b + j] + fr[2 * a + j] * P[3 * c + b]);
            }
          }
        }
      }
      for (let q = 0; q < k; q++) {
        const wt = weight[e * k + q];
        if (wt === 0) continue;
        const h = index[e * k + q];
        if (!rows.has(h)) rows.set(h, new Float64Array(9 * n3));
        const g = rows.get(h), f = this.measure[e] * wt / A[h];
        for (let j = 0; j < 2; j++) {
          for (let p = D.indptr[e * 2 + j]; p < D.indptr[e * 2 + j + 1]; p++) {
            const dv = D.data[p] * f, col = 3 * D.indices[p];
            for (let c = 0; c < 3; c++) {
              for (let i = 0; i < 9; i++) g[i * n3 + col + c] += B[i * 6 + 2 * c + j] * dv;
            }
          }
        }
      }
    }
    const t = new Float64Array(n3);
    for (const [h, g] of rows) {
      const scale = share * A[h] * 0.5 * (1 + law.compression);
      const used = [];
      for (let x = 0; x < n3; x++) {
        t[x] = g[x] + g[4 * n3 + x] + g[8 * n3 + x];
        for (let i = 0; i < 9; i++) {
          if (g[i * n3 + x] !== 0) { used.push(x); break; }
        }
      }
      for (const r of used) {
        for (const c of used) {
          let s = 0;
          for (let i = 0; i < 9; i++) s += g[i * n3 + r] * g[i * n3 + c];
          K0[r * n3 + c] += scale * (2 * law.mu * s + law.lambda * t[r] * t[c]);
        }
      }
    }
  }

  /** The patches' share of the stretch at DZ (D Z): its energy, and its stress's pull per
   * element row added into W (as the elements' own, measure x P). */
  _patchEnergy(DZ, W) {
    const { share, index, weight, k, A } = this.patches;
    const H = this.H, E = this.E;
    const mean = new Float64Array(9 * H), F = new Float64Array(6), E3 = new Float64Array(9);
    const gradient = (e) => {
      for (let c = 0; c < 3; c++) {
        for (let j = 0; j < 2; j++) F[2 * c + j] = this.F0[e * 6 + 2 * c + j] + DZ[(e * 2 + j) * 3 + c];
      }
    };
    for (let e = 0; e < E; e++) {
      gradient(e);
      const fr = this.F0.subarray(e * 6, e * 6 + 6);
      const a = 0.5 * (F[0] * F[0] + F[2] * F[2] + F[4] * F[4] - 1);
      const b = 0.5 * (F[0] * F[1] + F[2] * F[3] + F[4] * F[5]);
      const d = 0.5 * (F[1] * F[1] + F[3] * F[3] + F[5] * F[5] - 1);
      for (let x = 0; x < 3; x++) {  // E3 = fr E2 fr^T
        for (let y = 0; y < 3; y++) {
          E3[3 * x + y] = fr[2 * x] * (a * fr[2 * y] + b * fr[2 * y + 1]) +
            fr[2 * x + 1] * (b * fr[2 * y] + d * fr[2 * y + 1]);
        }
      }
      for (let q = 0; q < k; q++) {
        const wt = weight[e * k + q];
        if (wt === 0) continue;
        const h = index[e * k + q], f = this.measure[e] * wt / A[h];
        for (let i = 0; i < 9; i++) mean[9 * h + i] += f * E3[i];
      }
    }
    let energy = 0;
    const S = new Float64Array(9 * H);
    for (let h = 0; h < H; h++) {
      if (A[h] > 0) energy += A[h] * patchStress(this.law, mean.subarray(9 * h, 9 * h + 9),
                                                  S.subarray(9 * h, 9 * h + 9));
    }
    const Se = new Float64Array(9);
    for (let e = 0; e < E; e++) {
      gradient(e);
      const fr = this.F0.subarray(e * 6, e * 6 + 6);
      Se.fill(0);
      for (let q = 0; q < k; q++) {
        const wt = weight[e * k + q];
        if (wt === 0) continue;
        const h = index[e * k + q];
        for (let i = 0; i < 9; i++) Se[i] += wt * S[9 * h + i];
      }
      const S2 = [0, 0, 0, 0];  // fr^T Se fr
      for (let i = 0; i < 2; i++) {
        for (let j = 0; j < 2; j++) {
          let v = 0;
          for (let x = 0; x < 3; x++) {
            for (let y = 0; y < 3; y++) v += fr[2 * x + i] * Se[3 * x + y] * fr[2 * y + j];
          }
          S2[2 * i + j] = v;
        }
      }
      const m = share * this.measure[e];
      for (let c = 0; c < 3; c++) {
        for (let j = 0; j < 2; j++) {
          W[(e * 2 + j) * 3 + c] += m * (F[2 * c] * S2[j] + F[2 * c + 1] * S2[2 + j]);
        }
      }
    }
    return share * energy;
  }

  // -- forces and energies ----------------------------------------------------------------

  airForce(x, xdot, t) {
    const K = this.airIndex.length, f = new Float64Array(K * 3);
    if (this.air === 0) return f;
    const faces = this.airFaces;
    const acc = this.airNormals || (this.airNormals = new Float64Array(this.n * 3));
    for (const i of faces) acc[3 * i] = acc[3 * i + 1] = acc[3 * i + 2] = 0;
    for (let q = 0; q < faces.length; q += 3) {
      const i0 = 3 * faces[q], i1 = 3 * faces[q + 1], i2 = 3 * faces[q + 2];
      const a0 = x[i1] - x[i0], a1 = x[i1 + 1] - x[i0 + 1], a2 = x[i1 + 2] - x[i0 + 2];
      const b0 = x[i2] - x[i0], b1 = x[i2 + 1] - x[i0 + 1], b2 = x[i2 + 2] - x[i0 + 2];
      const c0 = (a1 * b2 - a2 * b1) / 6, c1 = (a2 * b0 - a0 * b2) / 6;
      const c2 = (a0 * b1 - a1 * b0) / 6;
      acc[i0] += c0; acc[i0 + 1] += c1; acc[i0 + 2] += c2;
      acc[i1] += c0; acc[i1 + 1] += c1; acc[i1 + 2] += c2;
      acc[i2] += c0; acc[i2 + 1] += c1; acc[i2 + 2] += c2;
    }
    const gust = 1 + this.gust * Math.sin(2 * Math.PI * this.k.gust_hz * t);
    for (let k = 0; k < K; k++) {
      const i = 3 * this.airIndex[k];
      const n0 = acc[i], n1 = acc[i + 1], n2 = acc[i + 2];
      const area = Math.sqrt(n0 * n0 + n1 * n1 + n2 * n2), inv = 1 / Math.max(area, 1e-30);
      const vn = ((this.wind[0] * gust - xdot[i]) * n0 + (this.wind[1] * gust - xdot[i + 1]) * n1 +
                  (this.wind[2] * gust - xdot[i + 2]) * n2) * inv;
      const press = this.solid ? -(Math.min(vn, 0) ** 2) : vn * Math.abs(vn);
      const s = this.air * press * area * this.airWeight[k] * inv;
      f[3 * k] = s * n0;
      f[3 * k + 1] = s * n1;
      f[3 * k + 2] = s * n2;
    }
    return f;
  }

  /** Each handle's rotation at Z (shape matching over its points, a little of its own map),
   * and bending's lagged linear part. */
  rotations(Z) {
    const H = this.H, P = this.materialRest.length / 3, km = this.km;
    const x = mul(this.massRows, Z, 3);
    for (let i = 0; i < x.length; i++) x[i] += this.materialRest[i];
    const cov = new Float64Array(H * 9), wx = new Float64Array(H * 3);
    for (let p = 0; p < P; p++) {
      for (let s = 0; s < km; s++) {
        const w = this.materialWeight[p * km + s];
        if (w === 0) continue;
        const hh = this.materialIndex[p * km + s];
        for (let i = 0; i < 3; i++) {
          wx[3 * hh + i] += w * x[3 * p + i];
          const wxi = w * x[3 * p + i];
          for (let j = 0; j < 3; j++) cov[9 * hh + 3 * i + j] += wxi * this.materialRest[3 * p + j];
        }
      }
    }
    const F = new Float64Array(9), own = new Float64Array(9), R = new Float64Array(9);
    for (let hh = 0; hh < H; hh++) {
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) F[3 * i + j] = (i === j ? 1 : 0) + Z[(4 * hh + j) * 3 + i];
      }
      polar(F, own);
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) {
          F[3 * i + j] = cov[9 * hh + 3 * i + j] -
            wx[3 * hh + i] * this.materialCentres[3 * hh + j] +
            this.materialSpread[hh] * own[3 * i + j];
        }
      }
      polar(F, R);
      this.Rh.set(R, 9 * hh);
    }
    if (this.bending) this._turnBending();
  }

  _turnBending() {
    const B = this.bending, n = this.n, a = this.arrays, k = a.skin_index.shape[1];
    const wd = new Float64Array(n * 3), R = new Float64Array(9);
    let c = 0;
    for (let v = 0; v < n; v++) {
      R.fill(0);
      for (let s = 0; s < k; s++) {
        const w = a.skin_weight[v * k + s];
        if (w === 0) continue;
        const hh = a.skin_index[v * k + s];
        for (let i = 0; i < 9; i++) R[i] += w * this.Rh[9 * hh + i];
      }
      for (let i = 0; i < 3; i++) {
        const d = B.rest[3 * v + i] - (R[3 * i] * B.rest[3 * v] + R[3 * i + 1] * B.rest[3 * v + 1] +
                                       R[3 * i + 2] * B.rest[3 * v + 2]);
        wd[3 * v + i] = d * B.invArea[v];
        c += d * wd[3 * v + i];
      }
    }
    const Ltwd = mulT(B.L, wd, 3, new Float64Array(n * 3));
    const b = mulT(this.vertexRows, Ltwd, 3, new Float64Array(this.H4 * 3));
    for (let i = 0; i < b.length; i++) b[i] *= B.rigidity;
    this.bend = { b, c: 0.5 * B.rigidity * c };
  }

  /** T s (each handle's rows turned by its rotation) or T^T s. */
  _turn(s, inverse = false) {
    const out = new Float64Array(s.length);
    for (let hh = 0; hh < this.H; hh++) {
      const R = this.Rh.subarray(9 * hh, 9 * hh + 9);
      for (let r = 0; r < 4; r++) {
        const o = (4 * hh + r) * 3;
        for (let j = 0; j < 3; j++) {
          out[o + j] = inverse
            ? s[o] * R[j] + s[o + 1] * R[3 + j] + s[o + 2] * R[6 + j]
            : s[o] * R[3 * j] + s[o + 1] * R[3 * j + 1] + s[o + 2] * R[3 * j + 2];
        }
      }
    }
    return out;
  }

  potential(Z, Zn, Zt, contact) {
    const H4 = this.H4, h = this.hh, n3 = 3 * H4, sk = this.stiffness;
    const dZ = new Float64Array(n3);
    for (let i = 0; i < n3; i++) dZ[i] = Z[i] - Zt[i];
    const grad = dense(this.M, dZ, H4, H4, 3);
    let val = 0.5 * dot(dZ, grad) / (h * h);
    for (let i = 0; i < n3; i++) grad[i] /= h * h;
    // the material's energy at its elements
    const D = this.elements, d = this.d, nd = 3 * d;
    const DZ = mul(D, Z, 3);
    const F = new Float64Array(nd), P = new Float64Array(nd), W = new Float64Array(DZ.length);
    let elastic = 0;
    const own = this.patches ? 1 - this.patches.share : 1;
    for (let e = 0; e < this.E; e++) {
      for (let c = 0; c < 3; c++) {
        for (let j = 0; j < d; j++) {
          F[c * d + j] = this.F0[e * nd + c * d + j] + DZ[(e * d + j) * 3 + c];
        }
      }
      const m = own * this.measure[e];
      elastic += m * material(this.law, F, d, P);
      for (let c = 0; c < 3; c++) {
        for (let j = 0; j < d; j++) W[(e * d + j) * 3 + c] = m * P[c * d + j];
      }
    }
    if (this.patches) elastic += this._patchEnergy(DZ, W);
    const ge = mulT(D, W, 3, new Float64Array(n3));
    val += sk * elastic;
    for (let i = 0; i < n3; i++) grad[i] += sk * ge[i];
    if (this.bending) {
      const QZ = dense(this.bending.Q, Z, H4, H4, 3);
      val += sk * (0.5 * dot(Z, QZ) + dot(Z, this.bend.b) + this.bend.c);
      for (let i = 0; i < n3; i++) grad[i] += sk * (QZ[i] + this.bend.b[i]);
    }
    if (this.beta > 0) {  // Rayleigh damping: the rest stiffness turned by the handles
      const s = new Float64Array(n3);
      for (let i = 0; i < n3; i++) s[i] = Z[i] - Zn[i];
      const Ks = this._turn(dense(this.K0, this._turn(s, true), n3, n3, 1), false);
      const b = sk * this.beta / h;
      val += 0.5 * b * dot(s, Ks);
      for (let i = 0; i < n3; i++) grad[i] += b * Ks[i];
    }
    if (contact) val += this._contactEnergy(contact, Z, Zn, grad);
    if (this.pull) {  // the page's pulling spring
      const p = this.pull, x = mul(p.rows, Z, 3);
      const f = [0, 1, 2].map((c) => p.k * (x[c] + p.rest[c] - p.target[c]));
      val += 0.5 * (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]) / p.k;
      mulT(p.rows, f, 3, grad);
    }
    return [val, grad];
  }

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
  }

  // -- the preconditioner -----------------------------------------------------------------

  _turned() {
    let lo = 1;
    for (let hh = 0; hh < this.H; hh++) {
      let tr = 0;
      for (let i = 0; i < 9; i++) tr += this.factorR[9 * hh + i] * this.Rh[9 * hh + i];
      lo = Math.min(lo, (tr - 1) / 2);
    }
    return Math.acos(Math.min(Math.max(lo, -1), 1));
  }

  _factor(ct) {
    const H4 = this.H4, h = this.hh, n3 = 3 * H4, sk = this.stiffness;
    const A = new Float64Array(n3 * n3);
    const s = (1 + this.beta / h) * sk, K0 = this.K0, R = this.Rh;
    // (1 + beta/h) R_i K0_ij R_j^T
    const tmp = new Float64Array(9);
    for (let i = 0; i < H4; i++) {
      const ri = 9 * (i >> 2);
      for (let j = 0; j < H4; j++) {
        const rj = 9 * (j >> 2);
        for (let a = 0; a < 3; a++) {
          for (let b = 0; b < 3; b++) {
            const row = (3 * i) * n3 + 3 * j + b;
            tmp[3 * a + b] = R[ri + 3 * a] * K0[row] + R[ri + 3 * a + 1] * K0[row + n3] +
              R[ri + 3 * a + 2] * K0[row + 2 * n3];
          }
        }
        for (let a = 0; a < 3; a++) {
          for (let b = 0; b < 3; b++) {
            A[(3 * i + a) * n3 + 3 * j + b] = s * (tmp[3 * a] * R[rj + 3 * b] +
              tmp[3 * a + 1] * R[rj + 3 * b + 1] + tmp[3 * a + 2] * R[rj + 3 * b + 2]);
          }
        }
      }
    }
    for (let i = 0; i < H4; i++) {
      for (let j = 0; j < H4; j++) {
        let iso = this.M[i * H4 + j] / (h * h);
        if (this.bending) iso += sk * this.bending.Q[i * H4 + j];
        for (let c = 0; c < 3; c++) A[(3 * i + c) * n3 + 3 * j + c] += iso;
      }
    }
    if (ct) {
      const eps = this.k.slip * h;
      const close = [], kc = [];
      for (let i = 0; i < ct.rows.rows; i++) {
        if (!ct.close[i]) continue;
        close.push(i);
        kc.push(ct.k[i]);
      }
      gram(take(ct.rows, close), kc, A, H4, 3, 1);
      if (ct.friction && ct.friction.length) {
        const kf = ct.friction.map((f, i) => {
          const sl = Math.max(ct.slide[i], 1e-3 * eps);
          return f * (sl < eps ? 2 / eps - sl / (eps * eps) : 1 / sl);
        });
        gram(ct.rowsF, kf, A, H4, 3, 0);
        gram(ct.rowsF, kf, A, H4, 3, 2);
      }
    }
    if (this.pull) {
      const k3 = [this.pull.k];
      for (let c = 0; c < 3; c++) gram(this.pull.rows, k3, A, H4, 3, c);
    }
    this.factorR = Float64Array.from(this.Rh);
    if (this.r === H4) {  // (N the identity: nothing pinned, every direction moves mass)
      this.factor = cholesky(A, n3);
      return;
    }
    // (N^T A N)^-1 without forming N^T A N (two dense products, the most of a factor's
    // time): with C the complement of N's columns and A' = A + gamma C C^T (N^T A' N is
    // N^T A N; A' is definite where A is only on N's span), (N^T A N)^-1 = N^T (A'^-1 -
    // A'^-1 C (C^T A'^-1 C)^-1 C^T A'^-1) N, the inverse's Schur complement in [N C]
    const C = this._complement(), q = C.length / H4, q3 = 3 * q;
    let trace = 0;
    for (let i = 0; i < n3; i++) trace += A[i * n3 + i];
    const gamma = trace / n3;
    for (let a = 0; a < H4; a++) {
      for (let b = 0; b < H4; b++) {
        let cc = 0;
        for (let j = 0; j < q; j++) cc += C[a * q + j] * C[b * q + j];
        for (let c = 0; c < 3; c++) A[(3 * a + c) * n3 + 3 * b + c] += gamma * cc;
      }
    }
    const L = cholesky(A, n3);
    const W = new Float64Array(n3 * q3);  // A'^-1 (C kron I3), (3m, 3q)
    for (let a = 0; a < H4; a++) {
      for (let j = 0; j < q; j++) {
        for (let c = 0; c < 3; c++) W[(3 * a + c) * q3 + 3 * j + c] = C[a * q + j];
      }
    }
    cholSolve(L, W, q3);
    const S = new Float64Array(q3 * q3);  // (C kron I3)^T W
    for (let a = 0; a < H4; a++) {
      for (let j = 0; j < q; j++) {
        const v = C[a * q + j];
        if (v === 0) continue;
        for (let c = 0; c < 3; c++) {
          const row = (3 * a + c) * q3;
          for (let k = 0; k < q3; k++) S[(3 * j + c) * q3 + k] += v * W[row + k];
        }
      }
    }
    this.factor = { L, W, S: cholesky(S, q3), C, q };
  }

  /** (m, m - r) orthonormal columns spanning what N's do not (Gram-Schmidt, twice). */
  _complement() {
    if (this.C) return this.C;
    const m = this.H4, r = this.r, N = this.N, cols = [];
    const v = new Float64Array(m);
    for (let e = 0; e < m && cols.length < m - r; e++) {
      v.fill(0);
      v[e] = 1;
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < r; i++) {
          let d = 0;
          for (let a = 0; a < m; a++) d += N[a * r + i] * v[a];
          for (let a = 0; a < m; a++) v[a] -= d * N[a * r + i];
        }
        for (const u of cols) {
          const d = dot(u, v);
          for (let a = 0; a < m; a++) v[a] -= d * u[a];
        }
      }
      const len = Math.sqrt(dot(v, v));
      if (len > 0.5) cols.push(Float64Array.from(v, (x) => x / len));
    }
    const q = cols.length;
    this.C = new Float64Array(m * q);
    cols.forEach((u, j) => { for (let a = 0; a < m; a++) this.C[a * q + j] = u[a]; });
    return this.C;
  }

  /** The preconditioner's solve of a gradient in the free directions (r, 3). */
  _solve(g) {
    const f = this.factor;
    if (!f.W) return cholSolve(f, Float64Array.from(g), 1);
    const H4 = this.H4, r = this.r, N = this.N, q3 = 3 * f.q;
    const u = new Float64Array(3 * H4);  // (N kron I3) g
    for (let a = 0; a < H4; a++) {
      for (let i = 0; i < r; i++) {
        const v = N[a * r + i];
        if (v === 0) continue;
        for (let c = 0; c < 3; c++) u[3 * a + c] += v * g[3 * i + c];
      }
    }
    cholSolve(f.L, u, 1);
    const w = new Float64Array(q3);  // (C kron I3)^T u
    for (let a = 0; a < H4; a++) {
      for (let j = 0; j < f.q; j++) {
        for (let c = 0; c < 3; c++) w[3 * j + c] += f.C[a * f.q + j] * u[3 * a + c];
      }
    }
    cholSolve(f.S, w, 1);
    for (let i = 0; i < 3 * H4; i++) {
      let s = 0;
      for (let k = 0; k < q3; k++) s += f.W[i * q3 + k] * w[k];
      u[i] -= s;
    }
    return dense(N, u, r, H4, 3, true);
  }

  /** N (N^T M N)^-1 N^T f: the accelerations (4H, 3) a force gives. */
  accelerate(f) {
    const y = dense(this.N, f, this.r, this.H4, 3, true);
    cholSolve(this.massFactor, y, 3);
    return dense(this.N, y, this.H4, this.r, 3);
  }

  // -- one step ---------------------------------------------------------------------------

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
  }

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
  }

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
  }

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
   * as handle_motion._push says. */
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
   * ``v`` (3, m/s), as ``--push`` moves a region (handle_motion._push). */
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

  _minimize(Zn, Zt, contact) {
    const N = this.N, r = this.r, H4 = this.H4, h = this.hh;
    const toZ = (Y) => dense(N, Y, H4, r, 3);
    const toY = (Zg) => dense(N, Zg, r, H4, 3, true);
    let Y = toY(Zt);
    let [val, gz] = this.potential(toZ(Y), Zn, Zt, contact);
    let g = toY(gz);
    const sHist = [], yHist = [];
    const dz = new Float64Array(Zt.length);
    for (let i = 0; i < dz.length; i++) dz[i] = Zt[i] - Zn[i];
    const moving = 0.5 * dot(dz, dense(this.M, dz, H4, H4, 3)) / (h * h);
    const scale = this.k.tolerance * Math.max(this.weight + moving, Math.abs(val), 1e-300);
    for (let it = 1; it <= this.k.iterations; it++) {
      const d = this._twoLoop(g, sHist, yHist);
      for (let i = 0; i < d.length; i++) d[i] = -d[i];
      const slope = dot(g, d);
      if (-slope < scale) return [toZ(Y), it - 1];
      let alpha = 1, Yc, vc, ok = false;
      for (let tries = 0; tries < 12; tries++) {
        Yc = new Float64Array(Y.length);
        for (let i = 0; i < Y.length; i++) Yc[i] = Y[i] + alpha * d[i];
        [vc, gz] = this.potential(toZ(Yc), Zn, Zt, contact);
        if (vc <= val + 1e-4 * alpha * slope) { ok = true; break; }
        alpha *= 0.5;
      }
      if (!ok) return [toZ(Y), it];
      const gc = toY(gz);
      const s = new Float64Array(Y.length), y = new Float64Array(Y.length);
      for (let i = 0; i < Y.length; i++) { s[i] = Yc[i] - Y[i]; y[i] = gc[i] - g[i]; }
      sHist.push(s);
      yHist.push(y);
      if (sHist.length > this.k.history) { sHist.shift(); yHist.shift(); }
      Y = Yc;
      val = vc;
      g = gc;
      if (contact && this.k.refresh_at.includes(it)) {  // a hard step (a landing): the
        this._refresh(contact, toZ(Y), Zn);  // preconditioner from where it is now
        sHist.length = 0;
        yHist.length = 0;
      }
    }
    return [toZ(Y), this.k.iterations];
  }

  /** The contact's candidates' heights over their rest at Z (their rows of Z's y column). */
  _lift(ct, Z) {
    const zy = new Float64Array(this.H4);
    for (let a = 0; a < this.H4; a++) zy[a] = Z[3 * a + 1];
    return mul(ct.rows, zy, 1);
  }

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
  }

  _twoLoop(g, sHist, yHist) {
    let q = Float64Array.from(g);
    const alphas = [];
    for (let k = sHist.length - 1; k >= 0; k--) {
      const sy = dot(sHist[k], yHist[k]);
      if (sy <= 1e-300) { alphas.push(null); continue; }
      const a = dot(sHist[k], q) / sy;
      alphas.push([a, sy]);
      for (let i = 0; i < q.length; i++) q[i] -= a * yHist[k][i];
    }
    const r = this._solve(q);
    for (let k = 0; k < sHist.length; k++) {
      const a = alphas[sHist.length - 1 - k];
      if (a === null) continue;
      const b = dot(yHist[k], r) / a[1];
      for (let i = 0; i < r.length; i++) r[i] += sHist[k][i] * (a[0] - b);
    }
    return r;
  }
}

/** Integrate ``seconds`` from the model's start (its pushes applied as they come) ->
 * vertex positions (N * 3 floats, metres) at each frame, the first at rest. */
export function integrate(stepper, seconds) {
  const v = stepper.values, a = stepper.arrays;
  const st = stepper.start();
  const frames = [stepper.positions(st.Z)];
  const pushes = a.push_time ? Array.from(a.push_time, (t, i) => [t, i]) : [];
  const n3 = stepper.H4 * 3;
  const count = Math.floor(seconds * v.fps + 1e-9);
  for (let fi = 1; fi <= count; fi++) {
    for (let s = 0; s < v.substeps; s++) {
      const t = ((fi - 1) * v.substeps + s) * v.step;
      while (pushes.length && pushes[0][0] <= t + 1e-12) {
        const i = pushes.shift()[1];
        stepper.push(st, a.push_momentum.subarray(i * n3, (i + 1) * n3));
      }
      st.t = t;
      stepper.step(st);
    }
    frames.push(stepper.positions(st.Z));
  }
  return { frames, steps: st.steps, iterations: st.iterations };
}

/** Column-major 4x4 bone matrices (16 floats a handle) of the skinning that Z gives:
 * x -> x + A_h (x - c_h) + t_h, so that sum_h w_h T_h x is the rest point moved by Z. */
export function boneMatrices(Z, centres, out) {
  const H = centres.length / 3;
  for (let hh = 0; hh < H; hh++) {
    const o = 16 * hh;
    const t = [0, 1, 2].map((i) => Z[(4 * hh + 3) * 3 + i]);
    for (let i = 0; i < 3; i++) {  // A[i][j] = Z[(4h + j) * 3 + i]
      let ac = 0;
      for (let j = 0; j < 3; j++) {
        const A = Z[(4 * hh + j) * 3 + i];
        out[o + 4 * j + i] = (i === j ? 1 : 0) + A;
        ac += A * centres[3 * hh + j];
      }
      out[o + 12 + i] = t[i] - ac;
    }
    out[o + 3] = 0;
    out[o + 7] = 0;
    out[o + 11] = 0;
    out[o + 15] = 1;
  }
  return out;
}
