// Integrate a reduced model (io/reduced.py's bytes) with the page's own steps
// (neurok_cli/render/web/reduced.js, which imports its reduced_*.js modules by relative
// paths, as node reads them) and write every frame's vertices, float64 little-endian
// (frames, vertices, 3), for tests/interop/test_reduced_js.py.
//   node tools/reduced_run.mjs MODEL SECONDS OUT [LAZY]
//
// LAZY: steps a factor is kept though the handles turn or the object slides (the live
// page's 8; animate's 0, the default). Prints JSON: frames, steps, minimizer iterations a
// step, the set-up's seconds, milliseconds a step and the step (s).
import { readFileSync, writeFileSync } from "node:fs";
import { integrate, readModel, Stepper } from "../neurok_cli/render/web/reduced.js";

const [model, seconds, out, lazy = "0"] = process.argv.slice(2);
const bytes = readFileSync(model);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const start = performance.now();
const stepper = new Stepper(readModel(buffer));
stepper.lazy = Number(lazy);
const ready = performance.now();
const run = integrate(stepper, Number(seconds));
const done = performance.now();
const all = new Float64Array(run.frames.length * run.frames[0].length);
run.frames.forEach((f, i) => all.set(f, i * f.length));
writeFileSync(out, Buffer.from(all.buffer));
console.log(JSON.stringify({ frames: run.frames.length, steps: run.steps,
                             iterations: run.iterations / Math.max(run.steps, 1),
                             setup_s: (ready - start) / 1000, step_ms: (done - ready) / run.steps,
                             step_s: stepper.h }));
