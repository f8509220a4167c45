// Integrate a reduced model (io/reduced.py's bytes) with the page's own steps and write
// every frame's vertices, float64 little-endian (frames, vertices, 3), for
// tests/interop/test_reduced_js.py and test_cloth_js.py: the handle model's
// (neurok_cli/render/web/reduced.js) or, for "kind": "cloth", the cloth's (cloth.js: the
// welded surface's vertices), each importing its modules by relative paths, as node reads
// them.
//   node tools/reduced_run.mjs MODEL SECONDS OUT [LAZY] [--repel] [--from FRAME]
//
// LAZY: steps a factor is kept though the handles turn or the object slides (the live
// page's 8; animate's 0, the default; a cloth's factors are fixed). A cloth's: --repel
// turns on the live page's self-repulsion (cloth_repel.js; off, the steps are Python's
// contact-free ones), --from starts at the clip's frame FRAME ("end": its last) as the live
// page takes over, not at the model's start. Prints JSON: frames, steps, minimizer (or a
// cloth's local-global) iterations a step, the set-up's seconds, milliseconds a step and
// the step (s).
import { readFileSync, writeFileSync } from "node:fs";
import { ClothStepper, integrate as integrateCloth } from "../neurok_cli/render/web/cloth.js";
import { integrate, readModel, Stepper } from "../neurok_cli/render/web/reduced.js";

const args = process.argv.slice(2);
const take = (name, valued) => {  // a flag (its value, or itself) taken out of args, or null
  const i = args.indexOf(name);
  return i < 0 ? null : args.splice(i, valued ? 2 : 1)[valued ? 1 : 0];
};
const repel = take("--repel", false) !== null, from = take("--from", true);
const [file, seconds, out, lazy = "0"] = args;
const bytes = readFileSync(file);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const start = performance.now();
const model = readModel(buffer);
const cloth = model.values.kind === "cloth";
const stepper = cloth ? new ClothStepper(model) : new Stepper(model);
stepper.lazy = Number(lazy);
let state;
if (cloth) {
  stepper.repel = repel;
  if (from !== null) {
    state = stepper.clipState(from === "end" ? model.values.frames - 1 : Number(from));
  }
}
const ready = performance.now();
const run = cloth ? integrateCloth(stepper, Number(seconds), state)
  : integrate(stepper, Number(seconds));
const done = performance.now();
const all = new Float64Array(run.frames.length * run.frames[0].length);
run.frames.forEach((f, i) => all.set(f, i * f.length));
writeFileSync(out, Buffer.from(all.buffer));
const iterations = cloth ? run.iterations : run.iterations / Math.max(run.steps, 1);
console.log(JSON.stringify({ frames: run.frames.length, steps: run.steps, iterations,
                             setup_s: (ready - start) / 1000, step_ms: (done - ready) / run.steps,
                             step_s: stepper.h }));
