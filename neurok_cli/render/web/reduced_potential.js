// The Stepper's forces and energies (reduced_step.js installs these methods): air's pressure,
// the handles' lagged rotations and bending's lagged linear part, and the incremental
// potential a step minimizes (inertia, the material, bending, Rayleigh damping, the ground
// through reduced_contact.js, the page's pulling spring) with its gradient.

import { dense, dot, polar } from "./reduced_dense.js";
import { material } from "./reduced_material.js";
import { mul, mulT } from "./reduced_sparse.js";

// -- forces and energies ----------------------------------------------------------------

export const potential = {
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
  },

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
  },

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
  },

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
  },

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
  },
};
