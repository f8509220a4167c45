// A cloth's simulation positions carried to the welded surface the page binds (docs/
// reduced-model.md, "Cloth"): fixed parts (a flag's pole) stay at rest; without a proxy each
// cloth vertex is a simulation vertex; with one it follows its simulation vertices, each
// turned as the ring around it turned (meshing/proxy.py: Proxy.turns and carry:
// x' = sum_k w_k (p'_k + R_k (x - p_k))).

import { polar } from "./reduced_dense.js";

export class Carry {
  constructor(values, arrays) {
    const a = arrays;
    this.rest = a.rest;  // (N, 3) the welded surface
    this.cloth = a.cloth_vertex;  // (N,) cloth index or -1
    this.proxy = Boolean(values.proxy);
    if (!this.proxy) return;
    this.simRest = a.sim_rest;
    this.clothRest = a.cloth_rest;
    this.index = a.carry_index;
    this.weight = a.carry_weight;
    this.k = a.carry_index.shape[1];
    this.ring = a.ring_index;
    this.ringWeight = a.ring_weight;
    this.r = a.ring_index.shape[1];
    const M = this.simRest.length / 3;
    this.restCentred = new Float64Array(M * this.r * 3);  // each ring at rest, centred
    for (let m = 0; m < M; m++) this._centred(this.simRest, m, this.restCentred, 3 * m * this.r);
    this.turns = new Float64Array(9 * M);
  }

  /** Ring m's positions in ``x`` less their weighted mean, into ``out`` from ``o``. */
  _centred(x, m, out, o) {
    const r = this.r, mean = [0, 0, 0];
    for (let q = 0; q < r; q++) {
      const w = this.ringWeight[m * r + q], p = 3 * this.ring[m * r + q];
      for (let c = 0; c < 3; c++) mean[c] += w * x[p + c];
    }
    for (let q = 0; q < r; q++) {
      const p = 3 * this.ring[m * r + q];
      for (let c = 0; c < 3; c++) out[o + 3 * q + c] = x[p + c] - mean[c];
    }
  }

  /** Each simulation vertex's rotation (3x3 row-major) at positions ``x``: the rotation
   * nearest sum_r w_r now_r rest_r^T (shape matching over its ring). */
  _turn(x) {
    const M = this.simRest.length / 3, r = this.r, now = new Float64Array(r * 3);
    const A = new Float64Array(9), R = new Float64Array(9);
    for (let m = 0; m < M; m++) {
      this._centred(x, m, now, 0);
      A.fill(0);
      const o = m * r * 3;
      for (let q = 0; q < r; q++) {
        const w = this.ringWeight[m * r + q];
        for (let i = 0; i < 3; i++) {
          const wi = w * now[3 * q + i];
          for (let j = 0; j < 3; j++) A[3 * i + j] += wi * this.restCentred[o + 3 * q + j];
        }
      }
      polar(A, R);
      this.turns.set(R, 9 * m);
    }
  }

  /** The welded surface (N * 3) at simulation positions ``x`` (M * 3). */
  welded(x, out = new Float64Array(this.rest.length)) {
    out.set(this.rest);
    const N = this.cloth.length;
    if (!this.proxy) {
      for (let p = 0; p < N; p++) {
        const c = this.cloth[p];
        if (c < 0) continue;
        out[3 * p] = x[3 * c];
        out[3 * p + 1] = x[3 * c + 1];
        out[3 * p + 2] = x[3 * c + 2];
      }
      return out;
    }
    this._turn(x);
    const k = this.k, X = this.clothRest, P = this.simRest, T = this.turns;
    for (let p = 0; p < N; p++) {
      const c = this.cloth[p];
      if (c < 0) continue;
      let s0 = 0, s1 = 0, s2 = 0;
      for (let q = 0; q < k; q++) {
        const w = this.weight[c * k + q];
        if (w === 0) continue;
        const m = this.index[c * k + q], R = 9 * m;
        const d0 = X[3 * c] - P[3 * m], d1 = X[3 * c + 1] - P[3 * m + 1];
        const d2 = X[3 * c + 2] - P[3 * m + 2];
        s0 += w * (x[3 * m] + T[R] * d0 + T[R + 1] * d1 + T[R + 2] * d2);
        s1 += w * (x[3 * m + 1] + T[R + 3] * d0 + T[R + 4] * d1 + T[R + 5] * d2);
        s2 += w * (x[3 * m + 2] + T[R + 6] * d0 + T[R + 7] * d1 + T[R + 8] * d2);
      }
      out[3 * p] = s0;
      out[3 * p + 1] = s1;
      out[3 * p + 2] = s2;
    }
    return out;
  }
}
