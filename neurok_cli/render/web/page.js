// The page `neurok animate X -o x.html` writes (render/page.py): the clip's GLB, played with
// three.js on its ground, lit as `neurok preview` lights it, with an orbiting camera; then,
// where the clip came from the object's own handles, the object itself, live: the reduced
// model's own steps (reduced.js) move it, a drag pulls a point, a click pokes it.
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
import { boneMatrices, integrate, readModel, Stepper } from "neurok/reduced";

const config = JSON.parse(document.getElementById("neurok-config").textContent);
const api = { ready: false, error: null };
window.neurok = api;

function bytes(id) {
  const text = atob(document.getElementById(id).textContent.trim());
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out.buffer;
}

async function inflated(id) {
  const stream = new Blob([bytes(id)]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).arrayBuffer();
}

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
  const live = config.live ? await Live.create(scene, meshes, camera, controls, renderer,
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

// -- the live object --------------------------------------------------------------------

// steps a preconditioner's factor is kept though the handles turn or the object slides
// (animate's own steps: 0): the flag's flutter 7.9 ms a step in place of 19.5, 4.0 minimizer
// iterations a step in place of 3.9 (node, this machine)
const LAZY = 8;

class Live {
  static async create(scene, meshes, camera, controls, renderer, own) {
    const model = readModel(await inflated("neurok-live"));
    return new Live(model, scene, meshes, camera, controls, renderer, own);
  }

  /** ``own``: the file's own animations (after ours), whose morph weights the live meshes
   * play on, as the clip plays them along. */
  constructor(model, scene, meshes, camera, controls, renderer, own) {
    Object.assign(this, { model, scene, meshes, camera, controls, renderer });
    const a = model.arrays, st = new Stepper(model);
    st.lazy = LAZY;
    this.stepper = st;
    this.on = false;
    this.state = null;
    this.pageVertex = a.page_vertex;
    const A = a.page_from_model;  // world = [x, 1] @ A
    this.toWorld = new THREE.Matrix4().set(A[0], A[3], A[6], A[9], A[1], A[4], A[7], A[10],
                                           A[2], A[5], A[8], A[11], 0, 0, 0, 1);
    this.fromWorld = this.toWorld.clone().invert();
    this.Z = new Float64Array(st.H4 * 3);
    const Z = this.Z, centres = st.centres;
    const skeleton = new THREE.Skeleton(Array.from({ length: st.H }, () => new THREE.Bone()));
    skeleton.update = function () {  // the bones are the handles' affine maps (physics frame)
      boneMatrices(Z, centres, this.boneMatrices);
      if (this.boneTexture) this.boneTexture.needsUpdate = true;
      // and their matrixWorld, which three.js's picking (applyBoneTransform) reads
      this.bones.forEach((b, h) => b.matrixWorld.fromArray(this.boneMatrices, 16 * h));
    };
    const K = a.skin_index.shape[1], top = Math.min(K, 4);
    this.skinned = [];
    const root = new THREE.Group();
    scene.add(root);
    let offset = 0;
    for (const m of meshes) {
      const g0 = m.geometry, count = g0.attributes.position.count;
      const g = new THREE.BufferGeometry();
      for (const [name, attr] of Object.entries(g0.attributes)) g.setAttribute(name, attr);
      // the model's rest, in the mesh's own frame: the bones move it (the GLB's base is not
      // it: a compact encoding's base is shifted, and the clip starts lifted off the ground)
      const toLocal = m.matrixWorld.clone().invert().multiply(this.toWorld);
      const pos = new Float32Array(3 * count), v = new THREE.Vector3(), rest = a.rest;
      for (let i = 0; i < count; i++) {
        const p = 3 * this.pageVertex[offset + i];
        v.set(rest[p], rest[p + 1], rest[p + 2]).applyMatrix4(toLocal).toArray(pos, 3 * i);
      }
      g.setAttribute("position", new THREE.Float32BufferAttribute(pos, 3));
      g.morphAttributes = g0.morphAttributes;  // (ours held at zero; the file's own played)
      g.morphTargetsRelative = g0.morphTargetsRelative;
      if (g0.index) g.setIndex(g0.index);
      for (const grp of g0.groups) g.addGroup(grp.start, grp.count, grp.materialIndex);
      const si = new Uint16Array(4 * count), sw = new Float32Array(4 * count);
      for (let i = 0; i < count; i++) {
        const p = this.pageVertex[offset + i];
        for (let s = 0; s < top; s++) {
          si[4 * i + s] = a.skin_index[p * K + s];
          sw[4 * i + s] = a.skin_weight[p * K + s];
        }
      }
      g.setAttribute("skinIndex", new THREE.Uint16BufferAttribute(si, 4));
      g.setAttribute("skinWeight", new THREE.Float32BufferAttribute(sw, 4));
      const sm = new THREE.SkinnedMesh(g, m.material);
      sm.bindMode = THREE.DetachedBindMode;
      sm.matrixAutoUpdate = false;
      sm.matrix.copy(m.matrixWorld);
      sm.bind(skeleton, this.fromWorld.clone().multiply(m.matrixWorld));
      Object.assign(sm, { frustumCulled: false, castShadow: true, receiveShadow: true,
                          visible: false, offset, name: m.name });
      sm.updateMorphTargets();
      root.add(sm);
      this.skinned.push(sm);
      offset += count;
    }
    // the file's own morph weight tracks, retargeted to the live meshes
    const byName = new Map();
    meshes.forEach((m, i) => {
      byName.set(m.name, this.skinned[i]);
      byName.set(m.uuid, this.skinned[i]);
    });
    this.mixer = new THREE.AnimationMixer(root);
    for (const clip of own) {
      const tracks = clip.tracks.flatMap((t) => {
        const dot = t.name.lastIndexOf(".");
        const [node, prop] = [t.name.slice(0, dot), t.name.slice(dot + 1)];
        const sm = byName.get(node);
        if (prop !== "morphTargetInfluences" || !sm) return [];
        const c = t.clone();
        c.name = `${sm.uuid}.morphTargetInfluences`;
        return [c];
      });
      if (tracks.length) {
        this.mixer.clipAction(new THREE.AnimationClip(clip.name, clip.duration, tracks)).play();
      }
    }
    this.size = model.values.size;
    this.mass = model.values.mass;
    this.raycaster = new THREE.Raycaster();
  }

  /** Step on from the clip at time ``t`` (its nearest frame), showing the object itself. */
  enter(t) {
    const f = Math.min(Math.round(t * this.model.values.fps), this.model.values.frames - 1);
    this.state = this.stepper.clipState(f);
    this.lived = this.moved = 0;
    this.rate = 1;
    this.stepper.factor = null;
    this.on = true;
    this.Z.set(this.state.Z);
    this.mixer.setTime(this.state.t);
    for (const m of this.meshes) m.visible = false;
    for (const m of this.skinned) m.visible = true;
  }

  leave() {
    if (!this.on) return;
    this.on = false;
    this.stepper.pullVertex(null);
    for (const m of this.meshes) m.visible = true;
    for (const m of this.skinned) m.visible = false;
  }

  /** Steps for ``dt`` seconds of motion, or as many as ``budget`` seconds of work allow
   * (the motion then runs slower than life, and the clock says so). */
  run(dt, budget = Infinity) {
    const start = performance.now(), h = this.stepper.h;
    this.owed = Math.min((this.owed || 0) + dt, 0.1);
    let steps = 0;
    while (this.owed >= h && performance.now() - start < 1000 * budget) {
      this.stepper.step(this.state);
      this.owed -= h;
      steps++;
    }
    if (this.owed >= h) this.owed = 0;  // behind: the motion slows down rather than jumps
    if (this.lived > 2) { this.lived /= 2; this.moved /= 2; }  // (the last few seconds)
    this.lived = (this.lived || 0) + Math.min(dt, 0.25);  // seconds of the page's (a gap:
    this.moved = (this.moved || 0) + steps * h;  // a hidden tab's) and of the motion's
    this.rate = this.lived > 0 ? this.moved / this.lived : 1;
    this.mixer.setTime(this.state.t);
    this.Z.set(this.state.Z);
  }

  clock() {
    const rate = this.rate ?? 1;
    document.getElementById("clock").textContent = `live ${this.state.t.toFixed(2)} s` +
      (rate < 0.95 ? ` (${rate.toFixed(2)}x)` : "");
  }

  /** World positions (x, y, z, ...) of the page's vertices for model positions x. */
  world(x) {
    const out = new Array(3 * this.pageVertex.length), e = this.toWorld.elements;
    for (let i = 0; i < this.pageVertex.length; i++) {
      const p = 3 * this.pageVertex[i], a = x[p], b = x[p + 1], c = x[p + 2];
      for (let k = 0; k < 3; k++) {
        out[3 * i + k] = e[k] * a + e[4 + k] * b + e[8 + k] * c + e[12 + k];
      }
    }
    return out;
  }

  toModel(w) { return new THREE.Vector3(...w).applyMatrix4(this.fromWorld).toArray(); }

  /** The model's vertex nearest where a ray from the camera through the pointer hits. */
  pick(event) {
    const r = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2((event.clientX - r.left) / r.width * 2 - 1,
                                  -(event.clientY - r.top) / r.height * 2 + 1);
    this.raycaster.setFromCamera(ndc, this.camera);
    const shown = (this.on ? this.skinned : this.meshes);
    for (const m of shown) if (m.isSkinnedMesh) m.boundingSphere = m.boundingBox = null;  // moved
    const hit = this.raycaster.intersectObjects(shown, false)[0];
    if (!hit) return null;
    const mesh = hit.object, v = new THREE.Vector3();
    let best = null, bestD = Infinity;
    for (const i of [hit.face.a, hit.face.b, hit.face.c]) {
      mesh.getVertexPosition(i, v).applyMatrix4(mesh.matrixWorld);
      const d = v.distanceTo(hit.point);
      if (d < bestD) { bestD = d; best = i; }
    }
    const offset = this.on ? mesh.offset : this.skinned[this.meshes.indexOf(mesh)].offset;
    return { vertex: this.pageVertex[offset + best], point: hit.point.clone(), ndc };
  }

  pullStiffness() { return 10 * this.mass * 9.81 / this.size; }  // its weight at 0.1 size

  /** Pointer handling: a drag pulls the point under it, a click pokes it. */
  listen(goLive) {
    const el = this.renderer.domElement;
    let grab = null;
    const plane = new THREE.Plane(), hitPoint = new THREE.Vector3();
    el.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;  // (the others pan and zoom)
      const got = this.pick(e);
      if (!got) return;
      grab = { ...got, x: e.clientX, y: e.clientY, dragging: false };
      this.controls.enabled = false;
      el.setPointerCapture(e.pointerId);
    }, { capture: true });  // before the orbit controls: a grab does not turn the camera
    el.addEventListener("pointermove", (e) => {
      if (!grab) return;
      if (!grab.dragging && Math.hypot(e.clientX - grab.x, e.clientY - grab.y) < 4) return;
      if (!grab.dragging) {
        grab.dragging = true;
        goLive();
        const dir = this.camera.getWorldDirection(new THREE.Vector3());
        plane.setFromNormalAndCoplanarPoint(dir, grab.point);
      }
      const r = el.getBoundingClientRect();
      this.raycaster.setFromCamera(new THREE.Vector2((e.clientX - r.left) / r.width * 2 - 1,
                                                     -(e.clientY - r.top) / r.height * 2 + 1),
                                   this.camera);
      if (this.raycaster.ray.intersectPlane(plane, hitPoint)) {
        this.stepper.pullVertex(grab.vertex, this.toModel(hitPoint.toArray()),
                                this.pullStiffness(), this.state.Z);
      }
    });
    const up = (e) => {
      if (!grab) return;
      if (!grab.dragging && e.type === "pointerup") {  // a click: a poke along the view
        goLive();
        this.poke(grab.vertex, this.raycaster.ray.direction.toArray());
      }
      this.stepper.pullVertex(null);
      grab = null;
      this.controls.enabled = true;
    };
    el.addEventListener("pointerup", up);
    el.addEventListener("pointercancel", up);
    const st = this.stepper;
    document.getElementById("live").hidden = false;
    const wind = document.getElementById("wind");
    const base = Math.hypot(...st.windBase);
    const dir = base > 0 ? Array.from(st.windBase, (w) => w / base) : [1, 0, 0];
    wind.value = String(base);
    document.getElementById("stiffness").oninput = (e) => {
      goLive();
      st.stiffness = 10 ** Number(e.target.value);
      st.factor = null;
    };
    document.getElementById("gravity").onchange = (e) => {
      goLive();
      st.gravityOn = e.target.checked ? 1 : 0;
    };
    wind.oninput = () => {
      goLive();
      const speed = Number(wind.value);
      st.wind = Float64Array.from(dir, (d) => d * speed);
      st.air = speed > 0 ? st.k.air : st.values.air;
    };
  }

  /** A poke at vertex p along ``dir`` (world): its grip pushed at half the speed of a
   * fall through a quarter of the object's size. */
  poke(p, dir) {
    const d = new THREE.Vector3(...dir).transformDirection(this.fromWorld).toArray();
    const speed = 0.5 * Math.sqrt(9.81 * this.size / 2);
    this.stepper.push(this.state, this.stepper.impulse(p, d.map((x) => x * speed)));
  }

  /** What a test or the console drives: the model's own run from the clip's start, and
   * the live object's state. */
  api(goLive) {
    const st = this.stepper, live = () => { goLive(); return this.state; };  // (live first)
    return {
      handles: st.H,
      integrate: (seconds) =>  // from the clip's start state, as animate started, on a
        // stepper of its own (the live one keeps its state)
        integrate(new Stepper(this.model), seconds).frames.map((x) => this.world(x)),
      enter: (t) => { goLive(); this.enter(t); },
      step: (seconds) => {  // steps at once, whatever the time they take
        const state = live();
        for (let k = 0; k < Math.round(seconds / st.h); k++) st.step(state);
        this.Z.set(state.Z);
      },
      // vertices by the page's numbering (sample's order)
      pull: (i, target) => st.pullVertex(this.pageVertex[i], this.toModel(target),
                                         this.pullStiffness(), live().Z),
      release: () => st.pullVertex(null),
      poke: (i, dir) => { live(); this.poke(this.pageVertex[i], dir); },
      positions: () => this.world(st.positions(live().Z)),
      shown: () => {  // the live meshes' vertices as three.js skins them, world (x, y, z, ...)
        this.skinned[0].skeleton.update();
        const out = [], v = new THREE.Vector3();
        for (const m of this.skinned) {
          m.updateMatrixWorld(true);
          for (let i = 0; i < m.geometry.attributes.position.count; i++) {
            m.getVertexPosition(i, v).applyMatrix4(m.matrixWorld);
            out.push(v.x, v.y, v.z);
          }
        }
        return out;
      },
      speed: () => {  // the fastest vertex, m/s
        let top = 0;
        const x = st.velocities(live().V);
        for (let i = 0; i < x.length; i += 3) {
          top = Math.max(top, Math.hypot(x[i], x[i + 1], x[i + 2]));
        }
        return top;
      },
      isLive: () => this.on,
      screen: (i) => {  // where page vertex i is shown, in the window's pixels
        const shown = this.on ? this.skinned : this.meshes;
        let k = 0;
        while (k + 1 < shown.length && this.skinned[k + 1].offset <= i) k++;
        const m = shown[k], v = new THREE.Vector3();
        m.getVertexPosition(i - this.skinned[k].offset, v).applyMatrix4(m.matrixWorld);
        v.project(this.camera);
        const r = this.renderer.domElement.getBoundingClientRect();
        return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height];
      },
      rate: () => this.rate ?? 1,  // the live motion's seconds a second of the page's
    };
  }
}

main().catch((e) => {
  api.error = String(e);
  document.getElementById("caption").textContent = `This page could not start: ${e}`;
  throw e;
});
