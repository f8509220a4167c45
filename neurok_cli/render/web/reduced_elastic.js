// The Stepper's elements (reduced_step.js installs these methods): the elements' operator D
// from Z to the deformation gradients, the elastic energy's rest Hessian (with a cloth's
// patches' share), and the patches' energy and stress at a state.

import { solve4 } from "./reduced_dense.js";
import { patchStress, tangent } from "./reduced_material.js";

export const elastic = {
  /** The elements' operator D (E d, 4H): (D Z)[e d + j, c] = dF_e[c, j], built from what
   * the model holds as deform/own/elements.py builds it: a sheet's triangles over the vertices' rows,
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
  },

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
  },

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
  },

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
  },
};
