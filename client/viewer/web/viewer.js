// The page of `alsim view`: lists the server's live instances, draws the chosen ones with
// three.js from their scene's geometry (/api/scene) and moves their bodies with the poses of a
// server-sent-events stream per scene (/api/stream), and their tetrahedral deformables' surfaces
// with the same stream's vertex positions. MuJoCo's frame: z is up, quaternions are w x y z.
// Instance ids stay strings: they exceed JavaScript's exact integers.
import * as THREE from 'three';
import { OrbitControls } from './OrbitControls.js';

// What a test (or a curious user) can read: frames applied, streams open, the last error.
const state = window.alsimViewer = { framesApplied: 0, streams: 0, lastError: '', paused: false };

const $ = (id) => document.getElementById(id);
const view = $('view');
const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.shadowMap.enabled = false;  // off by default: the page stays cheap on big scenes
view.appendChild(renderer.domElement);

const scene = new THREE.Scene();
scene.background = new THREE.Color(0x2b3038);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 500);
camera.up.set(0, 0, 1);
camera.position.set(4, -6, 3);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 0.8);
controls.update();

scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(3, -4, 8);
sun.shadow.mapSize.set(2048, 2048);
Object.assign(sun.shadow.camera,
              { left: -15, right: 15, top: 15, bottom: -15, near: 0.5, far: 40 });
scene.add(sun);
scene.add(sun.target);

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

// ---- geometry ---------------------------------------------------------------------------

// MuJoCo's geom types as GetScene names them (alsim.proto GeomType), and alsim's SDF geoms,
// whose surface triangulation GetScene sends as a mesh.
function geomObject(geom, meshes, material) {
  const s = geom.size;
  let g = null;
  switch (geom.type) {
    case 'GEOM_TYPE_PLANE': {
      // Size 0 is an infinite plane: a tile of the layout's grid, so that tiles abut.
      const w = s[0] > 0 ? 2 * s[0] : SPACING, h = s[1] > 0 ? 2 * s[1] : SPACING;
      g = new THREE.PlaneGeometry(w, h);
      const floor = new THREE.Mesh(g, new THREE.MeshStandardMaterial({
        color: material.color, roughness: 0.9, metalness: 0 }));
      floor.receiveShadow = true;
      const grid = new THREE.GridHelper(Math.max(w, h), Math.round(Math.max(w, h) / 0.5),
                                        0x505860, 0x3a4048);
      grid.rotation.x = Math.PI / 2;  // three's grid lies in xz; MuJoCo's floor in xy
      grid.position.z = 0.001;
      floor.add(grid);
      return floor;
    }
    case 'GEOM_TYPE_SPHERE': g = new THREE.SphereGeometry(s[0], 24, 16); break;
    case 'GEOM_TYPE_ELLIPSOID':
      g = new THREE.SphereGeometry(1, 24, 16);
      g.scale(s[0], s[1], s[2]);
      break;
    case 'GEOM_TYPE_CAPSULE':  // three's axis is y, MuJoCo's z
      g = new THREE.CapsuleGeometry(s[0], 2 * s[1], 8, 16);
      g.rotateX(Math.PI / 2);
      break;
    case 'GEOM_TYPE_CYLINDER':
      g = new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 24);
      g.rotateX(Math.PI / 2);
      break;
    case 'GEOM_TYPE_BOX': g = new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]); break;
    case 'GEOM_TYPE_MESH':
    case 'GEOM_TYPE_SDF': g = meshes[geom.mesh]; break;
    default: return null;  // height fields: not drawn
  }
  if (!g) return null;
  const mesh = new THREE.Mesh(g, material);
  mesh.castShadow = true;
  mesh.receiveShadow = true;
  return mesh;
}

function meshGeometry(m) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(m.vertices, 3));
  g.setIndex(m.faces);
  const flat = g.toNonIndexed();  // faceted, as MuJoCo draws meshes
  flat.computeVertexNormals();
  return flat;
}

// A deformable's surface: its triangles (local vertex indices) over a position attribute that
// frames overwrite in place (setDeformable), so that a moving deformable allocates nothing.
// Hidden until the first frame: the scene carries the faces, the stream the positions.
function deformableObject(d) {
  const g = new THREE.BufferGeometry();
  const position = new THREE.BufferAttribute(new Float32Array(3 * d.vertex_count), 3);
  position.setUsage(THREE.DynamicDrawUsage);
  g.setAttribute('position', position);
  g.setIndex(d.faces);
  const [red, green, blue, a] = d.rgba;
  const mesh = new THREE.Mesh(g, new THREE.MeshStandardMaterial({
    color: new THREE.Color(red, green, blue), transparent: a < 1, opacity: a, roughness: 0.7 }));
  mesh.name = d.name;
  mesh.castShadow = true;
  mesh.receiveShadow = true;
  mesh.visible = false;
  mesh.userData = { start: d.vertex_start, count: d.vertex_count, updates: 0 };
  return mesh;
}

// Writes rows [start, start + count) of `vertices` (a frame's flat array, from `offset`) into
// the mesh's positions; smooth normals and the bounding sphere (culling) follow the new shape.
function setDeformable(mesh, vertices, offset) {
  const { start, count } = mesh.userData;
  const g = mesh.geometry;
  const position = g.getAttribute('position');
  const from = offset + 3 * start;
  for (let i = 0; i < 3 * count; ++i) position.array[i] = vertices[from + i];
  position.needsUpdate = true;
  g.computeVertexNormals();
  g.computeBoundingSphere();
  mesh.visible = true;
  ++mesh.userData.updates;
}

// Viewed instances stand on a square grid, SPACING metres apart.
const SPACING = 4;
function place(root, slot, columns) {
  root.position.set((slot % columns) * SPACING, -Math.floor(slot / columns) * SPACING, 0);
}

// One viewed instance: a group per body under a root placed on the layout grid.
class InstanceView {
  constructor(id, sceneInfo) {
    this.id = id;
    this.root = new THREE.Group();
    this.bodies = sceneInfo.body_names.map(() => new THREE.Group());
    for (const body of this.bodies) this.root.add(body);
    const meshes = sceneInfo.meshes.map(meshGeometry);
    for (const geom of sceneInfo.geoms) {
      if (geom.group >= 3) continue;  // hidden by default in MuJoCo's viewer too
      const [r, g, b, a] = geom.rgba;
      const material = new THREE.MeshStandardMaterial({
        color: new THREE.Color(r, g, b), transparent: a < 1, opacity: a, roughness: 0.6 });
      const object = geomObject(geom, meshes, material);
      if (!object) continue;
      object.position.fromArray(geom.pos);
      object.quaternion.set(geom.quat[1], geom.quat[2], geom.quat[3], geom.quat[0]);
      this.bodies[geom.body].add(object);
    }
    // Deformables live in the world frame, so under the root; the instance's vertex rows are
    // every deformable's together (nvert per instance in a frame).
    this.deformables = (sceneInfo.deformables || []).map(deformableObject);
    for (const mesh of this.deformables) this.root.add(mesh);
    this.nvert = this.deformables.reduce(
        (n, m) => Math.max(n, m.userData.start + m.userData.count), 0);
    this.contactPoints = new THREE.Points(new THREE.BufferGeometry(),
                                          new THREE.PointsMaterial({ color: 0xff3030, size: 6,
                                                                     sizeAttenuation: false }));
    this.contactNormals = new THREE.LineSegments(new THREE.BufferGeometry(),
                                                 new THREE.LineBasicMaterial({ color: 0xffe040 }));
    this.root.add(this.contactPoints, this.contactNormals);
    this.stepsPerSecond = 0;
    this.panel = document.createElement('div');
    this.panel.className = 'stats';
    $('panels').appendChild(this.panel);
    scene.add(this.root);
  }

  apply(frame, k) {
    const nbody = this.bodies.length;
    for (let b = 1; b < nbody; ++b) {
      const p = 3 * (k * nbody + b), q = 4 * (k * nbody + b);
      this.bodies[b].position.set(frame.body_pos[p], frame.body_pos[p + 1], frame.body_pos[p + 2]);
      this.bodies[b].quaternion.set(frame.body_quat[q + 1], frame.body_quat[q + 2],
                                    frame.body_quat[q + 3], frame.body_quat[q]);
    }
    if (this.nvert && frame.deformable_vertices) {
      for (const mesh of this.deformables) {
        setDeformable(mesh, frame.deformable_vertices, 3 * k * this.nvert);
      }
    }
    const d = frame.details[k] || {};
    // Steps per second over at least half a second of the server's stream clock (the browser's
    // arrival times bunch up); a new stream (resume) restarts its clock and the window.
    const t = frame.server_time;
    if (this.windowSteps === undefined || t < this.windowTime) {
      this.windowSteps = d.steps;
      this.windowTime = t;
    } else if (t - this.windowTime >= 0.5) {
      this.stepsPerSecond = (d.steps - this.windowSteps) / (t - this.windowTime);
      this.windowSteps = d.steps;
      this.windowTime = t;
    }
    const positions = d.contact_position || [];
    const normals = d.contact_normal || [];
    this.contactPoints.geometry.setAttribute('position',
                                             new THREE.Float32BufferAttribute(positions, 3));
    const segments = new Float32Array(2 * positions.length);
    for (let i = 0; i < positions.length; i += 3) {
      for (let j = 0; j < 3; ++j) {
        segments[2 * i + j] = positions[i + j];
        segments[2 * i + 3 + j] = positions[i + j] + 0.15 * normals[i + j];
      }
    }
    this.contactNormals.geometry.setAttribute('position',
                                              new THREE.Float32BufferAttribute(segments, 3));
    const fmt = (x) => (x === null || x === undefined) ? '-' : Number(x).toPrecision(3);
    this.panel.textContent =
        `instance ${this.id}\n` +
        `time      ${(frame.time ? frame.time[k] : 0).toFixed(3)} s   ${d.status || ''}\n` +
        `steps/s   ${Math.round(this.stepsPerSecond)}   (steps ${d.steps})\n` +
        `iters     max ${d.max_iterations}  mean ${fmt(d.mean_iterations)}\n` +
        `residual  primal ${fmt(d.primal_residual)}\n` +
        `          dual   ${fmt(d.dual_residual)}\n` +
        `contacts  ${d.contacts}   islands ${d.islands}`;
  }

  dispose() {
    scene.remove(this.root);
    this.root.traverse((o) => { if (o.geometry) o.geometry.dispose(); });
    this.panel.remove();
  }
}

// ---- instances and streams --------------------------------------------------------------

const views = new Map();    // id -> InstanceView
const streams = new Map();  // scene name -> { source, ids }
let listed = [];            // the last /api/instances
let chosen = null;          // ids the user chose; null: the first group, automatically
let lastLayout = '';        // columns x rows the camera was placed for

function message(text) {
  $('message').textContent = text;
  if (text) state.lastError = text;
}

async function fetchJson(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function openStream(sceneName, ids) {
  const contacts = $('contacts').checked ? '&contacts=1' : '';
  const source = new EventSource(`/api/stream?ids=${ids.join(',')}${contacts}`);
  source.addEventListener('frame', (event) => {
    if (state.paused) return;
    const frame = JSON.parse(event.data);
    frame.ids.forEach((id, k) => { const v = views.get(id); if (v) v.apply(frame, k); });
    ++state.framesApplied;
  });
  source.addEventListener('end', (event) => {
    const body = JSON.parse(event.data);
    source.close();
    streams.delete(sceneName);
    state.streams = streams.size;
    if (body.error) message(`stream of ${sceneName} ended: ${body.error}`);
    refresh();
  });
  streams.set(sceneName, { source, ids });
  state.streams = streams.size;
}

function closeStreams() {
  for (const { source } of streams.values()) source.close();
  streams.clear();
  state.streams = 0;
}

// Shows exactly the instances `ids` (of any scenes): builds what is new, drops what is gone and
// opens one stream per scene.
async function show(ids) {
  const byId = new Map(listed.map((i) => [i.instance_id, i]));
  ids = ids.filter((id) => byId.has(id));
  for (const [id, v] of views) if (!ids.includes(id)) { v.dispose(); views.delete(id); }
  const scenes = new Map();
  for (const id of ids) {
    const name = byId.get(id).scene;
    if (!scenes.has(name)) scenes.set(name, []);
    scenes.get(name).push(id);
  }
  const total = [...scenes.values()].reduce((n, list) => n + list.length, 0);
  const columns = Math.max(1, Math.ceil(Math.sqrt(total)));
  let slot = 0;
  for (const [, sceneIds] of scenes) {
    let info = null;
    for (const id of sceneIds) {
      if (!views.has(id)) {
        try {
          info = info || await fetchJson(`/api/scene?id=${id}`);
        } catch (e) {
          message(`scene of ${id}: ${e.message}`);
          continue;
        }
        views.set(id, new InstanceView(id, info));
      }
      place(views.get(id).root, slot, columns);
      ++slot;
    }
  }
  // The camera looks at the grid's centre from the front right, far enough to see all of it;
  // it moves only when the layout changes, not when the user toggles contacts or pauses.
  const rows = Math.ceil(slot / columns);
  const layout = `${columns}x${rows}`;
  if (layout !== lastLayout) {
    lastLayout = layout;
    const extent = SPACING * (Math.max(columns, rows) + 0.5);
    controls.target.set(SPACING * (columns - 1) / 2, -SPACING * (rows - 1) / 2, 0.5);
    camera.position.set(controls.target.x + 0.45 * extent, controls.target.y - 0.8 * extent,
                        0.3 + 0.4 * extent);
    controls.update();
  }
  closeStreams();
  if (!state.paused) {
    for (const [name, sceneIds] of scenes) {
      const shown = sceneIds.filter((id) => views.has(id));
      if (shown.length) openStream(name, shown);
    }
  }
}

function currentIds() { return [...views.keys()]; }

function renderList() {
  const box = $('instances');
  box.textContent = '';
  if (!listed.length) {
    box.textContent = '(none: create some, e.g. alsim create humanoid)';
    return;
  }
  let lastScene = null;
  for (const info of listed) {
    if (info.scene !== lastScene) {
      const head = document.createElement('div');
      head.className = 'scene';
      head.textContent = `${info.scene} (group ${info.group_id})`;
      box.appendChild(head);
      lastScene = info.scene;
    }
    const label = document.createElement('label');
    label.className = 'instance';
    const box2 = document.createElement('input');
    box2.type = 'checkbox';
    box2.checked = views.has(info.instance_id);
    box2.addEventListener('change', () => {
      const ids = new Set(currentIds());
      if (box2.checked) ids.add(info.instance_id); else ids.delete(info.instance_id);
      chosen = [...ids];
      show(chosen);
    });
    label.append(box2, ` ${info.instance_id} t=${Number(info.time).toFixed(2)}`);
    box.appendChild(label);
  }
}

async function refresh() {
  try {
    listed = (await fetchJson('/api/instances')).instances || [];
    message('');
  } catch (e) {
    message(`instances: ${e.message}`);
    return;
  }
  const live = new Set(listed.map((i) => i.instance_id));
  if (chosen === null) {
    // First visit: the first group's instances (up to 16), so that a fresh page shows something.
    const query = new URLSearchParams(location.search).get('ids');
    if (query) {
      chosen = query.split(',');
    } else if (listed.length) {
      const group = listed[0].group_id;
      chosen = listed.filter((i) => i.group_id === group).slice(0, 16).map((i) => i.instance_id);
    }
    if (chosen) await show(chosen);
  } else if (currentIds().some((id) => !live.has(id))) {
    await show(chosen.filter((id) => live.has(id)));
  }
  renderList();
}

$('pause').addEventListener('click', () => {
  state.paused = !state.paused;
  $('pause').textContent = state.paused ? 'Resume view' : 'Pause view';
  if (state.paused) closeStreams(); else show(currentIds());
});
$('contacts').addEventListener('change', () => { if (!state.paused) show(currentIds()); });
$('shadows').addEventListener('change', () => {
  renderer.shadowMap.enabled = sun.castShadow = $('shadows').checked;
  scene.traverse((o) => { if (o.material) o.material.needsUpdate = true; });
});

// For tests: the ids shown, the background colour, and where bodies' origins and points of each
// floor (1.2 m from the instance's origin) land in page pixels (visible: in the view, in front).
state.shownIds = () => currentIds();
state.contactPointsShown = () => [...views.values()].reduce(
    (n, v) => n + (v.contactPoints.geometry.getAttribute('position')?.count || 0), 0);
state.shadows = () => renderer.shadowMap.enabled;
// Each shown deformable: its instance, name, vertex and triangle counts, frames applied to it,
// and its vertex positions as drawn (the simulation's world frame, before the page places the
// instance on its grid slot).
state.deformables = () => [...views.values()].flatMap((v) => v.deformables.map((m) => ({
  id: v.id, name: m.name, vertices: m.geometry.getAttribute('position').count,
  faces: m.geometry.getIndex().count / 3, updates: m.userData.updates, visible: m.visible,
  positions: Array.from(m.geometry.getAttribute('position').array) })));
// The deformables' three.js meshes themselves (a test checks that updates keep their arrays).
state.deformableMeshes = () => [...views.values()].flatMap((v) => v.deformables);
state.background = '#' + scene.background.getHexString();  // sRGB, as drawn
state.screenPoints = () => {
  const rect = renderer.domElement.getBoundingClientRect();
  const project = (world) => {
    const p = world.clone().project(camera);
    return { x: rect.left + (p.x + 1) / 2 * rect.width, y: rect.top + (1 - p.y) / 2 * rect.height,
             visible: Math.abs(p.x) < 0.98 && Math.abs(p.y) < 0.98 && p.z > -1 && p.z < 1 };
  };
  const bodies = [], floor = [], deformables = [];
  scene.updateMatrixWorld();
  for (const v of views.values()) {
    for (let b = 1; b < v.bodies.length; ++b) {
      bodies.push(project(v.bodies[b].getWorldPosition(new THREE.Vector3())));
    }
    for (const [x, y] of [[1.2, 1.2], [-1.2, 1.2], [1.2, -1.2], [-1.2, -1.2]]) {
      floor.push(project(v.root.localToWorld(new THREE.Vector3(x, y, 0))));
    }
    for (const m of v.deformables) {  // the centre of the surface's bounding box
      m.geometry.computeBoundingBox();
      deformables.push(project(m.localToWorld(m.geometry.boundingBox.getCenter(
          new THREE.Vector3()))));
    }
  }
  return { bodies, floor, deformables };
};

refresh();
setInterval(refresh, 2000);
renderer.setAnimationLoop(() => {
  controls.update();
  renderer.render(scene, camera);
});
