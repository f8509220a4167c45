// Play a glTF with three.js in headless Chromium and print its vertices at given times.
//
//   node tools/three_frames.mjs FILE.glb first|all TIME [TIME ...]
//
// The page loads the file with GLTFLoader (meshopt-compressed files decoded by three.js's
// MeshoptDecoder) and plays it with an AnimationMixer: the first
// clip (what most viewers play) or every clip together (what three.js examples do), each held
// at its last key after its end. At each time it reads every mesh's vertices as three.js
// computes them on the CPU (Mesh.getVertexPosition: morph targets with the mesh's influences,
// then skinning) and takes them to world space with the node's world matrix. Prints JSON: {times, meshes: [{name,
// count}], positions: [per time, every mesh's x, y, z concatenated]}.
//
// Chromium is the system's (CHROMIUM, default /usr/bin/chromium); the page's files are served
// through playwright's request routing, so no server or network is needed.

import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const ORIGIN = "http://neurok.test";
const [file, mode, ...timeArgs] = process.argv.slice(2);
if (!file || !["first", "all"].includes(mode) || timeArgs.length === 0) {
  console.error("usage: node three_frames.mjs FILE.glb first|all TIME [TIME ...]");
  process.exit(2);
}
const times = timeArgs.map(Number);

const PAGE = `<!doctype html><script type="importmap">
{"imports": {"three": "/three/build/three.module.js", "three/addons/": "/three/examples/jsm/"}}
</script><script type="module">
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import { MeshoptDecoder } from "three/addons/libs/meshopt_decoder.module.js";
window.sample = async (mode, times) => {
  const data = await (await fetch("/model.glb")).arrayBuffer();
  const gltf = await new GLTFLoader().setMeshoptDecoder(MeshoptDecoder).parseAsync(data, "/");
  const mixer = new THREE.AnimationMixer(gltf.scene);
  const clips = mode === "first" ? gltf.animations.slice(0, 1) : gltf.animations;
  const actions = [];
  for (const clip of clips) {
    // sampled as glTF defines a clip, held at its last key (a viewer's repeat would show the
    // start again at exactly the end time)
    const action = mixer.clipAction(clip).setLoop(THREE.LoopOnce, 1);
    action.clampWhenFinished = true;
    actions.push(action.play());
  }
  const meshes = [];
  gltf.scene.traverse((o) => { if (o.isMesh) meshes.push(o); });
  const v = new THREE.Vector3();
  const positions = times.map((t) => {
    for (const action of actions) action.reset();  // a finished clip stops; start it again
    mixer.setTime(t);
    gltf.scene.updateMatrixWorld(true);
    const out = [];
    for (const mesh of meshes) {
      for (let i = 0; i < mesh.geometry.attributes.position.count; i++) {
        mesh.getVertexPosition(i, v).applyMatrix4(mesh.matrixWorld);
        out.push(v.x, v.y, v.z);
      }
    }
    return out;
  });
  return {
    times, clips: clips.map((c) => c.name), positions,
    meshes: meshes.map((m) => ({ name: m.name, count: m.geometry.attributes.position.count })),
  };
};
window.ready = true;
</script>`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === "/") return route.fulfill({ body: PAGE, contentType: "text/html" });
    if (path === "/model.glb") {
      return route.fulfill({ body: await readFile(file), contentType: "model/gltf-binary" });
    }
    if (path.startsWith("/three/")) {
      const body = await readFile(join(here, "node_modules", path)).catch(() => null);
      if (body) return route.fulfill({ body, contentType: "text/javascript" });
    }
    return route.fulfill({ status: 404, body: "" });
  });
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 60000 })
    .catch((e) => { throw new Error(`${e.message}\n${errors.join("\n")}`); });
  const result = await page.evaluate(([m, t]) => window.sample(m, t), [mode, times]);
  process.stdout.write(JSON.stringify(result));
} finally {
  await browser.close();
}
