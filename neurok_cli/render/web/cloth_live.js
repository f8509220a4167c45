// A cloth's live object in the page (page.js makes it where the page's model is a cloth's,
// "kind": "cloth"): the cloth's own steps (cloth.js) move it after its clip, written each
// frame into plain meshes' positions (the page's vertices through the model's binding,
// page_vertex and page_from_model); a drag pulls the fabric under the pointer, a click
// pokes it, the controls scale the fabric's stiffness (the page factors its global step
// again) and set gravity and wind. The clip's self-contact is IPC's; the live cloth keeps
// off itself with a cheap repulsion (cloth_repel.js; the controls' tooltip and the caption
// say so).
// ClothLive.api is what window.neurok.live holds, as page_live.js's Live.api for handles.

import * as THREE from "three";
import { ClothStepper, integrate } from "./cloth.js";
import {
  advance, bindPage, fastest, listenControls, listenPointer, ownMorphs, pickVertex, screenOf,
  showClock, worldOf,
} from "./page_live.js";

export const SELF_CONTACT_NOTE =
  "live cloth: a cheap repulsion stands in for the clip's self-contact";

export class ClothLive {
  /** ``own``: the file's own animations (after ours), whose morph weights the live meshes
   * play on, as the clip plays them along. */
  constructor(model, scene, meshes, camera, controls, renderer, own) {
    Object.assign(this, { model, scene, meshes, camera, controls, renderer });
    const a = model.arrays;
    this.stepper = new ClothStepper(model);
    this.stepper.repel = true;  // (cloth_repel.js)
    this.on = false;
    this.state = null;
    bindPage(this, a);
    const root = new THREE.Group();
    scene.add(root);
    this.shown = [];
    let offset = 0;
    for (const m of meshes) {
      const mesh = this._mesh(m, offset);
      root.add(mesh);
      this.shown.push(mesh);
      offset += mesh.vertices;
    }
    this.mixer = ownMorphs(own, meshes, this.shown, root);
    const r = a.rest, lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < r.length; i++) {
      lo[i % 3] = Math.min(lo[i % 3], r[i]);
      hi[i % 3] = Math.max(hi[i % 3], r[i]);
    }
    this.size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) || 1;
    this.raycaster = new THREE.Raycaster();
  }

  /** The live mesh standing for the clip's mesh ``m`` (whose vertices are the page's from
   * ``offset``): its attributes, but positions (and normals) of its own, written each
   * frame in ``m``'s frame. */
  _mesh(m, offset) {
    const g0 = m.geometry, count = g0.attributes.position.count, g = new THREE.BufferGeometry();
    for (const [name, attr] of Object.entries(g0.attributes)) {
      if (name !== "position" && name !== "normal") g.setAttribute(name, attr);
    }
    const pos = new THREE.Float32BufferAttribute(new Float32Array(3 * count), 3);
    pos.setUsage(THREE.DynamicDrawUsage);
    g.setAttribute("position", pos);
    g.morphAttributes = g0.morphAttributes;  // (ours held at zero; the file's own played)
    g.morphTargetsRelative = g0.morphTargetsRelative;
    if (g0.index) g.setIndex(g0.index);
    for (const grp of g0.groups) g.addGroup(grp.start, grp.count, grp.materialIndex);
    const mesh = new THREE.Mesh(g, m.material);
    mesh.matrixAutoUpdate = false;
    mesh.matrix.copy(m.matrixWorld);
    // world = [x, 1] @ page_from_model, then into the mesh's own frame
    const toLocal = m.matrixWorld.clone().invert().multiply(this.toWorld);
    Object.assign(mesh, { frustumCulled: false, castShadow: true, receiveShadow: true,
                          visible: false, offset, vertices: count, name: m.name, toLocal });
    mesh.matrixWorld.copy(m.matrixWorld);  // (its parent, the live group, is the world's)
    mesh.updateMorphTargets();
    return mesh;
  }

  get liveMeshes() { return this.shown; }

  /** Step on from the clip at time ``t`` (its nearest frame), showing the cloth itself. */
  enter(t) {
    const v = this.model.values, f = Math.min(Math.round(t * v.fps), v.frames - 1);
    this.state = this.stepper.clipState(f);
    this.lived = this.moved = 0;
    this.rate = 1;
    this.on = true;
    this.mixer.setTime(this.state.t);
    this.draw();
    for (const m of this.meshes) m.visible = false;
    for (const m of this.shown) m.visible = true;
    const caption = document.getElementById("caption");
    if (!caption.textContent.includes(SELF_CONTACT_NOTE)) {
      caption.textContent += ` (${SELF_CONTACT_NOTE})`;
    }
  }

  leave() {
    if (!this.on) return;
    this.on = false;
    this.letGo();
    for (const m of this.meshes) m.visible = true;
    for (const m of this.shown) m.visible = false;
  }

  /** Steps for ``dt`` seconds of motion, or as many as ``budget`` seconds of work allow. */
  run(dt, budget = Infinity) {
    advance(this, dt, budget);
    this.mixer.setTime(this.state.t);
    this.draw();
  }

  /** The cloth's vertices now into the live meshes. */
  draw() {
    const x = this.stepper.positions(this.state.x);
    for (const mesh of this.shown) {
      const e = mesh.toLocal.elements, pos = mesh.geometry.attributes.position.array;
      for (let i = 0; i < mesh.vertices; i++) {
        const p = 3 * this.pageVertex[mesh.offset + i], a = x[p], b = x[p + 1], c = x[p + 2];
        for (let k = 0; k < 3; k++) {
          pos[3 * i + k] = e[k] * a + e[4 + k] * b + e[8 + k] * c + e[12 + k];
        }
      }
      const g = mesh.geometry;
      g.attributes.position.needsUpdate = true;
      g.computeVertexNormals();
      g.boundingSphere = g.boundingBox = null;  // (picking's: moved)
    }
  }

  clock() { showClock(this); }

  world(x) { return worldOf(this, x); }

  toModel(w) { return new THREE.Vector3(...w).applyMatrix4(this.fromWorld).toArray(); }

  pick(event) { return pickVertex(this, event); }

  /** The fabric at model vertex ``p`` pulled toward ``target`` (the model's frame). */
  grab(p, target) { this.stepper.pullVertex(p, target, this.state.x); }

  letGo() { this.stepper.pullVertex(null); }

  /** A poke at vertex p along ``dir`` (world): the fabric around it pushed at half the
   * speed of a fall through a quarter of the cloth's size. */
  poke(p, dir) {
    const d = new THREE.Vector3(...dir).transformDirection(this.fromWorld).toArray();
    const speed = 0.5 * Math.sqrt(9.81 * this.size / 2);
    this.stepper.push(this.state, this.stepper.impulse(p, d.map((x) => x * speed)));
  }

  listen(goLive) {
    listenPointer(this, goLive);
    listenControls(this.stepper, goLive);
    const controls = document.getElementById("live");
    controls.title = `${SELF_CONTACT_NOTE}: it meets the floor and keeps off itself`;
  }

  /** What a test or the console drives, as Live.api: the cloth's own run from the clip's
   * start, and the live object's state. */
  api(goLive) {
    const st = this.stepper, live = () => { goLive(); return this.state; };  // (live first)
    return {
      kind: "cloth",
      handles: 0,
      selfContact: this.model.values.self_contact,
      integrate: (seconds) => {  // from the clip's start state, on a stepper of its own
        const own = new ClothStepper(this.model);
        own.repel = st.repel;
        return integrate(own, seconds).frames.map((x) => this.world(x));
      },
      repel: (on) => { st.repel = Boolean(on); },  // the self-repulsion on or off
      enter: (t) => { goLive(); this.enter(t); },
      step: (seconds) => {  // steps at once, whatever the time they take
        const state = live();
        for (let k = 0; k < Math.round(seconds / st.h); k++) st.step(state);
        this.mixer.setTime(state.t);
        this.draw();
      },
      // vertices by the page's numbering (sample's order)
      pull: (i, target) => { live(); this.grab(this.pageVertex[i], this.toModel(target)); },
      release: () => this.letGo(),
      poke: (i, dir) => { live(); this.poke(this.pageVertex[i], dir); },
      positions: () => this.world(st.positions(live().x)),
      rest: () => this.world(this.model.arrays.rest),
      faces: () => pageFaces(this.shown),
      shown: () => {  // the live meshes' vertices as three.js draws them, world (x, y, z, ...)
        const out = [], v = new THREE.Vector3();
        for (const m of this.shown) {
          for (let i = 0; i < m.vertices; i++) {
            m.getVertexPosition(i, v).applyMatrix4(m.matrixWorld);
            out.push(v.x, v.y, v.z);
          }
        }
        return out;
      },
      velocities: () => Float64Array.from(live().v),  // the simulation's, model frame
      speed: () => fastest(live().v),  // the fastest simulation vertex, m/s
      isLive: () => this.on,
      screen: (i) => screenOf(this, this.shown, i),  // where page vertex i is, in pixels
      rate: () => this.rate ?? 1,  // the live motion's seconds a second of the page's
    };
  }
}

/** The page's triangles (a, b, c, ...) by the page's vertex numbering, from ``meshes``
 * (each with its offset; unindexed ones: consecutive triples). */
export function pageFaces(meshes) {
  const out = [];
  for (const m of meshes) {
    const index = m.geometry.index, n = index ? index.count : m.vertices;
    for (let i = 0; i < n; i++) out.push(m.offset + (index ? index.getX(i) : i));
  }
  return out;
}
