// The page `neurok animate X -o x.html` writes (render/page.py): the clip's GLB, played with
// three.js on its ground, lit as `neurok preview` lights it, with an orbiting camera; then,
// where the clip came from the object's own handles, the object itself, live: the reduced
// model's own steps (reduced.js) move it, a drag pulls a point, a click pokes it
// (page_live.js); a cloth's model (its "kind": "cloth") is stepped as the cloth's own
// projective dynamics (cloth.js) and shown as plain meshes (cloth_live.js).
//
// The page's own data (a JSON script, id "neurok-config") gives the framing `neurok preview`
// computes (centre, radius, ground height, camera angles), the lights' colours and the
// caption; the GLB is base64 in a script with id "neurok-model", the reduced model
// (deflated, docs/reduced-model.md) in one with id "neurok-live". window.neurok is what a
// test (tests/interop/test_page.py) or a user's console reads: ready, duration, time,
// play(), pause(), seek(t), sample(t) (every vertex in world space at time t), and `live`
// (Live.api) where the page steps the model itself.

import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { MeshoptDecoder } from "three/addons/libs/meshopt_decoder.module.js";
import { ClothLive } from "./cloth_live.js";
import { bytes, inflated } from "./page_data.js";
import { Live } from "./page_live.js";
import { readModel } from "./reduced_model.js";

const config = JSON.parse(document.getElementById("neurok-config").textContent);
const api = { ready: false, error: null };
window.neurok = api;

function linear(rgb) {
  return new THREE.Color().setRGB(rgb[0], rgb[1], rgb[2], THREE.LinearSRGBColorSpace);
}

function stage(renderer) {
  const L = config.lighting;
  const scene = new THREE.Scene();
  scene.background = linear(L.background);
  const centre = new THREE.Vector3(...config.centre);
  const r = config.radius;
  const az = THREE.MathUtils.degToRad(config.azimuth);
  const el = THREE.MathUtils.degToRad(config.elevation);
  const toward = new THREE.Vector3(Math.sin(az) * Math.cos(el), Math.sin(el),
                                   Math.cos(az) * Math.cos(el));
  const aspect = innerWidth / innerHeight;
  const half = THREE.MathUtils.degToRad(config.fov) / 2;
  const fit = Math.min(half, Math.atan(Math.tan(half) * aspect));
  const camera = new THREE.PerspectiveCamera(config.fov, aspect, 0.01 * r, 200 * r);
  camera.position.copy(centre).addScaledVector(toward, 1.1 * r / Math.sin(fit));
  // the key light from the viewer's upper left and a little in front, as preview's
  const right = new THREE.Vector3(Math.cos(az), 0, -Math.sin(az));
  const front = new THREE.Vector3(Math.sin(az), 0, Math.cos(az));
  const dir = right.multiplyScalar(-0.6).add(new THREE.Vector3(0, 1, 0))
    .addScaledVector(front, 0.4).normalize();
  const key = new THREE.DirectionalLight(linear(L.key), Math.PI);
  key.position.copy(centre).addScaledVector(dir, 4 * r);
  key.target.position.copy(centre);
  key.castShadow = true;
  Object.assign(key.shadow.camera, { left: -1.5 * r, right: 1.5 * r, top: 1.5 * r,
                                     bottom: -1.5 * r, near: 0.1 * r, far: 12 * r });
  key.shadow.mapSize.set(2048, 2048);
  key.shadow.bias = -0.0005;
  scene.add(key, key.target, new THREE.HemisphereLight(linear(L.sky), linear(L.bounce),
                                                        Math.PI));
  if (config.ground !== null) {
    const floor = new THREE.Mesh(new THREE.CircleGeometry(12 * r, 64),
                                 new THREE.MeshLambertMaterial({ color: linear(
                                   [L.ground, L.ground, L.ground]) }));
    floor.rotation.x = -Math.PI / 2;
    floor.position.set(centre.x, config.ground, centre.z);
    floor.receiveShadow = true;
    scene.add(floor);
    scene.fog = new THREE.Fog(scene.background, 4 * r + camera.position.distanceTo(centre),
                              12 * r + camera.position.distanceTo(centre));
  }
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.copy(centre);
  controls.enableDamping = true;
  controls.update();
  return { scene, camera, controls };
}

/** The live object for the page's model: a cloth's (cloth_live.js) or the handles'. */
async function liveObject(...args) {
  const model = readModel(await inflated("neurok-live"));
  return new (model.values.kind === "cloth" ? ClothLive : Live)(model, ...args);
}

async function main() {
  const renderer = new THREE.WebGLRenderer({ antialias: true });
  renderer.setPixelRatio(devicePixelRatio);
  renderer.setSize(innerWidth, innerHeight);
  renderer.shadowMap.enabled = true;
  renderer.shadowMap.type = THREE.PCFSoftShadowMap;
  document.getElementById("view").appendChild(renderer.domElement);
  const { scene, camera, controls } = stage(renderer);
  const gltf = await new GLTFLoader().setMeshoptDecoder(MeshoptDecoder)
    .parseAsync(bytes("neurok-model"), "");
  gltf.scene.traverse((o) => { if (o.isMesh) { o.castShadow = true; o.receiveShadow = true; } });
  scene.add(gltf.scene);
  const mixer = new THREE.AnimationMixer(gltf.scene);
  const clips = gltf.animations.slice(0, 1);  // ours first: the one the file was written for
  const actions = clips.map((c) => {  // held at its last key at its end, as glTF defines a
    const a = mixer.clipAction(c).setLoop(THREE.LoopOnce, 1);  // clip (a repeat would show
    a.clampWhenFinished = true;  // the start again at exactly the end)
    return a.play();
  });
  const duration = clips.length ? clips[0].duration : 0;
  let time = 0, playing = true, last = performance.now();
  const slider = document.getElementById("time");
  const button = document.getElementById("play");
  const show = (t) => {
    if (live) live.leave();
    time = Math.min(Math.max(t, 0), duration);
    for (const a of actions) a.reset();  // a finished clip stops: start it again
    mixer.setTime(time);
    slider.value = duration ? String(time / duration) : "0";
    document.getElementById("clock").textContent = `${time.toFixed(2)} / ${duration.toFixed(2)} s`;
  };
  const setPlaying = (on) => { playing = on; button.textContent = on ? "Pause" : "Play"; };
  const goLive = () => { if (!live.on) { live.enter(time); setPlaying(true); } };
  button.onclick = () => {
    if (!playing && time >= duration && !(live && live.on)) show(0);
    setPlaying(!playing);
  };
  document.getElementById("reset").onclick = () => { show(0); setPlaying(true); };
  slider.oninput = () => { setPlaying(false); show(Number(slider.value) * duration); };
  addEventListener("keydown", (e) => {
    if (e.key === " ") { e.preventDefault(); button.click(); }
  });
  addEventListener("resize", () => {
    camera.aspect = innerWidth / innerHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(innerWidth, innerHeight);
  });
  const meshes = [];
  gltf.scene.traverse((o) => { if (o.isMesh) meshes.push(o); });
  gltf.scene.updateMatrixWorld(true);
  const live = config.live ? await liveObject(scene, meshes, camera, controls, renderer,
                                              gltf.animations.slice(1)) : null;
  const v = new THREE.Vector3();
  Object.defineProperty(api, "time", { get: () => time });  // (assign would copy the value)
  Object.assign(api, {
    duration,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    seek: (t) => show(t),
    live: live ? live.api(goLive) : null,
    sample(t) {  // every mesh's vertices at time t, in world space (x, y, z, ...)
      show(t);
      gltf.scene.updateMatrixWorld(true);
      const out = [];
      for (const m of meshes) {
        for (let i = 0; i < m.geometry.attributes.position.count; i++) {
          m.getVertexPosition(i, v).applyMatrix4(m.matrixWorld);
          out.push(v.x, v.y, v.z);
        }
      }
      return out;
    },
  });
  if (live) live.listen(goLive);
  show(0);
  renderer.setAnimationLoop((now) => {
    const wall = (now - last) / 1000, dt = Math.min(wall, 0.1);
    last = now;
    if (live && live.on) {
      try {
        if (playing) live.run(wall, 0.025);
        live.clock();
      } catch (e) {  // (a throw here would end the animation loop)
        console.warn(e);
        show(duration);
        setPlaying(false);
        document.getElementById("caption").textContent =
          `The live object stopped (${e.message}); Reset plays the clip again.`;
      }
    } else if (playing) {
      show(time + dt);
      if (time >= duration) {  // the clip is over: the object stays, live (or stops)
        if (live) live.enter(duration);
        else setPlaying(false);
      }
    }
    controls.update();
    renderer.render(scene, camera);
  });
  api.ready = true;
}

main().catch((e) => {
  api.error = String(e);
  document.getElementById("caption").textContent = `This page could not start: ${e}`;
  throw e;
});
