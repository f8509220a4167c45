// Dense algebra for the reduced model's steps, row-major Float64Arrays: Cholesky factors and
// their solves, products, a 4x4 solve, and a 3x3 symmetric eigensolver with the polar
// factor (a handle's rotation) built on it.

// -- dense algebra ----------------------------------------------------------------------

/** Cholesky factor (lower, in place) of the (n, n) symmetric positive definite A. */
export function cholesky(A, n) {
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
export function cholSolve(f, b, m) {
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
export function dense(A, X, a, b, m, trans = false, out = new Float64Array(a * m)) {
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
export function solve4(A, B, k) {
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

export function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** The rotation nearest the 3x3 row-major F (its polar factor; a reflection's smallest
 * direction flipped), from the eigenvectors of F^T F. */
export function polar(F, out = new Float64Array(9)) {
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

/** Eigenvalues (lam, 3) and eigenvectors (V, 3 x 3 row-major, columns) of a symmetric 3 x 3
 * A (row-major), by cyclic Jacobi rotations. */
export function symEigen3(A, lam, V) {
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
