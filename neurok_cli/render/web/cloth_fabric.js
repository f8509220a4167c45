// A cloth's local step and its air, in the page (docs/reduced-model.md, "Cloth"): ports of
// deform/own/fabric.py's compiled projections (_clamp_stretch, _vertex_normals,
// _turn_curvature) and of cloth_step.py's ClothStep.air_force, operation for operation, so
// that the page's steps give the Python steps' positions to rounding.
//
// Positions, normals and forces are Float64Array(3n), row-major (x, y, z per vertex).

/** Rows (2F, 3) of deformation gradients F_t (3, 2) -> the nearest F_t V diag(s) V^T with
 * V, s from F_t^T F_t's eigen-decomposition: its singular values clamped to [lo, hi]
 * (fabric.py: _clamp_stretch). */
export function clampStretch(Fx, lo, hi, out = new Float64Array(Fx.length)) {
  const T = Fx.length / 6;
  for (let t = 0; t < T; t++) {
    const o = 6 * t;
    const a0 = Fx[o], a1 = Fx[o + 1], a2 = Fx[o + 2];  // F's two columns
    const b0 = Fx[o + 3], b1 = Fx[o + 4], b2 = Fx[o + 5];
    const a = a0 * a0 + a1 * a1 + a2 * a2;
    const b = a0 * b0 + a1 * b1 + a2 * b2;
    const d = b0 * b0 + b1 * b1 + b2 * b2;
    const m = 0.5 * (a + d);
    const r = Math.sqrt(0.25 * (a - d) ** 2 + b * b);
    const l1 = m + r, l2 = Math.max(m - r, 0.0);  // F^T F's eigenvalues, l1 >= l2
    let v0 = 1.0, v1 = 0.0;
    if (r > 1e-14 * Math.max(m, 1e-300)) {  // the first eigenvector
      if (a >= d) { v0 = l1 - d; v1 = b; } else { v0 = b; v1 = l1 - a; }
      const s = Math.sqrt(v0 * v0 + v1 * v1);
      v0 /= s;
      v1 /= s;
    }
    const s1 = Math.sqrt(l1), s2 = Math.sqrt(l2);
    const c1 = s1 > 1e-12 ? Math.min(Math.max(s1, lo), hi) / s1 : 1.0;
    const c2 = s2 > 1e-12 ? Math.min(Math.max(s2, lo), hi) / s2 : 1.0;
    // S = c1 v v^T + c2 w w^T with w = (-v1, v0)
    const s00 = c1 * v0 * v0 + c2 * v1 * v1;
    const s01 = (c1 - c2) * v0 * v1;
    const s11 = c1 * v1 * v1 + c2 * v0 * v0;
    out[o] = a0 * s00 + b0 * s01;
    out[o + 1] = a1 * s00 + b1 * s01;
    out[o + 2] = a2 * s00 + b2 * s01;
    out[o + 3] = a0 * s01 + b0 * s11;
    out[o + 4] = a1 * s01 + b1 * s11;
    out[o + 5] = a2 * s01 + b2 * s11;
  }
  return out;
}

/** (n, 3) unit normals, the sum of each vertex's triangles' area vectors (a vertex of no
 * triangle: +y) (fabric.py: _vertex_normals). */
export function vertexNormals(x, faces, out = new Float64Array(x.length)) {
  out.fill(0);
  for (let t = 0; t < faces.length; t += 3) {
    const a = 3 * faces[t], b = 3 * faces[t + 1], c = 3 * faces[t + 2];
    const u0 = x[b] - x[a], u1 = x[b + 1] - x[a + 1], u2 = x[b + 2] - x[a + 2];
    const v0 = x[c] - x[a], v1 = x[c + 1] - x[a + 1], v2 = x[c + 2] - x[a + 2];
    const cx = u1 * v2 - u2 * v1, cy = u2 * v0 - u0 * v2, cz = u0 * v1 - u1 * v0;
    for (const k of [a, b, c]) {
      out[k] += cx;
      out[k + 1] += cy;
      out[k + 2] += cz;
    }
  }
  for (let i = 0; i < out.length; i += 3) {
    const s = Math.sqrt(out[i] ** 2 + out[i + 1] ** 2 + out[i + 2] ** 2);
    if (s > 1e-300) {
      out[i] /= s;
      out[i + 1] /= s;
      out[i + 2] /= s;
    } else {
      out[i] = 0.0;
      out[i + 1] = 1.0;
      out[i + 2] = 0.0;
    }
  }
  return out;
}

/** Each vertex's rest curvature vector turned by the least rotation taking its rest normal
 * to its normal now, Rodrigues' (fabric.py: _turn_curvature). */
export function turnCurvature(restCurv, restN, n, out = new Float64Array(restCurv.length)) {
  for (let i = 0; i < restCurv.length; i += 3) {
    const a0 = restN[i], a1 = restN[i + 1], a2 = restN[i + 2];
    const b0 = n[i], b1 = n[i + 1], b2 = n[i + 2];
    const k0 = a1 * b2 - a2 * b1, k1 = a2 * b0 - a0 * b2, k2 = a0 * b1 - a1 * b0;  // sin axis
    const c = a0 * b0 + a1 * b1 + a2 * b2;
    const p0 = restCurv[i], p1 = restCurv[i + 1], p2 = restCurv[i + 2];
    if (c < -1.0 + 1e-9) {  // turned over: a half turn about any axis across the normal
      out[i] = -p0;
      out[i + 1] = -p1;
      out[i + 2] = -p2;
      continue;
    }
    const kp0 = k1 * p2 - k2 * p1, kp1 = k2 * p0 - k0 * p2, kp2 = k0 * p1 - k1 * p0;
    const kk0 = k1 * kp2 - k2 * kp1, kk1 = k2 * kp0 - k0 * kp2, kk2 = k0 * kp1 - k1 * kp0;
    const q = 1.0 / (1.0 + c);
    out[i] = p0 + kp0 + q * kk0;
    out[i + 1] = p1 + kp1 + q * kk1;
    out[i + 2] = p2 + kp2 + q * kk2;
  }
  return out;
}

/** (n, 3) the air's pressure on each triangle from the wind relative to it: across it, and
 * ``skin`` of that along it, a third to each corner (cloth_step.py: ClothStep.air_force).
 * ``air``: pressure over the square of the speed (0: none); the wind has its gust, a
 * share ``gust`` of it at ``hz``. */
export function airForce(x, v, t, faces, { air, wind, gust, hz, skin },
                         out = new Float64Array(x.length)) {
  out.fill(0);
  if (air === 0) return out;
  const g = 1.0 + gust * Math.sin(2 * Math.PI * hz * t);
  const w0 = wind[0] * g, w1 = wind[1] * g, w2 = wind[2] * g;
  const F = faces.length / 3, push = new Float64Array(3 * F);
  for (let t3 = 0; t3 < 3 * F; t3 += 3) {
    const a = 3 * faces[t3], b = 3 * faces[t3 + 1], c = 3 * faces[t3 + 2];
    const e0 = x[b] - x[a], e1 = x[b + 1] - x[a + 1], e2 = x[b + 2] - x[a + 2];
    const f0 = x[c] - x[a], f1 = x[c + 1] - x[a + 1], f2 = x[c + 2] - x[a + 2];
    const n0 = 0.5 * (e1 * f2 - e2 * f1), n1 = 0.5 * (e2 * f0 - e0 * f2);
    const n2 = 0.5 * (e0 * f1 - e1 * f0);
    const area = Math.sqrt(n0 * n0 + n1 * n1 + n2 * n2), inv = Math.max(area, 1e-30);
    const u0 = n0 / inv, u1 = n1 / inv, u2 = n2 / inv;
    const r0 = w0 - (v[a] + v[b] + v[c]) / 3;  // the wind relative to the triangle
    const r1 = w1 - (v[a + 1] + v[b + 1] + v[c + 1]) / 3;
    const r2 = w2 - (v[a + 2] + v[b + 2] + v[c + 2]) / 3;
    const vn = r0 * u0 + r1 * u1 + r2 * u2;
    const s0 = r0 - vn * u0, s1 = r1 - vn * u1, s2 = r2 - vn * u2;  // along the sheet
    const across = vn * Math.abs(vn), along = skin * Math.sqrt(s0 * s0 + s1 * s1 + s2 * s2);
    push[t3] = air * area * (across * u0 + along * s0);
    push[t3 + 1] = air * area * (across * u1 + along * s1);
    push[t3 + 2] = air * area * (across * u2 + along * s2);
  }
  for (let k = 0; k < 3; k++) {  // a third to each corner, corner by corner (np.add.at's order)
    for (let t3 = 0; t3 < 3 * F; t3 += 3) {
      const i = 3 * faces[t3 + k];
      out[i] += push[t3] / 3;
      out[i + 1] += push[t3 + 1] / 3;
      out[i + 2] += push[t3 + 2] / 3;
    }
  }
  return out;
}
