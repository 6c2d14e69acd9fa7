#include "server/scene_look.h"

#include <mujoco/mujoco.h>

#include <cstring>

#include "alsim/v1/alsim.pb.h"

namespace alsim::server {
namespace {

// The default colour of MuJoCo's geoms, for scenes without a look.
constexpr std::array<float, 4> kDefaultRgba{0.5f, 0.5f, 0.5f, 1.0f};

}  // namespace

std::shared_ptr<const SceneLook> ReadSceneLook(const std::string& mjb, const Model& model,
                                               std::string* error) {
  // mjVFS holds 2000 fixed-size names (~2 MB): on the heap.
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  mjModel* m = nullptr;
  try {
    if (mj_makeEmptyFileVFS(vfs.get(), "look.mjb", static_cast<int>(mjb.size())) == 0) {
      const int index = mj_findFileVFS(vfs.get(), "look.mjb");
      std::memcpy(vfs->filedata[index], mjb.data(), mjb.size());
      m = mj_loadModel("look.mjb", vfs.get());
    }
  } catch (...) {  // the engine's MuJoCo error handler throws; the bytes were loaded before
    m = nullptr;
  }
  mj_deleteVFS(vfs.get());
  if (m == nullptr) {
    *error = "the compiled model does not load";
    return nullptr;
  }
  std::shared_ptr<SceneLook> look;
  if (m->ngeom != model.ngeom || m->nmesh != model.nmesh) {
    *error = "the compiled model's geom or mesh count differs from the converted one";
  } else {
    look = std::make_shared<SceneLook>();
    look->geom_rgba.resize(m->ngeom);
    look->geom_group.resize(m->ngeom);
    for (int g = 0; g < m->ngeom; ++g) {
      const int material = m->geom_matid[g];
      const float* rgba = material >= 0 ? m->mat_rgba + 4 * material : m->geom_rgba + 4 * g;
      std::copy(rgba, rgba + 4, look->geom_rgba[g].begin());
      look->geom_group[g] = m->geom_group[g];
    }
    for (int k = 0; k < m->nmesh; ++k) look->mesh_name.emplace_back(m->names + m->name_meshadr[k]);
  }
  mj_deleteModel(m);
  return look;
}

void FillScene(const Model& m, const SceneLook* look, const std::string& scene,
               alsim::v1::GetSceneResponse* response) {
  response->set_scene(scene);
  response->set_timestep(m.timestep);
  for (int i = 0; i < 3; ++i) response->add_gravity(m.gravity[i]);
  for (int b = 0; b < m.nbody; ++b) {
    response->add_body_names(m.body_name[b]);
    response->add_body_parent(m.body_parent[b]);
  }
  for (int g = 0; g < m.ngeom; ++g) {
    alsim::v1::SceneGeom* geom = response->add_geoms();
    geom->set_name(m.geom_name[g]);
    geom->set_type(static_cast<alsim::v1::GeomType>(static_cast<int>(m.geom_type[g]) + 1));
    geom->set_body(static_cast<std::uint32_t>(m.geom_body[g]));
    for (int i = 0; i < 3; ++i) geom->add_size(m.geom_size[g][i]);
    for (int i = 0; i < 3; ++i) geom->add_pos(m.geom_pos[g][i]);
    for (int i = 0; i < 4; ++i) geom->add_quat(m.geom_quat[g][i]);  // w x y z, as MuJoCo
    const std::array<float, 4>& rgba = look != nullptr ? look->geom_rgba[g] : kDefaultRgba;
    for (const float c : rgba) geom->add_rgba(c);
    geom->set_group(look != nullptr ? look->geom_group[g] : 0);
    // An SDF geom is drawn through its triangulation, sent after the scene's own meshes.
    geom->set_mesh(m.geom_sdf[g] >= 0 ? m.nmesh + m.geom_sdf[g] : m.geom_mesh[g]);
    geom->set_collides(m.geom_contype[g] != 0 || m.geom_conaffinity[g] != 0);
  }
  for (int k = 0; k < m.nmesh; ++k) {
    alsim::v1::SceneMesh* mesh = response->add_meshes();
    if (look != nullptr) mesh->set_name(look->mesh_name[k]);
    const int vert0 = m.mesh_vert_adr[k];
    for (int v = vert0; v < vert0 + m.mesh_vert_num[k]; ++v) {
      for (int i = 0; i < 3; ++i) mesh->add_vertices(static_cast<float>(m.mesh_vert[v][i]));
    }
    const int face0 = m.mesh_face_adr[k];
    for (int f = face0; f < face0 + m.mesh_face_num[k]; ++f) {
      for (int i = 0; i < 3; ++i) mesh->add_faces(static_cast<std::uint32_t>(m.mesh_face[f][i]));
    }
  }
  // Each SDF geom's surface triangulation, in its frame and counter-clockwise seen from outside
  // as a mesh's (SdfRevolution and SdfThread::Triangulate).
  for (int k = 0; k < m.nsdf; ++k) {
    alsim::v1::SceneMesh* mesh = response->add_meshes();
    mesh->set_name("sdf:" + m.geom_name[m.sdf_geom[k]]);
    const int vert0 = m.sdf_vert_adr[k];
    for (int v = vert0; v < vert0 + m.sdf_vert_num[k]; ++v) {
      for (int i = 0; i < 3; ++i) mesh->add_vertices(static_cast<float>(m.sdf_vert[v][i]));
    }
    const int face0 = m.sdf_face_adr[k];
    for (int f = face0; f < face0 + m.sdf_face_num[k]; ++f) {
      for (int i = 0; i < 3; ++i) mesh->add_faces(static_cast<std::uint32_t>(m.sdf_face[f][i]));
    }
  }
  // Each deformable's surface, its triangles' vertex indices made local to it.
  for (int d = 0; d < m.ndeform; ++d) {
    alsim::v1::SceneDeformable* deformable = response->add_deformables();
    deformable->set_name(m.deform_name[d]);
    for (const float c : m.deform_rgba[d]) deformable->add_rgba(c);
    const int vert0 = m.deform_vert_adr[d];
    deformable->set_vertex_start(static_cast<std::uint32_t>(vert0));
    deformable->set_vertex_count(static_cast<std::uint32_t>(m.deform_vert_num[d]));
    const int tri0 = m.deform_tri_adr[d];
    for (int t = tri0; t < tri0 + m.deform_tri_num[d]; ++t) {
      for (const int v : m.tri_vert[t])
        deformable->add_faces(static_cast<std::uint32_t>(v - vert0));
    }
  }
}

}  // namespace alsim::server
