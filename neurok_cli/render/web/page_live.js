// The page's live object (page.js makes it where the page holds the reduced model): the
// reduced model's own steps (reduced.js) move the object itself after its clip, shown as
// three.js SkinnedMeshes whose bones are the handles; a drag pulls a point, a click pokes it,
// the controls set stiffness, gravity and wind. Live.api is what window.neurok.live holds.
// What a cloth's live object (cloth_live.js) shares with it is exported below the class:
// the file's own morph weights, the pointer, the controls, the stepping and its clock.

import * as THREE from "three";
import { boneMatrices, integrate, Stepper } from "./reduced.js";

// steps a preconditioner's factor is kept though the handles turn or the object slides
// (animate's own steps: 0): the flag's flutter 7.9 ms a step in place of 19.5, 4.0 minimizer
// iterations a step in place of 3.9 (node, this machine)
const LAZY = 8;

export class Live {
  /** ``own``: the file's own animations (after ours), whose morph weights the live meshes
   * play on, as the clip plays them along. */
  constructor(model, scene, meshes, camera, controls, renderer, own) {
    Object.assign(this, { model, scene, meshes, camera, controls, renderer });
    const a = model.arrays, st = new Stepper(model);
    st.lazy = LAZY;
    this.stepper = st;
    this.on = false;
    this.state = null;
    bindPage(this, a);
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
    this.mixer = ownMorphs(own, meshes, this.skinned, root);
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
    advance(this, dt, budget);
    this.mixer.setTime(this.state.t);
    this.Z.set(this.state.Z);
  }

  clock() { showClock(this); }

  /** World positions (x, y, z, ...) of the page's vertices for model positions x. */
  world(x) { return worldOf(this, x); }

  toModel(w) { return new THREE.Vector3(...w).applyMatrix4(this.fromWorld).toArray(); }

  /** The model's vertex nearest where a ray from the camera through the pointer hits. */
  pick(event) { return pickVertex(this, event); }

  get liveMeshes() { return this.skinned; }

  pullStiffness() { return 10 * this.mass * 9.81 / this.size; }  // its weight at 0.1 size

  /** The hand at model vertex ``p`` pulled toward ``target`` (the model's frame). */
  grab(p, target) {
    this.stepper.pullVertex(p, target, this.pullStiffness(), this.state.Z);
  }

  letGo() { this.stepper.pullVertex(null); }

  /** Pointer handling: a drag pulls the point under it, a click pokes it; the controls. */
  listen(goLive) {
    listenPointer(this, goLive);
    listenControls(this.stepper, goLive);
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
      speed: () => fastest(st.velocities(live().V)),  // the fastest vertex, m/s
      isLive: () => this.on,
      screen: (i) => screenOf(this, this.skinned, i),
      rate: () => this.rate ?? 1,  // the live motion's seconds a second of the page's
    };
  }
}

// -- what a cloth's live object shares (cloth_live.js) ------------------------------------

/** The page's binding on ``live``: pageVertex (the model's vertex under each of the page's),
 * toWorld (the model's frame to the page's world: world = [x, 1] @ page_from_model) and
 * fromWorld. */
/** The fastest of the velocities ``v`` (x, y, z, ...), m/s. */
export function fastest(v) {
  let top = 0;
  for (let i = 0; i < v.length; i += 3) top = Math.max(top, Math.hypot(v[i], v[i + 1], v[i + 2]));
  return top;
}

/** Where page vertex ``i`` is shown, in the window's pixels: on ``drawn`` (the live meshes,
 * each with the ``offset`` of its first vertex) when live, else on the clip's meshes. */
export function screenOf(live, drawn, i) {
  const shown = live.on ? drawn : live.meshes;
  let k = 0;
  while (k + 1 < shown.length && drawn[k + 1].offset <= i) k++;
  const m = shown[k], v = new THREE.Vector3();
  m.getVertexPosition(i - drawn[k].offset, v).applyMatrix4(m.matrixWorld);
  v.project(live.camera);
  const r = live.renderer.domElement.getBoundingClientRect();
  return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height];
}

export function bindPage(live, a) {
  live.pageVertex = a.page_vertex;
  const A = a.page_from_model;
  live.toWorld = new THREE.Matrix4().set(A[0], A[3], A[6], A[9], A[1], A[4], A[7], A[10],
                                         A[2], A[5], A[8], A[11], 0, 0, 0, 1);
  live.fromWorld = live.toWorld.clone().invert();
}

/** A mixer on ``root`` that plays the file's own morph weight tracks (``own``, its
 * animations after ours) on the live meshes ``shown`` that stand for ``meshes``. */
export function ownMorphs(own, meshes, shown, root) {
  const byName = new Map();
  meshes.forEach((m, i) => {
    byName.set(m.name, shown[i]);
    byName.set(m.uuid, shown[i]);
  });
  const mixer = new THREE.AnimationMixer(root);
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
      mixer.clipAction(new THREE.AnimationClip(clip.name, clip.duration, tracks)).play();
    }
  }
  return mixer;
}

/** ``live``'s steps for ``dt`` seconds of motion, or as many as ``budget`` seconds of work
 * allow, and its rate (the motion's seconds a second of the page's). */
export function advance(live, dt, budget) {
  const start = performance.now(), h = live.stepper.h;
  live.owed = Math.min((live.owed || 0) + dt, 0.1);
  let steps = 0;
  while (live.owed >= h && performance.now() - start < 1000 * budget) {
    live.stepper.step(live.state);
    live.owed -= h;
    steps++;
  }
  if (live.owed >= h) live.owed = 0;  // behind: the motion slows down rather than jumps
  if (live.lived > 2) { live.lived /= 2; live.moved /= 2; }  // (the last few seconds)
  live.lived = (live.lived || 0) + Math.min(dt, 0.25);  // seconds of the page's (a gap:
  live.moved = (live.moved || 0) + steps * h;  // a hidden tab's) and of the motion's
  live.rate = live.lived > 0 ? live.moved / live.lived : 1;
}

export function showClock(live) {
  const rate = live.rate ?? 1;
  document.getElementById("clock").textContent = `live ${live.state.t.toFixed(2)} s` +
    (rate < 0.95 ? ` (${rate.toFixed(2)}x)` : "");
}

/** World positions (x, y, z, ...) of the page's vertices for model positions x. */
export function worldOf(live, x) {
  const out = new Array(3 * live.pageVertex.length), e = live.toWorld.elements;
  for (let i = 0; i < live.pageVertex.length; i++) {
    const p = 3 * live.pageVertex[i], a = x[p], b = x[p + 1], c = x[p + 2];
    for (let k = 0; k < 3; k++) out[3 * i + k] = e[k] * a + e[4 + k] * b + e[8 + k] * c + e[12 + k];
  }
  return out;
}

/** The model's vertex nearest where a ray from the camera through the pointer hits the
 * meshes shown (``live.liveMeshes`` while live, else the clip's ``live.meshes``). */
export function pickVertex(live, event) {
  const r = live.renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2((event.clientX - r.left) / r.width * 2 - 1,
                                -(event.clientY - r.top) / r.height * 2 + 1);
  live.raycaster.setFromCamera(ndc, live.camera);
  const shown = live.on ? live.liveMeshes : live.meshes;
  for (const m of shown) if (m.isSkinnedMesh) m.boundingSphere = m.boundingBox = null;  // moved
  const hit = live.raycaster.intersectObjects(shown, false)[0];
  if (!hit) return null;
  const mesh = hit.object, v = new THREE.Vector3();
  let best = null, bestD = Infinity;
  for (const i of [hit.face.a, hit.face.b, hit.face.c]) {
    mesh.getVertexPosition(i, v).applyMatrix4(mesh.matrixWorld);
    const d = v.distanceTo(hit.point);
    if (d < bestD) { bestD = d; best = i; }
  }
  const offset = live.liveMeshes[shown.indexOf(mesh)].offset;
  return { vertex: live.pageVertex[offset + best], point: hit.point.clone(), ndc };
}

/** A drag pulls the point under the pointer (``live.grab`` toward the pointer on the plane
 * facing the camera, ``live.letGo`` at the end), a click pokes it (``live.poke``). */
export function listenPointer(live, goLive) {
  const el = live.renderer.domElement, camera = live.camera;
  let grab = null;
  const plane = new THREE.Plane(), hitPoint = new THREE.Vector3();
  el.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;  // (the others pan and zoom)
    const got = live.pick(e);
    if (!got) return;
    grab = { ...got, x: e.clientX, y: e.clientY, dragging: false };
    live.controls.enabled = false;
    el.setPointerCapture(e.pointerId);
  }, { capture: true });  // before the orbit controls: a grab does not turn the camera
  el.addEventListener("pointermove", (e) => {
    if (!grab) return;
    if (!grab.dragging && Math.hypot(e.clientX - grab.x, e.clientY - grab.y) < 4) return;
    if (!grab.dragging) {
      grab.dragging = true;
      goLive();
      plane.setFromNormalAndCoplanarPoint(camera.getWorldDirection(new THREE.Vector3()),
                                          grab.point);
    }
    const r = el.getBoundingClientRect();
    live.raycaster.setFromCamera(new THREE.Vector2((e.clientX - r.left) / r.width * 2 - 1,
                                                   -(e.clientY - r.top) / r.height * 2 + 1),
                                 camera);
    if (live.raycaster.ray.intersectPlane(plane, hitPoint)) {
      live.grab(grab.vertex, live.toModel(hitPoint.toArray()));
    }
  });
  const up = (e) => {
    if (!grab) return;
    if (!grab.dragging && e.type === "pointerup") {  // a click: a poke along the view
      goLive();
      live.poke(grab.vertex, live.raycaster.ray.direction.toArray());
    }
    live.letGo();
    grab = null;
    live.controls.enabled = true;
  };
  el.addEventListener("pointerup", up);
  el.addEventListener("pointercancel", up);
}

/** The live controls on stepper ``st``: stiffness (its scale, 0.1-10x), gravity and wind
 * (along the model's wind, or +x). */
export function listenControls(st, goLive) {
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
