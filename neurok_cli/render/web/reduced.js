// The reduced model's own steps, in the page (docs/reduced-model.md): the same implicit
// BDF2 steps over affine handle coordinates that `neurok animate` integrates
// (deform/own/step.py), read from the model's description (io/reduced.py writes it).
// Each step minimizes the incremental potential (inertia, the material's energy, bending,
// Rayleigh damping, the ground's penalty and friction) with L-BFGS preconditioned by the
// turned rest Hessian, as the Python step does, in float64; the page adds a pulling spring.
//
// Arrays in Z's layout are Float64Array(4H * 3), row-major: row 4h + i (i < 3) holds
// handle h's affine map transposed, row 4h + 3 its translation.

// The modules, by concern: reduced_model.js reads the bytes; reduced_step.js holds the
// Stepper (its state and one step), whose methods live in reduced_elastic.js (the elements'
// operator and rest Hessian), reduced_potential.js (forces and the incremental potential),
// reduced_contact.js (the ground and friction), reduced_precondition.js and
// reduced_minimize.js (L-BFGS); reduced_material.js, reduced_sparse.js and reduced_dense.js
// the laws and algebra they share. This one drives a run and gives three.js its bones. The
// page names each by an import map ("neurok/reduced/step"; render/page.py).

import { Stepper } from "./reduced_step.js";

export { readModel } from "./reduced_model.js";
export { Stepper };

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
