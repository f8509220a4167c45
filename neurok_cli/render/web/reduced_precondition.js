// The Stepper's preconditioner (reduced_step.js installs these methods): the Cholesky factor
// of the turned rest Hessian + M/h'^2 + bending + contact over the free directions N, its
// solve, and the mass's (accelerate).

import { cholesky, cholSolve, dense, dot } from "./reduced_dense.js";
import { gram, take } from "./reduced_sparse.js";

// -- the preconditioner -----------------------------------------------------------------

export const preconditioner = {
  _turned() {
    let lo = 1;
    for (let hh = 0; hh < this.H; hh++) {
      let tr = 0;
      for (let i = 0; i < 9; i++) tr += this.factorR[9 * hh + i] * this.Rh[9 * hh + i];
      lo = Math.min(lo, (tr - 1) / 2);
    }
    return Math.acos(Math.min(Math.max(lo, -1), 1));
  },

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
  },

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
  },

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
  },

  /** N (N^T M N)^-1 N^T f: the accelerations (4H, 3) a force gives. */
  accelerate(f) {
    const y = dense(this.N, f, this.r, this.H4, 3, true);
    cholSolve(this.massFactor, y, 3);
    return dense(this.N, y, this.H4, this.r, 3);
  },
};
