// The Stepper's minimizer (reduced_step.js installs these methods): preconditioned L-BFGS
// over Y (Z = N Y) with a backtracking line search, refactoring at a hard step.

import { dense, dot } from "./reduced_dense.js";

// -- the minimizer ----------------------------------------------------------------------

export const minimizer = {
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
  },

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
  },
};
