// The material's laws at one element or patch: stable Neo-Hookean (a solid), a sheet's
// St. Venant-Kirchhoff membrane in plane stress, a patch's mean-strain membrane, and the
// laws' tangent (as the Python step's elastic module has them).

import { symEigen3 } from "./reduced_dense.js";

// -- the material -------------------------------------------------------------------------

/** Energy density and first Piola stress P (3 x d, row-major) of F (3 x d). */
const COF = new Float64Array(9);

export function material(law, F, d, P) {
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

const EIG = new Float64Array(3), EIGV = new Float64Array(9);

/** A patch's mean strain E (3 x 3, row-major) -> its energy density, and its second Piola
 * stress into S (3 x 3): the membrane's law with its compressed part weighed by
 * law.compression, over the three eigenvalues (the elastic module's patch_stress). */
export function patchStress(law, E, S) {
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
 * deform/own/laws.py's _tangent). */
export function tangent(law, F0, d) {
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
