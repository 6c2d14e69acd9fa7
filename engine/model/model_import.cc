#include "engine/model/model_import.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/collision/sdf_revolution.h"
#include "engine/collision/sdf_thread.h"
#include "engine/math/spatial.h"
#include "engine/model/deformable_spec.h"
#include "engine/model/scene_xml.h"

namespace alsim {
namespace {

// ---- MuJoCo's process-wide handlers ------------------------------------------------------------

// MuJoCo's default error handler writes MUJOCO_LOG.TXT and exits the process; ours throws back to
// the importer. Installed once for the process (InstallMujocoHandlers) and never restored, so no
// libmujoco call anywhere can exit or write the log file.
struct MujocoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::mutex compile_mutex;                               // one compile at a time (MuJoCo's globals)
std::vector<std::string>* captured_warnings = nullptr;  // guarded by compile_mutex

void ThrowOnMujocoError(const char* message) { throw MujocoError(message); }
void CaptureMujocoWarning(const char* message) {
  if (captured_warnings != nullptr) captured_warnings->emplace_back(message);
}

// Holds the compile mutex and routes MuJoCo's warnings into `warnings` for its lifetime.
class MujocoCompileGuard {
 public:
  explicit MujocoCompileGuard(std::vector<std::string>* warnings) : lock_(compile_mutex) {
    InstallMujocoHandlers();
    captured_warnings = warnings;
  }
  ~MujocoCompileGuard() { captured_warnings = nullptr; }
  MujocoCompileGuard(const MujocoCompileGuard&) = delete;
  MujocoCompileGuard& operator=(const MujocoCompileGuard&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
};

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;

// mjVFS holds 2000 fixed-size names (~2 MB): keep it on the heap. Used under the compile guard
// only: mj_makeEmptyFileVFS calls mju_error for what Add does not check first.
struct VirtualFileSystem {
  VirtualFileSystem() : vfs(std::make_unique<mjVFS>()) { mj_defaultVFS(vfs.get()); }
  ~VirtualFileSystem() { mj_deleteVFS(vfs.get()); }
  VirtualFileSystem(const VirtualFileSystem&) = delete;
  VirtualFileSystem& operator=(const VirtualFileSystem&) = delete;

  // Returns an error message, empty on success.
  // Not const: it fills the file table this object owns (through a pointer, which tidy misses).
  std::string Add(const std::string& name,  // NOLINT(readability-make-member-function-const)
                  const std::string& bytes) {
    if (name.empty()) return "an asset has an empty name";
    if (name.size() >= mjMAXVFSNAME) {
      return "asset name '" + name.substr(0, 40) + "...' is " + std::to_string(name.size()) +
             " characters; MuJoCo's limit is " + std::to_string(mjMAXVFSNAME - 1);
    }
    if (bytes.empty()) return "asset '" + name + "' is empty (0 bytes)";
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      return "asset '" + name + "' is larger than 2 GiB";
    }
    if (mj_findFileVFS(vfs.get(), name.c_str()) >= 0) return "asset '" + name + "' given twice";
    const int result = mj_makeEmptyFileVFS(vfs.get(), name.c_str(), static_cast<int>(bytes.size()));
    if (result == 1) return "too many assets (MuJoCo's limit is " + std::to_string(mjMAXVFS) + ")";
    if (result != 0) return "asset '" + name + "' cannot be added";
    const int index = mj_findFileVFS(vfs.get(), name.c_str());
    std::copy(bytes.begin(), bytes.end(), static_cast<char*>(vfs->filedata[index]));
    return "";
  }

  std::unique_ptr<mjVFS> vfs;
};

// ---- scene text checks ----------------------------------------------------------------------

std::string BaseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Text of an included file: from the assets if given there; else, for a scene read from disk
// (`directory` not null), from disk next to the scene; else empty (text scenes never read files).
std::string ReadIncluded(const std::string& file, const std::string* directory,
                         const std::vector<ModelAsset>& assets) {
  for (const auto& asset : assets) {
    if (BaseName(asset.name) == BaseName(file)) return asset.bytes;
  }
  if (directory == nullptr) return "";
  std::ifstream in(*directory + file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Calls visit(element) for each element of the MJCF text and of each file it includes, until visit
// returns true (then true). Each included file is read once, however often it is included: a file
// that includes itself k times would otherwise cost k^depth reads (found by fuzzing).
template <class Visit>
bool AnySceneText(const std::string& xml, const std::string* directory,
                  const std::vector<ModelAsset>& assets, const Visit& visit,
                  std::set<std::string>* seen, int depth = 0) {
  const std::vector<SceneXmlElement> elements = ReadSceneXml(xml);
  for (const SceneXmlElement& element : elements) {
    if (visit(element)) return true;
  }
  if (depth > 8) return false;
  for (const SceneXmlElement& element : elements) {
    const std::string* file = IsIncludeElement(element) ? element.Attribute("file") : nullptr;
    if (file == nullptr || file->empty() || !seen->insert(*file).second) continue;
    if (AnySceneText(ReadIncluded(*file, directory, assets), directory, assets, visit, seen,
                     depth + 1)) {
      return true;
    }
  }
  return false;
}

template <class Visit>
bool AnySceneText(const std::string& xml, const std::string* directory,
                  const std::vector<ModelAsset>& assets, const Visit& visit) {
  std::set<std::string> seen;
  return AnySceneText(xml, directory, assets, visit, &seen);
}

// What the importer checks in the scene text before MuJoCo compiles it, from one walk over the
// text and the files it includes:
//   - error: an <include> whose file ends with a path separator ("sub/", "sub\"), refused before
//     MuJoCo sees it: libmujoco 2.2.2 strips the path at either separator, raises "Empty filename
//     in VFS" in the middle of its parse and leaks the parser's objects (found by
//     scene_import_fuzzer); else "".
//   - sets_timestep: some <option> sets timestep. mjModel cannot tell an explicit timestep from
//     MuJoCo's default; an explicit one must be a positive number (MuJoCo 2.2.2 compiles 0 and
//     negative values).
struct SceneTextCheck {
  std::string error;
  bool sets_timestep = false;
};

SceneTextCheck CheckSceneText(const std::string& source, const std::string& xml,
                              const std::string* directory, const std::vector<ModelAsset>& assets) {
  SceneTextCheck check;
  AnySceneText(xml, directory, assets, [&](const SceneXmlElement& element) {
    if (element.name == "option" && element.Attribute("timestep") != nullptr) {
      check.sets_timestep = true;
    }
    const std::string* file = IsIncludeElement(element) ? element.Attribute("file") : nullptr;
    if (file == nullptr || file->empty() || (file->back() != '/' && file->back() != '\\')) {
      return false;
    }
    check.error = source + ": <include file=\"" + *file +
                  "\"> names a directory; an include names an MJCF file";
    return true;
  });
  return check;
}

// ---- feature checks -------------------------------------------------------------------------

std::string Name(const mjModel* m, mjtObj type, int id) {
  const char* name = mj_id2name(m, type, id);
  return name != nullptr ? std::string(name) : std::string();
}

std::string Describe(const mjModel* m, mjtObj type, const char* kind, int id) {
  const std::string name = Name(m, type, id);
  return std::string(kind) + " " + (name.empty() ? "#" + std::to_string(id) : "'" + name + "'");
}

// A fixed tendon: every element of its path is a joint (MuJoCo's mjWRAP_JOINT), so its length is
// sum coef_k q_k. Spatial tendons pass sites and wrap geoms.
bool IsFixedTendon(const mjModel* m, int tendon) {
  if (m->tendon_num[tendon] == 0) return false;
  for (int k = m->tendon_adr[tendon]; k < m->tendon_adr[tendon] + m->tendon_num[tendon]; ++k) {
    if (m->wrap_type[k] != mjWRAP_JOINT) return false;
  }
  return true;
}

// Features whose absence would change the physics badly are errors; the first one found is
// reported. Returns an empty string when the model is supported.
std::string FindUnsupportedFeature(const mjModel* m) {
  if (m->opt.density > 0 || m->opt.viscosity > 0) {
    return "fluid forces (option density/viscosity) are not supported";
  }
  for (int i = 0; i < m->ntendon; ++i) {
    const std::string tendon = Describe(m, mjOBJ_TENDON, "tendon", i);
    if (m->tendon_frictionloss[i] > 0) {
      return tendon + " has frictionloss (dry tendon friction); not supported";
    }
    if (!IsFixedTendon(m, i)) {
      if (m->tendon_stiffness[i] != 0 || m->tendon_damping[i] != 0 || m->tendon_limited[i]) {
        return tendon +
               " is spatial (it passes sites or wraps geoms) and exerts forces (stiffness, "
               "damping or a limit); only fixed tendons (joint coefficients) are supported";
      }
      continue;
    }
    std::set<int> joints;
    for (int k = m->tendon_adr[i]; k < m->tendon_adr[i] + m->tendon_num[i]; ++k) {
      const int joint = m->wrap_objid[k];
      if (m->jnt_type[joint] != mjJNT_HINGE && m->jnt_type[joint] != mjJNT_SLIDE) {
        return tendon + " couples a free or ball joint; only hinge and slide joints are supported";
      }
      // MuJoCo 2.2.2 sums a repeated joint's coefficients in the length but keeps only the last
      // one in the Jacobian (ten_J), so its forces would not derive from its length.
      if (!joints.insert(joint).second) {
        return tendon + " lists " + Describe(m, mjOBJ_JOINT, "joint", joint) +
               " twice; list each joint once with the sum of its coefficients";
      }
    }
    if (static_cast<int>(joints.size()) > kMaxTendonJoints) {
      return tendon + " couples " + std::to_string(joints.size()) + " joints; at most " +
             std::to_string(kMaxTendonJoints) + " are supported";
    }
  }
  for (int i = 0; i < m->nu; ++i) {
    const std::string actuator = Describe(m, mjOBJ_ACTUATOR, "actuator", i);
    const int trntype = m->actuator_trntype[i];
    if (trntype == mjTRN_SITE || trntype == mjTRN_BODY) {
      const char* target = trntype == mjTRN_SITE ? "site" : "body (adhesion)";
      return actuator + " drives a " + target +
             "; only joint, fixed tendon and slider-crank transmissions are supported";
    }
    if (trntype == mjTRN_TENDON && !IsFixedTendon(m, m->actuator_trnid[2 * i])) {
      return actuator + " drives " + Describe(m, mjOBJ_TENDON, "tendon", m->actuator_trnid[2 * i]) +
             ", a spatial tendon (sites or geoms); only fixed tendons are supported";
    }
    if (trntype == mjTRN_JOINT || trntype == mjTRN_JOINTINPARENT) {
      const int joint_type = m->jnt_type[m->actuator_trnid[2 * i]];
      if (joint_type != mjJNT_HINGE && joint_type != mjJNT_SLIDE) {
        return actuator + " drives a free or ball joint; only hinge and slide joints are supported";
      }
    }
    if (m->actuator_dyntype[i] != mjDYN_NONE) {
      return actuator + " has activation dynamics (dyntype); not supported";
    }
    if (m->actuator_gaintype[i] != mjGAIN_FIXED) {
      return actuator + " has a non-constant gain (gaintype); not supported";
    }
    if (m->actuator_biastype[i] != mjBIAS_NONE && m->actuator_biastype[i] != mjBIAS_AFFINE) {
      return actuator + " has a muscle or user bias (biastype); not supported";
    }
  }
  for (int i = 0; i < m->neq; ++i) {
    if (m->eq_type[i] != mjEQ_CONNECT && m->eq_type[i] != mjEQ_WELD) {
      return Describe(m, mjOBJ_EQUALITY, "equality", i) +
             ": only connect and weld equality constraints are supported";
    }
  }
  for (int i = 0; i < m->ngeom; ++i) {
    if (m->geom_type[i] == mjGEOM_HFIELD) {
      return Describe(m, mjOBJ_GEOM, "geom", i) + " is a height field; not supported";
    }
  }
  return "";
}

// Features alsim ignores because they do not change the dynamics it computes.
void ListIgnoredFeatures(const mjModel* m, std::vector<std::string>& warnings) {
  int spatial_tendons = 0;
  for (int i = 0; i < m->ntendon; ++i) spatial_tendons += !IsFixedTendon(m, i);
  if (spatial_tendons > 0) {
    warnings.push_back(std::to_string(spatial_tendons) +
                       " spatial tendon(s) ignored: they exert no force in this scene");
  }
  if (m->nsensor > 0) warnings.push_back(std::to_string(m->nsensor) + " sensor(s) ignored");
  // Keyframes are imported (ConvertKeyframes) but for their mocap poses: alsim keeps a mocap body
  // where the model puts it, so a keyframe that moves one would not reset to MuJoCo's state.
  for (int k = 0; k < m->nkey; ++k) {
    for (int b = 0; b < m->nbody; ++b) {
      const int mocap = m->body_mocapid[b];
      if (mocap < 0) continue;
      const mjtNum* pos = m->key_mpos + 3 * (k * m->nmocap + mocap);
      const mjtNum* quat = m->key_mquat + 4 * (k * m->nmocap + mocap);
      if (std::equal(pos, pos + 3, m->body_pos + 3 * b) &&
          std::equal(quat, quat + 4, m->body_quat + 4 * b)) {
        continue;
      }
      warnings.push_back(Describe(m, mjOBJ_KEY, "keyframe", k) + " moves mocap " +
                         Describe(m, mjOBJ_BODY, "body", b) +
                         "; ignored: alsim keeps mocap bodies where the model puts them");
    }
  }
  if (m->opt.enableflags & mjENBL_OVERRIDE) {
    warnings.push_back(
        "option/flag override ignored: contacts keep their own solref, solimp and "
        "margin");
  }
  // Constraints, limits, frictionloss, gravity, contact and parent filtering are honoured; other
  // disable flags are not.
  const int honoured = mjDSBL_CONSTRAINT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS | mjDSBL_GRAVITY |
                       mjDSBL_CONTACT | mjDSBL_FILTERPARENT;
  const int ignored_flags = m->opt.disableflags & ~honoured;
  if (ignored_flags != 0) {
    warnings.push_back(
        "option/flag settings that disable features (mask " + std::to_string(ignored_flags) +
        ") are ignored; only constraint, limit, frictionloss, gravity, contact and filterparent "
        "are honoured");
  }
}

// ---- conversion -----------------------------------------------------------------------------

Vec3 ToVec3(const mjtNum* v) { return Vec3(v[0], v[1], v[2]); }
Quat ToQuat(const mjtNum* q) { return Quat(q[0], q[1], q[2], q[3]); }
SolRef ToSolRef(const mjtNum* ref) { return {ref[0], ref[1]}; }
SolImp ToSolImp(const mjtNum* imp) { return {imp[0], imp[1], imp[2], imp[3], imp[4]}; }

void ConvertOptions(const mjModel* m, bool scene_sets_timestep, Model& model) {
  // MJCF semantics: the compiled timestep, MuJoCo's default (kDefaultTimestep) where unset.
  model.timestep = scene_sets_timestep ? m->opt.timestep : kDefaultTimestep;
  model.constraints_enabled = !(m->opt.disableflags & mjDSBL_CONSTRAINT);
  model.limits_enabled = !(m->opt.disableflags & mjDSBL_LIMIT);
  model.frictionloss_enabled = !(m->opt.disableflags & mjDSBL_FRICTIONLOSS);
  model.equalities_enabled = !(m->opt.disableflags & mjDSBL_EQUALITY);
  model.contact_enabled = !(m->opt.disableflags & mjDSBL_CONTACT);
  model.filter_parent = !(m->opt.disableflags & mjDSBL_FILTERPARENT);
  model.gravity = (m->opt.disableflags & mjDSBL_GRAVITY) ? Vec3::Zero() : ToVec3(m->opt.gravity);
  model.cone = m->opt.cone == mjCONE_ELLIPTIC ? FrictionCone::kElliptic : FrictionCone::kPyramidal;
  model.impratio = m->opt.impratio;
  model.refsafe = !(m->opt.disableflags & mjDSBL_REFSAFE);
}

void ConvertBodies(const mjModel* m, Model& model) {
  model.nbody = m->nbody;
  for (int b = 0; b < m->nbody; ++b) {
    model.body_name.push_back(Name(m, mjOBJ_BODY, b));
    model.body_parent.push_back(b == 0 ? -1 : m->body_parentid[b]);
    model.body_root.push_back(m->body_rootid[b]);
    model.body_weld.push_back(m->body_weldid[b]);
    model.body_jnt_adr.push_back(m->body_jntnum[b] > 0 ? m->body_jntadr[b] : -1);
    model.body_jnt_num.push_back(m->body_jntnum[b]);
    model.body_dof_adr.push_back(m->body_dofnum[b] > 0 ? m->body_dofadr[b] : -1);
    model.body_dof_num.push_back(m->body_dofnum[b]);
    model.body_pos.push_back(ToVec3(m->body_pos + 3 * b));
    model.body_quat.push_back(ToQuat(m->body_quat + 4 * b));
    model.body_ipos.push_back(ToVec3(m->body_ipos + 3 * b));
    model.body_iquat.push_back(ToQuat(m->body_iquat + 4 * b));
    model.body_mass.push_back(m->body_mass[b]);
    model.body_inertia.push_back(ToVec3(m->body_inertia + 3 * b));
    model.body_invweight0.emplace_back(m->body_invweight0[2 * b], m->body_invweight0[2 * b + 1]);
  }
}

void ConvertJointsAndDofs(const mjModel* m, Model& model) {
  model.njnt = m->njnt;
  model.nq = m->nq;
  model.nv = m->nv;
  for (int j = 0; j < m->njnt; ++j) {
    model.jnt_name.push_back(Name(m, mjOBJ_JOINT, j));
    model.jnt_type.push_back(static_cast<JointType>(m->jnt_type[j]));
    model.jnt_body.push_back(m->jnt_bodyid[j]);
    model.jnt_qpos_adr.push_back(m->jnt_qposadr[j]);
    model.jnt_dof_adr.push_back(m->jnt_dofadr[j]);
    model.jnt_pos.push_back(ToVec3(m->jnt_pos + 3 * j));
    model.jnt_axis.push_back(ToVec3(m->jnt_axis + 3 * j));
    model.jnt_stiffness.push_back(m->jnt_stiffness[j]);
    model.jnt_limited.push_back(m->jnt_limited[j] != 0);
    model.jnt_range_lower.push_back(m->jnt_range[2 * j]);
    model.jnt_range_upper.push_back(m->jnt_range[2 * j + 1]);
    model.jnt_margin.push_back(m->jnt_margin[j]);
    model.jnt_solref.push_back(ToSolRef(m->jnt_solref + mjNREF * j));
    model.jnt_solimp.push_back(ToSolImp(m->jnt_solimp + mjNIMP * j));
  }
  for (int i = 0; i < m->nv; ++i) {
    model.dof_body.push_back(m->dof_bodyid[i]);
    model.dof_jnt.push_back(m->dof_jntid[i]);
    model.dof_parent.push_back(m->dof_parentid[i]);
    model.dof_armature.push_back(m->dof_armature[i]);
    model.dof_damping.push_back(m->dof_damping[i]);
    model.dof_frictionloss.push_back(m->dof_frictionloss[i]);
    model.dof_invweight0.push_back(m->dof_invweight0[i]);
    model.dof_solref.push_back(ToSolRef(m->dof_solref + mjNREF * i));
    model.dof_solimp.push_back(ToSolImp(m->dof_solimp + mjNIMP * i));
  }
  model.qpos0.assign(m->qpos0, m->qpos0 + m->nq);
  model.qpos_spring.assign(m->qpos_spring, m->qpos_spring + m->nq);
}

// A subsystem is a tree hanging from the world that has at least one dof. MuJoCo numbers bodies
// depth-first, so each tree's bodies, and therefore its dofs, are contiguous.
void BuildSubsystems(const mjModel* m, Model& model) {
  model.body_subsystem.assign(m->nbody, -1);
  for (int root = 1; root < m->nbody; ++root) {
    if (m->body_parentid[root] != 0) continue;
    int end = root + 1;
    while (end < m->nbody && m->body_rootid[end] == root) ++end;
    int dof_num = 0;
    for (int b = root; b < end; ++b) dof_num += m->body_dofnum[b];
    if (dof_num == 0) continue;  // a static tree: part of the world
    const int subsystem = model.nsubsystem++;
    int dof_adr = -1;
    for (int b = root; b < end; ++b) {
      if (m->body_weldid[b] != 0) model.body_subsystem[b] = subsystem;  // moves
      if (dof_adr < 0 && m->body_dofnum[b] > 0) dof_adr = m->body_dofadr[b];
    }
    model.subsystem_root_body.push_back(root);
    model.subsystem_body_adr.push_back(root);
    model.subsystem_body_num.push_back(end - root);
    model.subsystem_dof_adr.push_back(dof_adr);
    model.subsystem_dof_num.push_back(dof_num);
  }
}

// Mesh k's hull graph (layout above ConvertGeomsAndMeshes' hull faces): edge_localid lists hull
// vertex i's neighbours from vert_edgeadr[i], ended by -1. Also the cube map of walk starts.
void ConvertMeshGraph(const mjModel* m, int k, Model& model) {
  const int vert_adr = static_cast<int>(model.mesh_graph_vert.size());
  model.mesh_graph_vert_adr.push_back(vert_adr);
  int numvert = 0;
  if (m->mesh_graphadr[k] >= 0) {
    const int* graph = m->mesh_graph + m->mesh_graphadr[k];
    numvert = graph[0];
    const int numface = graph[1];
    const int* vert_edgeadr = graph + 2;
    const int* vert_globalid = vert_edgeadr + numvert;
    const int* edge_localid = vert_globalid + numvert;
    const int edge_count = numvert + 3 * numface;
    for (int i = 0; i < numvert; ++i) {
      model.mesh_graph_vert.push_back(vert_globalid[i]);
      model.mesh_graph_edge_adr.push_back(static_cast<int>(model.mesh_graph_edge.size()));
      int num = 0;
      for (int e = vert_edgeadr[i]; e < edge_count && edge_localid[e] >= 0; ++e, ++num) {
        model.mesh_graph_edge.push_back(edge_localid[e]);
      }
      model.mesh_graph_edge_num.push_back(num);
    }
  }
  model.mesh_graph_vert_num.push_back(numvert);
  // The cube map of walk starts (Model::mesh_graph_dir_start). Each face's first cell starts from
  // the face axis' extreme (a scan, first hull vertex on ties); every other cell climbs greedily
  // from its neighbour's vertex (the previous one in its row, or the previous row's first) to a
  // vertex no neighbour of which is farther along the cell's centre direction. On a convex hull
  // that is the support, up to rounding; a start need be no more than near it.
  const auto point = [&](int i) -> const Vec3& {
    return model.mesh_vert[model.mesh_vert_adr[k] + model.mesh_graph_vert[vert_adr + i]];
  };
  const auto climb = [&](int h, const Vec3& d) {
    double best_dot = point(h).dot(d);
    for (;;) {
      int next = -1;
      const int edge_adr = model.mesh_graph_edge_adr[vert_adr + h];
      for (int e = 0; e < model.mesh_graph_edge_num[vert_adr + h]; ++e) {
        const int n = model.mesh_graph_edge[edge_adr + e];
        const double dot = point(n).dot(d);
        if (dot > best_dot) {
          best_dot = dot;
          next = n;
        }
      }
      if (next < 0) return h;
      h = next;
    }
  };
  for (int face = 0; face < 6; ++face) {
    const int axis = face / 2;
    const double sign = face % 2 == 0 ? 1.0 : -1.0;
    int row_start = 0;
    double best_value = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < numvert; ++i) {
      const double value = sign * point(i)[axis];
      if (value > best_value) {
        best_value = value;
        row_start = i;
      }
    }
    for (int row = 0; row < kMeshStartCells; ++row) {
      int h = row_start;
      for (int col = 0; col < kMeshStartCells; ++col) {
        Vec3 d = Vec3::Zero();
        d[axis] = sign;
        d[(axis + 1) % 3] = (2.0 * row + 1) / kMeshStartCells - 1;
        d[(axis + 2) % 3] = (2.0 * col + 1) / kMeshStartCells - 1;
        if (numvert > 0) h = climb(h, d);
        if (col == 0) row_start = h;
        model.mesh_graph_dir_start.push_back(h);
      }
    }
  }
}

void ConvertGeomsAndMeshes(const mjModel* m, Model& model) {
  model.ngeom = m->ngeom;
  for (int g = 0; g < m->ngeom; ++g) {
    model.geom_name.push_back(Name(m, mjOBJ_GEOM, g));
    model.geom_type.push_back(static_cast<GeomType>(m->geom_type[g]));
    model.geom_body.push_back(m->geom_bodyid[g]);
    model.geom_pos.push_back(ToVec3(m->geom_pos + 3 * g));
    model.geom_quat.push_back(ToQuat(m->geom_quat + 4 * g));
    model.geom_size.push_back(ToVec3(m->geom_size + 3 * g));
    model.geom_friction.push_back(ToVec3(m->geom_friction + 3 * g));
    model.geom_contype.push_back(m->geom_contype[g]);
    model.geom_conaffinity.push_back(m->geom_conaffinity[g]);
    model.geom_condim.push_back(m->geom_condim[g]);
    model.geom_priority.push_back(m->geom_priority[g]);
    model.geom_margin.push_back(m->geom_margin[g]);
    model.geom_gap.push_back(m->geom_gap[g]);
    model.geom_solref.push_back(ToSolRef(m->geom_solref + mjNREF * g));
    model.geom_solimp.push_back(ToSolImp(m->geom_solimp + mjNIMP * g));
    model.geom_solmix.push_back(m->geom_solmix[g]);
    model.geom_rbound.push_back(m->geom_rbound[g]);
    model.geom_mesh.push_back(m->geom_type[g] == mjGEOM_MESH ? m->geom_dataid[g] : -1);
  }

  model.nmesh = m->nmesh;
  for (int k = 0; k < m->nmesh; ++k) {
    model.mesh_vert_adr.push_back(static_cast<int>(model.mesh_vert.size()));
    model.mesh_vert_num.push_back(m->mesh_vertnum[k]);
    for (int v = 0; v < m->mesh_vertnum[k]; ++v) {
      const float* p = m->mesh_vert + 3 * (m->mesh_vertadr[k] + v);
      model.mesh_vert.emplace_back(p[0], p[1], p[2]);
    }
    model.mesh_face_adr.push_back(static_cast<int>(model.mesh_face.size()));
    model.mesh_face_num.push_back(m->mesh_facenum[k]);
    for (int f = 0; f < m->mesh_facenum[k]; ++f) {
      const int* t = m->mesh_face + 3 * (m->mesh_faceadr[k] + f);
      model.mesh_face.emplace_back(t[0], t[1], t[2]);
    }
    // MuJoCo's convex-hull graph: [numvert, numface, vert_edgeadr(numvert),
    // vert_globalid(numvert), edge_localid(numvert + 3 numface), face_globalid(3 numface)];
    // face_globalid holds the hull triangles as indices into the mesh's vertices.
    model.mesh_hull_face_adr.push_back(static_cast<int>(model.mesh_hull_face.size()));
    int hull_faces = 0;
    if (m->mesh_graphadr[k] >= 0) {
      const int* graph = m->mesh_graph + m->mesh_graphadr[k];
      const int numvert = graph[0];
      hull_faces = graph[1];
      const int* face_globalid = graph + 2 + numvert + numvert + (numvert + 3 * hull_faces);
      for (int f = 0; f < hull_faces; ++f) {
        model.mesh_hull_face.emplace_back(face_globalid[3 * f], face_globalid[3 * f + 1],
                                          face_globalid[3 * f + 2]);
      }
    }
    model.mesh_hull_face_num.push_back(hull_faces);
    ConvertMeshGraph(m, k, model);
  }
}

void ConvertSites(const mjModel* m, Model& model) {
  model.nsite = m->nsite;
  for (int i = 0; i < m->nsite; ++i) {
    model.site_name.push_back(Name(m, mjOBJ_SITE, i));
    model.site_body.push_back(m->site_bodyid[i]);
    model.site_pos.push_back(ToVec3(m->site_pos + 3 * i));
    model.site_quat.push_back(ToQuat(m->site_quat + 4 * i));
  }
}

// Fixed tendons as joint coefficient lists (each joint once: FindUnsupportedFeature refused
// repeats; zero coefficients dropped); a spatial tendon keeps its id with no joints (it exerts no
// force: FindUnsupportedFeature refused it otherwise).
void ConvertTendons(const mjModel* m, Model& model) {
  model.ntendon = m->ntendon;
  for (int i = 0; i < m->ntendon; ++i) {
    model.tendon_name.push_back(Name(m, mjOBJ_TENDON, i));
    const int adr = static_cast<int>(model.wrap_jnt.size());
    model.tendon_wrap_adr.push_back(adr);
    if (IsFixedTendon(m, i)) {
      for (int k = m->tendon_adr[i]; k < m->tendon_adr[i] + m->tendon_num[i]; ++k) {
        const int joint = m->wrap_objid[k];
        if (m->wrap_prm[k] == 0) continue;  // adds nothing to L
        model.wrap_jnt.push_back(joint);
        model.wrap_qpos_adr.push_back(m->jnt_qposadr[joint]);
        model.wrap_dof.push_back(m->jnt_dofadr[joint]);
        model.wrap_coef.push_back(m->wrap_prm[k]);
        model.wrap_tendon.push_back(i);
      }
    }
    model.tendon_wrap_num.push_back(static_cast<int>(model.wrap_jnt.size()) - adr);
    model.tendon_limited.push_back(m->tendon_limited[i] != 0);
    model.tendon_range_lower.push_back(m->tendon_range[2 * i]);
    model.tendon_range_upper.push_back(m->tendon_range[2 * i + 1]);
    model.tendon_margin.push_back(m->tendon_margin[i]);
    model.tendon_solref_lim.push_back(ToSolRef(m->tendon_solref_lim + mjNREF * i));
    model.tendon_solimp_lim.push_back(ToSolImp(m->tendon_solimp_lim + mjNIMP * i));
    model.tendon_invweight0.push_back(m->tendon_invweight0[i]);
    model.tendon_stiffness.push_back(m->tendon_stiffness[i]);
    model.tendon_damping.push_back(m->tendon_damping[i]);
    model.tendon_lengthspring.push_back(m->tendon_lengthspring[i]);
  }
  model.nwrap = static_cast<int>(model.wrap_jnt.size());
}

void ConvertActuators(const mjModel* m, Model& model) {
  model.nu = m->nu;
  for (int i = 0; i < m->nu; ++i) {
    const bool affine_bias = m->actuator_biastype[i] == mjBIAS_AFFINE;
    const mjtNum* bias = m->actuator_biasprm + i * mjNBIAS;
    const bool slider_crank = m->actuator_trntype[i] == mjTRN_SLIDERCRANK;
    const bool tendon = m->actuator_trntype[i] == mjTRN_TENDON;
    model.actuator_name.push_back(Name(m, mjOBJ_ACTUATOR, i));
    model.actuator_transmission.push_back(slider_crank ? ActuatorTransmission::kSliderCrank
                                          : tendon     ? ActuatorTransmission::kTendon
                                                       : ActuatorTransmission::kJoint);
    model.actuator_jnt.push_back(slider_crank || tendon ? -1 : m->actuator_trnid[2 * i]);
    model.actuator_tendon.push_back(tendon ? m->actuator_trnid[2 * i] : -1);
    model.actuator_crank_site.push_back(slider_crank ? m->actuator_trnid[2 * i] : -1);
    model.actuator_slider_site.push_back(slider_crank ? m->actuator_trnid[2 * i + 1] : -1);
    model.actuator_activation.push_back(-1);
    model.actuator_crank_length.push_back(slider_crank ? m->actuator_cranklength[i] : 0.0);
    model.actuator_gear.push_back(m->actuator_gear[6 * i]);
    model.actuator_gain.push_back(m->actuator_gainprm[i * mjNGAIN]);
    model.actuator_bias0.push_back(affine_bias ? bias[0] : 0.0);
    model.actuator_bias1.push_back(affine_bias ? bias[1] : 0.0);
    model.actuator_bias2.push_back(affine_bias ? bias[2] : 0.0);
    const double bias1 = model.actuator_bias1.back(), bias2 = model.actuator_bias2.back();
    const int joint = model.actuator_jnt.back();
    const bool scalar_joint = joint >= 0 && (model.jnt_type[joint] == JointType::kHinge ||
                                             model.jnt_type[joint] == JointType::kSlide);
    const bool fixed_tendon = tendon && model.tendon_wrap_num[model.actuator_tendon.back()] > 0;
    model.actuator_servo_shaped.push_back((scalar_joint || fixed_tendon) && bias1 <= 0 &&
                                          bias2 <= 0 && (bias1 < 0 || bias2 < 0));
    model.actuator_ctrl_limited.push_back(m->actuator_ctrllimited[i] != 0);
    model.actuator_ctrl_lower.push_back(m->actuator_ctrlrange[2 * i]);
    model.actuator_ctrl_upper.push_back(m->actuator_ctrlrange[2 * i + 1]);
    model.actuator_force_limited.push_back(m->actuator_forcelimited[i] != 0);
    model.actuator_force_lower.push_back(m->actuator_forcerange[2 * i]);
    model.actuator_force_upper.push_back(m->actuator_forcerange[2 * i + 1]);
  }
}

// The subsystem whose dofs alone actuator a drives: a joint's, or the one holding every joint of
// its fixed tendon; -1 for a slider-crank or a tendon across trees.
int ActuatorSubsystem(const Model& model, int a) {
  switch (model.actuator_transmission[a]) {
    case ActuatorTransmission::kJoint:
      return model.body_subsystem[model.jnt_body[model.actuator_jnt[a]]];
    case ActuatorTransmission::kTendon: {
      const int t = model.actuator_tendon[a];
      int subsystem = -1;
      for (int k = model.tendon_wrap_adr[t];
           k < model.tendon_wrap_adr[t] + model.tendon_wrap_num[t]; ++k) {
        const int j = model.body_subsystem[model.dof_body[model.wrap_dof[k]]];
        if (subsystem >= 0 && j != subsystem) return -1;
        subsystem = j;
      }
      return subsystem;
    }
    case ActuatorTransmission::kSliderCrank:
    case ActuatorTransmission::kActivation:
      return -1;
  }
  return -1;
}

// The per-tree indexes of the step's tree tasks: each body's geoms, each subsystem's actuators
// and tendon springs.
// MuJoCo stores a body's geoms together and the bodies' geoms in body order; an importer that
// broke that would make the tree tasks place the wrong geoms, so it is checked here.
std::string IndexTrees(const mjModel* m, Model& model) {
  model.body_geom_adr.assign(m->nbody + 1, 0);
  for (int g = 0; g < m->ngeom; ++g) {
    if (g > 0 && m->geom_bodyid[g] < m->geom_bodyid[g - 1]) {
      return "internal error: MuJoCo's geoms are not ordered by body";
    }
    ++model.body_geom_adr[m->geom_bodyid[g] + 1];
  }
  for (int b = 0; b < m->nbody; ++b) model.body_geom_adr[b + 1] += model.body_geom_adr[b];
  model.subsystem_actuator_adr.assign(model.nsubsystem + 1, 0);
  model.subsystem_actuators.clear();
  model.actuators_in_trees = true;
  for (int j = 0; j < model.nsubsystem; ++j) {
    for (int a = 0; a < model.nu; ++a) {
      if (ActuatorSubsystem(model, a) == j) model.subsystem_actuators.push_back(a);
    }
    model.subsystem_actuator_adr[j + 1] = static_cast<int>(model.subsystem_actuators.size());
  }
  for (int a = 0; a < model.nu; ++a) {
    if (ActuatorSubsystem(model, a) < 0) model.actuators_in_trees = false;
  }
  model.subsystem_passive_wrap_adr.assign(model.nsubsystem + 1, 0);
  model.subsystem_passive_wraps.clear();
  for (int j = 0; j < model.nsubsystem; ++j) {
    for (int t = 0; t < model.ntendon; ++t) {
      if (model.tendon_stiffness[t] == 0 && model.tendon_damping[t] == 0) continue;
      for (int k = model.tendon_wrap_adr[t];
           k < model.tendon_wrap_adr[t] + model.tendon_wrap_num[t]; ++k) {
        if (model.body_subsystem[model.dof_body[model.wrap_dof[k]]] == j) {
          model.subsystem_passive_wraps.push_back(k);
        }
      }
    }
    model.subsystem_passive_wrap_adr[j + 1] =
        static_cast<int>(model.subsystem_passive_wraps.size());
  }
  return "";
}

// eq_data layout in MuJoCo 2.2.2 (checked by tests/model and, through the constraint errors,
// tests/physics/equality_test): connect = anchor in body1 (3), anchor in body2 (3); weld = anchor
// in body2 (3), pose of body2 relative to body1 (position 3, quaternion 4), torque scale (1).
void ConvertEqualities(const mjModel* m, Model& model) {
  model.neq = m->neq;
  for (int i = 0; i < m->neq; ++i) {
    const mjtNum* data = m->eq_data + i * mjNEQDATA;
    const bool weld = m->eq_type[i] == mjEQ_WELD;
    model.eq_type.push_back(weld ? EqualityType::kWeld : EqualityType::kConnect);
    model.eq_body1.push_back(m->eq_obj1id[i]);
    model.eq_body2.push_back(m->eq_obj2id[i]);
    model.eq_active.push_back(m->eq_active[i] != 0);
    model.eq_anchor.push_back(ToVec3(data));
    model.eq_anchor2.push_back(weld ? Vec3::Zero() : ToVec3(data + 3));
    model.eq_relpos.push_back(weld ? ToVec3(data + 3) : Vec3::Zero());
    model.eq_relquat.push_back(weld ? QuatNormalize(ToQuat(data + 6)) : Quat(1, 0, 0, 0));
    model.eq_torquescale.push_back(weld ? data[10] : 0.0);
    model.eq_solref.push_back(ToSolRef(m->eq_solref + mjNREF * i));
    model.eq_solimp.push_back(ToSolImp(m->eq_solimp + mjNIMP * i));
  }
}

// MuJoCo's compiler messages span lines and end with the offending element and its line
// ("Element 'bogus', line 4", "line = 3" or "Line number=4"); users get one line
// "source:4: message".
std::string LocatedMessage(const std::string& source, const std::string& mujoco_message) {
  std::string message;
  for (char c : mujoco_message) {
    if (c != '\n') {
      message += c;
    } else if (!message.empty() && message.back() == ':') {
      message += ' ';
    } else if (!message.empty() && message.back() != ' ') {
      message += "; ";
    }
  }
  while (!message.empty() && (message.back() == ' ' || message.back() == ';')) message.pop_back();

  // The first "line" (any case) followed by optional " number", '=' or spaces, then digits.
  std::string lower = mujoco_message;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (size_t at = lower.find("line"); at != std::string::npos; at = lower.find("line", at + 1)) {
    size_t i = at + 4;
    if (lower.compare(i, 7, " number") == 0) i += 7;
    while (i < lower.size() && (lower[i] == ' ' || lower[i] == '=')) ++i;
    size_t end = i;
    while (end < lower.size() && std::isdigit(static_cast<unsigned char>(lower[end]))) ++end;
    if (end > i) return source + ":" + lower.substr(i, end - i) + ": " + message;
  }
  return source + ": " + message;
}

// MuJoCo encodes a body pair as the signature ((body1 + 1) << 16) + body2 + 1.
void ConvertCollisionFilters(const mjModel* m, Model& model) {
  model.nexclude = m->nexclude;
  for (int i = 0; i < m->nexclude; ++i) {
    const int signature = m->exclude_signature[i];
    model.exclude_body1.push_back((signature >> 16) - 1);
    model.exclude_body2.push_back((signature & 0xFFFF) - 1);
  }
  model.npair = m->npair;
  for (int i = 0; i < m->npair; ++i) {
    model.pair_geom1.push_back(m->pair_geom1[i]);
    model.pair_geom2.push_back(m->pair_geom2[i]);
    model.pair_margin.push_back(m->pair_margin[i]);
    model.pair_gap.push_back(m->pair_gap[i]);
    model.pair_friction.push_back(m->pair_friction[5 * i]);
    model.pair_friction_torsion.push_back(m->pair_friction[5 * i + 2]);
    model.pair_friction_rolling.push_back(m->pair_friction[5 * i + 3]);
    model.pair_condim.push_back(m->pair_dim[i]);
    model.pair_solref.push_back(ToSolRef(m->pair_solref + mjNREF * i));
    model.pair_solimp.push_back(ToSolImp(m->pair_solimp + mjNIMP * i));
  }
  // The first geom whose contacts can have torsional or rolling friction rows (the solvers that
  // cannot express them refuse the model by naming it: SolverRefusesModel).
  for (int g = 0; g < m->ngeom && model.high_condim_geom < 0; ++g) {
    if (m->geom_condim[g] > 3) model.high_condim_geom = g;
  }
  for (int i = 0; i < m->npair && model.high_condim_geom < 0; ++i) {
    if (m->pair_dim[i] > 3) model.high_condim_geom = m->pair_geom1[i];
  }
}

// `text` as the value of `key` in a custom text's data: a finite number, >= 0 when
// `non_negative`, else > 0. Empty on success, else the error naming the element.
std::string ParseKeyNumber(const std::string& element, const std::string& key,
                           const std::string& text, bool non_negative, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  if (*end == '\0' && std::isfinite(*value) && (non_negative ? *value >= 0 : *value > 0)) return "";
  return element + ": " + key + " '" + text + "' is not a " +
         (non_negative ? "non-negative" : "positive") + " number";
}

// Compliant contact parameters from custom text elements MuJoCo keeps but ignores:
//   <text name="alsim:contact:GEOM" data="stiffness 1e5 dissipation 10 stiction 1e-4"/>
//   <text name="alsim:contact:GEOM1:GEOM2" data="..."/>   (one pair's contacts)
// Keys may be given in any order and any subset: stiffness (N/m, > 0), dissipation (s/m, >= 0),
// stiction (m/s, > 0), friction_x and friction_y together (anisotropic friction along the
// geom's, or the pair's first-named geom's, local x and y axes; >= 0), and Drumwright's damping
// (B_n, N s/m, >= 0) and hertz (E*, Pa, > 0: the Hertz law instead of a linear stiffness, so not
// with stiffness). A name that matches a geom whole is that geom's, else GEOM1:GEOM2 a pair's.
// Empty on success, else the error naming the element.
std::string ConvertContactCompliance(const mjModel* m, Model& model) {
  model.geom_contact_stiffness.assign(m->ngeom, -1.0);
  model.geom_contact_dissipation.assign(m->ngeom, -1.0);
  model.geom_stiction_speed.assign(m->ngeom, -1.0);
  model.geom_friction_x.assign(m->ngeom, -1.0);
  model.geom_friction_y.assign(m->ngeom, -1.0);
  model.geom_contact_damping.assign(m->ngeom, -1.0);
  model.geom_hertz_modulus.assign(m->ngeom, -1.0);
  const std::string prefix = "alsim:contact:";
  for (int t = 0; t < m->ntext; ++t) {
    const std::string name = Name(m, mjOBJ_TEXT, t);
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string element = "custom text '" + name + "'";
    const std::string target = name.substr(prefix.size());
    int geom1 = mj_name2id(m, mjOBJ_GEOM, target.c_str());
    int geom2 = -1;
    if (geom1 < 0) {
      const size_t colon = target.find(':');
      if (colon != std::string::npos) {
        geom1 = mj_name2id(m, mjOBJ_GEOM, target.substr(0, colon).c_str());
        geom2 = mj_name2id(m, mjOBJ_GEOM, target.substr(colon + 1).c_str());
      }
      if (geom1 < 0 || geom2 < 0) {
        return element + ": no geom (or pair of geoms GEOM1:GEOM2) named '" + target + "'";
      }
      if (geom1 == geom2) return element + ": a pair needs two different geoms";
    }
    // stiffness, dissipation, stiction, friction_x, friction_y, damping, hertz
    double values[7] = {-1, -1, -1, -1, -1, -1, -1};
    std::istringstream data(m->text_data + m->text_adr[t]);
    std::string key;
    while (data >> key) {
      const char* keys[7] = {"stiffness",  "dissipation", "stiction", "friction_x",
                             "friction_y", "damping",     "hertz"};
      int k = 0;
      while (k < 7 && key != keys[k]) ++k;
      if (k == 7) {
        return element + ": unknown key '" + key +
               "' (stiffness, dissipation, stiction, friction_x, friction_y, damping or hertz)";
      }
      std::string text;
      if (!(data >> text)) return element + ": '" + key + "' has no value";
      const bool non_negative = k == 1 || k == 3 || k == 4 || k == 5;
      if (std::string error = ParseKeyNumber(element, key, text, non_negative, &values[k]);
          !error.empty()) {
        return error;
      }
    }
    if ((values[3] < 0) != (values[4] < 0)) {
      return element + ": friction_x and friction_y go together (the friction ellipse's two axes)";
    }
    if (values[0] >= 0 && values[6] >= 0) {
      return element + ": stiffness and hertz are two normal laws (linear, Hertz); set one";
    }
    if (geom2 < 0) {
      model.geom_contact_damping[geom1] = values[5];
      model.geom_hertz_modulus[geom1] = values[6];
      model.geom_contact_stiffness[geom1] = values[0];
      model.geom_contact_dissipation[geom1] = values[1];
      model.geom_stiction_speed[geom1] = values[2];
      model.geom_friction_x[geom1] = values[3];
      model.geom_friction_y[geom1] = values[4];
      continue;
    }
    model.contact_pair_geom1.push_back(std::min(geom1, geom2));
    model.contact_pair_geom2.push_back(std::max(geom1, geom2));
    model.contact_pair_stiffness.push_back(values[0]);
    model.contact_pair_dissipation.push_back(values[1]);
    model.contact_pair_stiction_speed.push_back(values[2]);
    model.contact_pair_friction_x.push_back(values[3]);
    model.contact_pair_friction_y.push_back(values[4]);
    model.contact_pair_friction_geom.push_back(geom1);
    model.contact_pair_damping.push_back(values[5]);
    model.contact_pair_hertz_modulus.push_back(values[6]);
  }
  return "";
}

// Drumwright's springs on joint and tendon limits and on equality constraints (custom text
// MuJoCo ignores; docs/engine.md, "Drumwright's springs"):
//   <text name="alsim:joint:JOINT" data="stiffness 1e6 damping 10"/>
//   <text name="alsim:tendon:TENDON" data="..."/>   <text name="alsim:equality:NAME" data="..."/>
// stiffness K (> 0) and damping B (>= 0) in N/m and N s/m, or N m/rad and N m s/rad for hinges
// and weld rotations; negative where unset (the solver's option applies).
std::string ConvertConstraintSprings(const mjModel* m, Model& model) {
  model.jnt_spring_stiffness.assign(m->njnt, -1.0);
  model.jnt_spring_damping.assign(m->njnt, -1.0);
  model.tendon_spring_stiffness.assign(m->ntendon, -1.0);
  model.tendon_spring_damping.assign(m->ntendon, -1.0);
  model.eq_spring_stiffness.assign(m->neq, -1.0);
  model.eq_spring_damping.assign(m->neq, -1.0);
  struct Kind {
    const char* prefix;
    int type;
    std::vector<double>* stiffness;
    std::vector<double>* damping;
  };
  const Kind kinds[3] = {
      {"alsim:joint:", mjOBJ_JOINT, &model.jnt_spring_stiffness, &model.jnt_spring_damping},
      {"alsim:tendon:", mjOBJ_TENDON, &model.tendon_spring_stiffness, &model.tendon_spring_damping},
      {"alsim:equality:", mjOBJ_EQUALITY, &model.eq_spring_stiffness, &model.eq_spring_damping}};
  for (int t = 0; t < m->ntext; ++t) {
    const std::string name = Name(m, mjOBJ_TEXT, t);
    for (const Kind& kind : kinds) {
      const std::string prefix = kind.prefix;
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string element = "custom text '" + name + "'";
      const std::string target = name.substr(prefix.size());
      const int id = mj_name2id(m, kind.type, target.c_str());
      if (id < 0) {
        return element + ": no " + prefix.substr(6, prefix.size() - 7) + " named '" + target + "'";
      }
      std::istringstream data(m->text_data + m->text_adr[t]);
      std::string key;
      while (data >> key) {
        const bool stiffness = key == "stiffness";
        if (!stiffness && key != "damping") {
          return element + ": unknown key '" + key + "' (stiffness or damping)";
        }
        std::string text;
        if (!(data >> text)) return element + ": '" + key + "' has no value";
        double value = 0;
        if (std::string error = ParseKeyNumber(element, key, text, !stiffness, &value);
            !error.empty()) {
          return error;
        }
        (stiffness ? *kind.stiffness : *kind.damping)[id] = value;
      }
    }
  }
  return "";
}

// Elastic foundations (Drumwright, Sec. 5.5; custom text MuJoCo ignores):
//   <text name="alsim:foundation:PLANE" data="modulus 1e7 depth 1 damping 1 sites elem"/>
// PLANE a plane geom; every box site whose name starts with the prefix after `sites` is an
// element, of area 4 size_x size_y (the site's footprint, its z axis along the plane's normal
// [OURS]) and stiffness modulus (Pa, > 0) x area / depth (m, > 0); damping (N s/m per element,
// >= 0) defaults to 0. The element's body must move (not the world or a static body).
std::string ConvertFoundations(const mjModel* m, Model& model) {
  const std::string prefix = "alsim:foundation:";
  for (int t = 0; t < m->ntext; ++t) {
    const std::string name = Name(m, mjOBJ_TEXT, t);
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string element = "custom text '" + name + "'";
    const std::string target = name.substr(prefix.size());
    const int plane = mj_name2id(m, mjOBJ_GEOM, target.c_str());
    if (plane < 0) return element + ": no geom named '" + target + "'";
    if (m->geom_type[plane] != mjGEOM_PLANE) {
      return element + ": geom '" + target + "' is not a plane (a foundation is a plane)";
    }
    double modulus = -1, depth = -1, damping = 0;
    std::string sites;
    std::istringstream data(m->text_data + m->text_adr[t]);
    std::string key;
    while (data >> key) {
      std::string text;
      if (!(data >> text)) return element + ": '" + key + "' has no value";
      if (key == "sites") {
        sites = text;
        continue;
      }
      double* value = key == "modulus"   ? &modulus
                      : key == "depth"   ? &depth
                      : key == "damping" ? &damping
                                         : nullptr;
      if (value == nullptr) {
        return element + ": unknown key '" + key + "' (modulus, depth, damping or sites)";
      }
      if (std::string error = ParseKeyNumber(element, key, text, value == &damping, value);
          !error.empty()) {
        return error;
      }
    }
    if (modulus < 0 || depth < 0 || sites.empty()) {
      return element + ": needs modulus, depth and sites";
    }
    const size_t before = model.foundation_site.size();
    for (int s = 0; s < m->nsite; ++s) {
      const std::string site = Name(m, mjOBJ_SITE, s);
      if (site.compare(0, sites.size(), sites) != 0) continue;
      if (m->site_type[s] != mjGEOM_BOX) {
        return element + ": site '" + site + "' is not a box (an element's area is its footprint)";
      }
      if (m->body_weldid[m->site_bodyid[s]] == 0) {
        return element + ": site '" + site + "' does not move (its body is welded to the world)";
      }
      const double area = 4 * m->site_size[3 * s] * m->site_size[3 * s + 1];
      model.foundation_site.push_back(s);
      model.foundation_geom.push_back(plane);
      model.foundation_stiffness.push_back(modulus * area / depth);
      model.foundation_damping.push_back(damping);
    }
    if (model.foundation_site.size() == before) {
      return element + ": no site's name starts with '" + sites + "'";
    }
  }
  return "";
}

// Segments about the axis of an SDF of revolution's surface triangulation: chords sag by
// R (1 - cos(pi / 64)), 0.12% of its radius R.
constexpr int kSdfRevolutionSegments = 64;
// Columns about the axis of a thread's triangulation: scenes/assets/m48_bolt.stl's 120, whose
// chords sag r_maj (1 - cos(pi / 120)), 0.034% of the major radius.
constexpr int kSdfThreadSegments = 120;

// Reads "key v1 .. vn" values of an alsim:sdf text: `count` finite numbers after the key.
std::string ReadSdfNumbers(std::istringstream& data, const std::string& element,
                           const std::string& key, int count, double* values) {
  for (int i = 0; i < count; ++i) {
    std::string text;
    if (!(data >> text)) {
      return element + ": '" + key + "' needs " + std::to_string(count) + " number" +
             (count > 1 ? "s" : "");
    }
    char* end = nullptr;
    values[i] = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(values[i])) {
      return element + ": " + key + " '" + text + "' is not a finite number";
    }
  }
  return "";
}

// SdfKind::kRevolution from "a AR AZ b BR BZ padding D" (each key once, any order, all three).
std::string ReadSdfRevolution(std::istringstream& data, const std::string& element,
                              std::vector<double>* parameters) {
  double values[SdfRevolution::kParameterCount];
  bool seen[3] = {false, false, false};
  std::string key;
  while (data >> key) {
    const int k = key == "a" ? 0 : key == "b" ? 1 : key == "padding" ? 2 : -1;
    if (k < 0) return element + ": unknown key '" + key + "' of kind revolution (a, b, padding)";
    if (seen[k]) return element + ": '" + key + "' is given twice";
    seen[k] = true;
    const std::string error = ReadSdfNumbers(data, element, key, k < 2 ? 2 : 1, values + 2 * k);
    if (!error.empty()) return error;
  }
  for (int k = 0; k < 3; ++k) {
    if (!seen[k]) {
      return element + ": kind revolution needs 'a AR AZ', 'b BR BZ' and 'padding D'";
    }
  }
  if (!SdfRevolution::FromParameters(values).IsValid()) {
    return element + ": not a valid revolution (needs a_r >= 0, b_r >= 0 and padding > 0)";
  }
  parameters->assign(values, values + SdfRevolution::kParameterCount);
  return "";
}

// SdfKind::kThread from "major_diameter D pitch P z0 Z0 z1 Z1 handedness right|left" (each key
// at most once, any order; SdfThread's defaults, an M48 x 5 right-handed from z = -0.05 to 0.05,
// for those not given), as major_diameter pitch z0 z1 handedness (+1 right, -1 left).
std::string ReadSdfThread(std::istringstream& data, const std::string& element,
                          std::vector<double>* parameters) {
  SdfThread thread;
  double* fields[4] = {&thread.major_diameter, &thread.pitch, &thread.z0, &thread.z1};
  const char* names[5] = {"major_diameter", "pitch", "z0", "z1", "handedness"};
  bool seen[5] = {false, false, false, false, false};
  std::string key;
  while (data >> key) {
    int k = 0;
    while (k < 5 && key != names[k]) ++k;
    if (k == 5) {
      return element + ": unknown key '" + key +
             "' of kind thread (major_diameter, pitch, z0, z1, handedness)";
    }
    if (seen[k]) return element + ": '" + key + "' is given twice";
    seen[k] = true;
    if (k < 4) {
      const std::string error = ReadSdfNumbers(data, element, key, 1, fields[k]);
      if (!error.empty()) return error;
      continue;
    }
    std::string hand;
    if (!(data >> hand) || (hand != "right" && hand != "left")) {
      return element + ": handedness is right or left";
    }
    thread.right_handed = hand == "right";
  }
  if (!thread.IsValid()) {
    return element +
           ": not a valid thread (needs pitch > 0, major_diameter > 1.082532 pitch, "
           "z0 < z1)";
  }
  *parameters = {thread.major_diameter, thread.pitch, thread.z0, thread.z1,
                 thread.right_handed ? 1.0 : -1.0};
  return "";
}

// SDF geoms and concave meshes from custom text elements MuJoCo keeps but ignores:
//   <text name="alsim:sdf:GEOM" data="revolution a AR AZ b BR BZ padding D"/>
//   <text name="alsim:sdf:GEOM" data="thread major_diameter D pitch P z0 Z0 z1 Z1 handedness H"/>
//   <text name="alsim:concave:GEOM" data="triangles"/>
// The first makes GEOM (any type: MuJoCo's compiler takes its mass and inertia from it, the
// proxy) a GeomType::kSdf geom, the field given in the geom's frame; the second makes mesh geom
// GEOM collide by its triangles instead of its convex hull. A new SdfKind is a branch below with
// its reader, bounding radius, box and triangulation. Empty on success, else the error naming the
// element.
std::string ConvertSdfGeoms(const mjModel* m, Model& model) {
  model.geom_sdf.assign(m->ngeom, -1);
  model.geom_concave.assign(m->ngeom, 0);
  model.geom_many_contacts.assign(m->ngeom, 0);
  std::vector<std::vector<double>> declared(m->ngeom);
  std::vector<SdfKind> kind(m->ngeom, SdfKind::kRevolution);
  const std::string sdf_prefix = "alsim:sdf:", concave_prefix = "alsim:concave:";
  for (int t = 0; t < m->ntext; ++t) {
    const std::string name = Name(m, mjOBJ_TEXT, t);
    const bool sdf = name.compare(0, sdf_prefix.size(), sdf_prefix) == 0;
    const bool concave = name.compare(0, concave_prefix.size(), concave_prefix) == 0;
    if (!sdf && !concave) continue;
    const std::string element = "custom text '" + name + "'";
    const std::string target = name.substr((sdf ? sdf_prefix : concave_prefix).size());
    const int g = mj_name2id(m, mjOBJ_GEOM, target.c_str());
    if (g < 0) return element + ": no geom named '" + target + "'";
    std::istringstream data(m->text_data + m->text_adr[t]);
    if (concave) {
      if (m->geom_type[g] != mjGEOM_MESH) {
        return element + ": geom '" + target + "' is not a mesh (only a mesh has triangles)";
      }
      std::string word, extra;
      if (!(data >> word) || word != "triangles" || data >> extra) {
        return element + ": data must be 'triangles' (collide by the mesh's own triangles)";
      }
      model.geom_concave[g] = 1;
      continue;
    }
    if (!declared[g].empty()) return element + ": geom '" + target + "' is already an SDF";
    std::string kind_name;
    if (!(data >> kind_name)) return element + ": no kind (revolution or thread)";
    const bool revolution = kind_name == "revolution";
    if (!revolution && kind_name != "thread") {
      return element + ": unknown kind '" + kind_name + "' (revolution or thread)";
    }
    const std::string error = revolution ? ReadSdfRevolution(data, element, &declared[g])
                                         : ReadSdfThread(data, element, &declared[g]);
    if (!error.empty()) return error;
    kind[g] = revolution ? SdfKind::kRevolution : SdfKind::kThread;
  }
  for (int g = 0; g < m->ngeom; ++g) {
    if (model.geom_concave[g] && !declared[g].empty()) {
      return "geom '" + model.geom_name[g] + "' is declared both an SDF and a concave mesh";
    }
    model.geom_many_contacts[g] = model.geom_concave[g] || !declared[g].empty();
    if (declared[g].empty()) continue;
    const int k = model.nsdf++;
    model.geom_sdf[g] = k;
    model.geom_type[g] = GeomType::kSdf;
    model.geom_mesh[g] = -1;
    model.sdf_geom.push_back(g);
    model.sdf_kind.push_back(kind[g]);
    model.sdf_param_adr.push_back(static_cast<int>(model.sdf_param.size()));
    model.sdf_param_num.push_back(static_cast<int>(declared[g].size()));
    model.sdf_param.insert(model.sdf_param.end(), declared[g].begin(), declared[g].end());
    std::vector<Vec3> vertices;
    std::vector<Eigen::Vector3i> faces;
    SdfBox box;
    if (kind[g] == SdfKind::kRevolution) {
      const SdfRevolution shape = SdfRevolution::FromParameters(declared[g].data());
      model.geom_rbound[g] = shape.BoundingRadius();
      box = shape.LocalBox();
      shape.Triangulate(kSdfRevolutionSegments, &vertices, &faces);
    } else {
      const SdfThread shape = SdfThread::FromParameters(declared[g].data());
      model.geom_rbound[g] = shape.BoundingRadius();
      box = shape.LocalBox();
      shape.Triangulate(kSdfThreadSegments, &vertices, &faces);
    }
    model.sdf_box_lo.push_back(box.lo);
    model.sdf_box_hi.push_back(box.hi);
    model.sdf_vert_adr.push_back(static_cast<int>(model.sdf_vert.size()));
    model.sdf_vert_num.push_back(static_cast<int>(vertices.size()));
    model.sdf_vert.insert(model.sdf_vert.end(), vertices.begin(), vertices.end());
    model.sdf_face_adr.push_back(static_cast<int>(model.sdf_face.size()));
    model.sdf_face_num.push_back(static_cast<int>(faces.size()));
    model.sdf_face.insert(model.sdf_face.end(), faces.begin(), faces.end());
  }
  return "";
}

// MuJoCo's key_time, key_qpos, key_qvel and key_ctrl as compiled (omitted fields hold the model's
// values); what Model drops is said at Model::key_name.
void ConvertKeyframes(const mjModel* m, Model& model) {
  model.nkey = m->nkey;
  for (int k = 0; k < m->nkey; ++k) model.key_name.push_back(Name(m, mjOBJ_KEY, k));
  model.key_time.assign(m->key_time, m->key_time + m->nkey);
  model.key_qpos.assign(m->key_qpos, m->key_qpos + static_cast<std::size_t>(m->nkey) * m->nq);
  model.key_qvel.assign(m->key_qvel, m->key_qvel + static_cast<std::size_t>(m->nkey) * m->nv);
  model.key_ctrl.assign(m->key_ctrl, m->key_ctrl + static_cast<std::size_t>(m->nkey) * m->nu);
}

// ---- deformables (issue 48; engine/model/deformable_spec.h) -----------------------------------

// The largest companion or mesh file read from disk (a scene read from a file, not a client's).
constexpr std::size_t kMaxDeformableFileBytes = std::size_t{256} << 20;

// The deformables of the scene's custom text alsim:deformables (none without it): its data names
// the companion file, which `files` supplies with the meshes it names.
std::string ReadDeformableSpecs(const mjModel* m, const std::string& source,
                                const DeformableFileLookup& files,
                                std::vector<DeformableSpec>* out) {
  out->clear();
  const int text = mj_name2id(m, mjOBJ_TEXT, "alsim:deformables");
  if (text < 0) return "";
  std::istringstream data(m->text_data + m->text_adr[text]);
  std::string file, extra;
  if (!(data >> file) || (data >> extra)) {
    return source + ": custom text 'alsim:deformables' names one file (the companion XML)";
  }
  const std::string* bytes = files(file);
  if (bytes == nullptr) {
    return source + ": custom text 'alsim:deformables': no file '" + file + "' among the scene's";
  }
  return ParseDeformables(*bytes, file, files, out);
}

// A lookup over the scene's assets (by base name, as MuJoCo's VFS matches them).
DeformableFileLookup AssetLookup(const std::vector<ModelAsset>& assets) {
  return [&assets](const std::string& name) -> const std::string* {
    for (const auto& asset : assets) {
      if (BaseName(asset.name) == BaseName(name)) return &asset.bytes;
    }
    return nullptr;
  };
}

// A lookup reading files next to a scene on disk, each once, up to kMaxDeformableFileBytes.
DeformableFileLookup DiskLookup(const std::string& directory,
                                std::map<std::string, std::string>* cache) {
  return [directory, cache](const std::string& name) -> const std::string* {
    if (const auto it = cache->find(name); it != cache->end()) return &it->second;
    std::ifstream in(directory + name, std::ios::binary);
    if (!in) return nullptr;
    std::string bytes;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
      if (bytes.size() > kMaxDeformableFileBytes) return nullptr;
    }
    std::string& slot = (*cache)[name];
    slot = std::move(bytes);
    return &slot;
  };
}

// Each activation becomes an actuator after MuJoCo's (ActuatorTransmission::kActivation): an
// action column with its name and range, no force, no subsystem. Keyframes' controls are
// re-strided to the new nu with the activations at 0 clamped into their ranges.
void AddActivationActuators(Model& model) {
  const int activations = static_cast<int>(model.activation_name.size());
  if (activations == 0) return;
  const int old_nu = model.nu;
  model.activation_actuator.clear();
  for (int k = 0; k < activations; ++k) {
    model.activation_actuator.push_back(model.nu++);
    model.actuator_name.push_back(model.activation_name[k]);
    model.actuator_transmission.push_back(ActuatorTransmission::kActivation);
    model.actuator_jnt.push_back(-1);
    model.actuator_tendon.push_back(-1);
    model.actuator_crank_site.push_back(-1);
    model.actuator_slider_site.push_back(-1);
    model.actuator_activation.push_back(k);
    model.actuator_crank_length.push_back(0);
    model.actuator_gear.push_back(1);
    model.actuator_gain.push_back(0);
    model.actuator_bias0.push_back(0);
    model.actuator_bias1.push_back(0);
    model.actuator_bias2.push_back(0);
    model.actuator_servo_shaped.push_back(false);
    model.actuator_ctrl_limited.push_back(true);
    model.actuator_ctrl_lower.push_back(model.activation_range[k][0]);
    model.actuator_ctrl_upper.push_back(model.activation_range[k][1]);
    model.actuator_force_limited.push_back(false);
    model.actuator_force_lower.push_back(0);
    model.actuator_force_upper.push_back(0);
  }
  std::vector<double> key_ctrl(static_cast<std::size_t>(model.nkey) * model.nu);
  for (int key = 0; key < model.nkey; ++key) {
    for (int a = 0; a < model.nu; ++a) {
      key_ctrl[static_cast<std::size_t>(key) * model.nu + a] =
          a < old_nu ? model.key_ctrl[static_cast<std::size_t>(key) * old_nu + a]
                     : std::clamp(0.0, model.actuator_ctrl_lower[a], model.actuator_ctrl_upper[a]);
    }
  }
  model.key_ctrl = std::move(key_ctrl);
}

// The Model's deformable arrays from the parsed specs (model.h): lumped masses, rest volumes and
// Dm^-1, outward surface triangles, attachments resolved to bodies at qpos0, activations.
std::string ConvertDeformables(const mjModel* m, const std::vector<DeformableSpec>& specs,
                               Model& model) {
  if (specs.empty()) return "";
  // Bodies' frames at qpos0, for the attachments' offsets.
  std::unique_ptr<mjData, void (*)(mjData*)> d(nullptr, mj_deleteData);
  std::set<std::string> activation_names;
  for (int u = 0; u < m->nu; ++u) activation_names.insert(Name(m, mjOBJ_ACTUATOR, u));
  for (const DeformableSpec& spec : specs) {
    const std::string element = "deformable '" + spec.name + "'";
    const int d_index = model.ndeform++;
    const int vert_adr = model.nvert, tet_adr = model.ntet;
    model.deform_name.push_back(spec.name);
    model.deform_material.push_back(static_cast<std::uint8_t>(spec.material));
    model.deform_young.push_back(spec.young);
    model.deform_poisson.push_back(spec.poisson);
    model.deform_density.push_back(spec.density);
    model.deform_friction.push_back(spec.friction);
    model.deform_thickness.push_back(spec.thickness);
    model.deform_rgba.push_back(spec.rgba);
    model.deform_vert_adr.push_back(vert_adr);
    model.deform_vert_num.push_back(static_cast<int>(spec.vertices.size()));
    model.deform_tet_adr.push_back(tet_adr);
    model.deform_tet_num.push_back(static_cast<int>(spec.tets.size()));
    for (const Vec3& x : spec.vertices) {
      model.vert_pos0.push_back(x);
      model.vert_mass.push_back(0);
      model.vert_deform.push_back(d_index);
      model.vert_body.push_back(-1);
      model.vert_body_offset.push_back(Vec3::Zero());
    }
    model.nvert += static_cast<int>(spec.vertices.size());
    for (const auto& t : spec.tets) {
      const std::array<int, 4> global{t[0] + vert_adr, t[1] + vert_adr, t[2] + vert_adr,
                                      t[3] + vert_adr};
      Mat3 dm;
      for (int c = 0; c < 3; ++c) dm.col(c) = spec.vertices[t[c + 1]] - spec.vertices[t[0]];
      const double volume = dm.determinant() / 6;
      if (!(volume > 0)) return element + ": a tet has no positive volume";
      model.tet_vert.push_back(global);
      model.tet_volume.push_back(volume);
      model.tet_rest_inverse.push_back(dm.inverse());
      for (const int v : global) model.vert_mass[v] += spec.density * volume / 4;
    }
    model.ntet += static_cast<int>(spec.tets.size());
    // Surface: the faces of exactly one tet, wound outward ((a, c, b), (a, b, d), (a, d, c),
    // (b, c, d) for a tet (a, b, c, d) of positive volume).
    std::vector<std::pair<std::array<int, 3>, std::array<int, 3>>> faces;
    faces.reserve(4 * spec.tets.size());
    for (const auto& t : spec.tets) {
      const int a = t[0] + vert_adr, b = t[1] + vert_adr, c = t[2] + vert_adr, e = t[3] + vert_adr;
      for (const std::array<int, 3>& face :
           {std::array<int, 3>{a, c, b}, {a, b, e}, {a, e, c}, std::array<int, 3>{b, c, e}}) {
        std::array<int, 3> key = face;
        std::sort(key.begin(), key.end());
        faces.emplace_back(key, face);
      }
    }
    std::sort(faces.begin(), faces.end());
    model.deform_tri_adr.push_back(static_cast<int>(model.tri_vert.size()));
    for (size_t k = 0; k < faces.size();) {
      size_t next = k + 1;
      while (next < faces.size() && faces[next].first == faces[k].first) ++next;
      if (next - k > 2) return element + ": a triangle is shared by more than two tets";
      if (next - k == 1) model.tri_vert.push_back(faces[k].second);
      k = next;
    }
    model.deform_tri_num.push_back(static_cast<int>(model.tri_vert.size()) -
                                   model.deform_tri_adr.back());
    for (const int v : spec.pinned) model.vert_body[vert_adr + v] = 0;
    for (const auto& attachment : spec.attachments) {
      const int body = mj_name2id(m, mjOBJ_BODY, attachment.body.c_str());
      if (body < 0) return element + ": no body named '" + attachment.body + "' to attach to";
      if (d == nullptr) {
        d.reset(mj_makeData(m));
        mj_kinematics(m, d.get());
      }
      Mat3 rotation;
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) rotation(r, c) = d->xmat[9 * body + 3 * r + c];
      }
      const Vec3 origin(d->xpos[3 * body], d->xpos[3 * body + 1], d->xpos[3 * body + 2]);
      for (const int v : attachment.vertices) {
        model.vert_body[vert_adr + v] = body;
        model.vert_body_offset[vert_adr + v] = rotation.transpose() * (spec.vertices[v] - origin);
      }
    }
    for (const auto& activation : spec.activations) {
      if (!activation_names.insert(activation.name).second) {
        return element + ": activation '" + activation.name +
               "' has the name of an actuator or another activation";
      }
      model.activation_name.push_back(activation.name);
      model.activation_deform.push_back(d_index);
      model.activation_range.push_back({activation.lower, activation.upper});
      model.activation_tet_adr.push_back(static_cast<int>(model.activation_tet.size()));
      model.activation_tet_num.push_back(static_cast<int>(activation.tets.size()));
      for (const int t : activation.tets) model.activation_tet.push_back(tet_adr + t);
    }
  }
  AddActivationActuators(model);
  return "";
}

// Converts a compiled mjModel; `warnings` are MuJoCo's, from its compilation.
ModelImport Convert(const std::string& source, const mjModel* m, bool scene_sets_timestep,
                    std::vector<std::string> warnings,
                    const std::vector<DeformableSpec>& deformables) {
  auto model = std::make_shared<Model>();
  model->warnings = std::move(warnings);
  if (const std::string unsupported = FindUnsupportedFeature(m); !unsupported.empty()) {
    return {nullptr, source + ": " + unsupported};
  }
  if (scene_sets_timestep && !(m->opt.timestep > 0 && std::isfinite(m->opt.timestep))) {
    std::ostringstream value;
    value << m->opt.timestep;
    return {nullptr, source + ": option timestep " + value.str() +
                         " is not a positive number of seconds (time would stand still or run "
                         "backwards)"};
  }
  ListIgnoredFeatures(m, model->warnings);
  ConvertOptions(m, scene_sets_timestep, *model);
  ConvertBodies(m, *model);
  ConvertJointsAndDofs(m, *model);
  BuildSubsystems(m, *model);
  ConvertGeomsAndMeshes(m, *model);
  if (const std::string error = ConvertContactCompliance(m, *model); !error.empty()) {
    return {nullptr, source + ": " + error};
  }
  if (const std::string error = ConvertConstraintSprings(m, *model); !error.empty()) {
    return {nullptr, source + ": " + error};
  }
  if (const std::string error = ConvertSdfGeoms(m, *model); !error.empty()) {
    return {nullptr, source + ": " + error};
  }
  ConvertSites(m, *model);
  if (const std::string error = ConvertFoundations(m, *model); !error.empty()) {
    return {nullptr, source + ": " + error};
  }
  ConvertTendons(m, *model);
  ConvertActuators(m, *model);
  if (const std::string error = IndexTrees(m, *model); !error.empty()) {
    return {nullptr, source + ": " + error};
  }
  ConvertEqualities(m, *model);
  ConvertCollisionFilters(m, *model);
  ConvertKeyframes(m, *model);
  try {
    if (const std::string error = ConvertDeformables(m, deformables, *model); !error.empty()) {
      return {nullptr, source + ": " + error};
    }
  } catch (const MujocoError& e) {
    return {nullptr, source + ": MuJoCo error: " + e.what()};
  }
  return {std::move(model), ""};
}

// Compiles with MuJoCo under the guard: the model, or null with *error set. `source` names the
// scene in messages; `vfs` (may be null) holds the scene's files.
MjModelPtr CompileMj(const std::string& source, const std::string& load_path, const mjVFS* vfs,
                     std::string* error) {
  char message[1024] = "";
  MjModelPtr m;
  try {
    m.reset(mj_loadXML(load_path.c_str(), vfs, message, sizeof message));
  } catch (const MujocoError& e) {
    *error = source + ": MuJoCo error: " + e.what();
    return nullptr;
  }
  if (m == nullptr) {
    *error = LocatedMessage(source, message[0] != '\0' ? message : "MuJoCo could not load it");
  }
  return m;
}

// The scene's text and assets in a virtual file system; an error message, empty on success.
std::string FillFiles(const std::string& xml, const std::vector<ModelAsset>& assets,
                      const std::string& name, const std::string& main_file,
                      VirtualFileSystem* files) {
  if (xml.empty()) return name + ": the scene text is empty";
  try {
    if (std::string error = files->Add(main_file, xml); !error.empty()) {
      return name + ": scene file name: " + error;
    }
    for (const auto& asset : assets) {
      if (std::string error = files->Add(BaseName(asset.name), asset.bytes); !error.empty()) {
        return name + ": " + error;
      }
    }
  } catch (const MujocoError& e) {
    return name + ": MuJoCo error: " + e.what();
  }
  return "";
}

std::string MainFileName(const std::string& name) {
  return BaseName(name.empty() ? "model.xml" : name);
}

}  // namespace

void InstallMujocoHandlers() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    mju_user_error = ThrowOnMujocoError;
    mju_user_warning = CaptureMujocoWarning;
  });
}

ModelImport ImportModelFromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {nullptr, path + ": cannot open the file"};
  std::stringstream text;
  text << in.rdbuf();
  const std::string directory = DirName(path);
  const SceneTextCheck check = CheckSceneText(path, text.str(), &directory, {});
  if (!check.error.empty()) return {nullptr, check.error};
  std::vector<std::string> warnings;
  MujocoCompileGuard guard(&warnings);
  std::string error;
  const MjModelPtr m = CompileMj(path, path, nullptr, &error);
  if (m == nullptr) return {nullptr, error};
  std::map<std::string, std::string> files;
  std::vector<DeformableSpec> deformables;
  if (std::string e =
          ReadDeformableSpecs(m.get(), path, DiskLookup(directory, &files), &deformables);
      !e.empty()) {
    return {nullptr, e};
  }
  return Convert(path, m.get(), check.sets_timestep, std::move(warnings), deformables);
}

ModelImport ImportModelFromString(const std::string& xml, const std::vector<ModelAsset>& assets,
                                  const std::string& name) {
  std::vector<std::string> warnings;
  MujocoCompileGuard guard(&warnings);
  VirtualFileSystem files;
  const std::string main_file = MainFileName(name);
  if (std::string error = FillFiles(xml, assets, name, main_file, &files); !error.empty()) {
    return {nullptr, error};
  }
  const SceneTextCheck check = CheckSceneText(name, xml, nullptr, assets);
  if (!check.error.empty()) return {nullptr, check.error};
  std::string error;
  const MjModelPtr m = CompileMj(name, main_file, files.vfs.get(), &error);
  if (m == nullptr) return {nullptr, error};
  std::vector<DeformableSpec> deformables;
  if (std::string e = ReadDeformableSpecs(m.get(), name, AssetLookup(assets), &deformables);
      !e.empty()) {
    return {nullptr, e};
  }
  return Convert(name, m.get(), check.sets_timestep, std::move(warnings), deformables);
}

namespace {

// The compiled model as MJB bytes, or the error of saving it.
void SaveBinary(const std::string& source, const MjModelPtr& m, CompiledScene* out) {
  if (m == nullptr) return;
  try {
    const int size = mj_sizeModel(m.get());
    out->mjb.resize(static_cast<std::size_t>(size));
    mj_saveModel(m.get(), nullptr, out->mjb.data(), size);
  } catch (const MujocoError& e) {
    out->mjb.clear();
    out->error = source + ": MuJoCo error: " + e.what();
  }
}

// The scene's deformables, parsed here (the sandboxed half) and carried as bytes; on a parse
// error the scene fails (no MJB).
void SaveDeformables(const std::string& source, MjModelPtr& m, const DeformableFileLookup& files,
                     CompiledScene* out) {
  if (m == nullptr) return;
  std::vector<DeformableSpec> specs;
  out->error = ReadDeformableSpecs(m.get(), source, files, &specs);
  if (!out->error.empty()) {
    m.reset();
    return;
  }
  out->deformables = specs.empty() ? std::string() : SerializeDeformables(specs);
}

}  // namespace

CompiledScene CompileSceneText(const std::string& xml, const std::vector<ModelAsset>& assets,
                               const std::string& name) {
  CompiledScene out;
  MujocoCompileGuard guard(&out.warnings);
  VirtualFileSystem files;
  const std::string main_file = MainFileName(name);
  out.error = FillFiles(xml, assets, name, main_file, &files);
  if (!out.error.empty()) return out;
  const SceneTextCheck check = CheckSceneText(name, xml, nullptr, assets);
  out.error = check.error;
  if (!out.error.empty()) return out;
  out.sets_timestep = check.sets_timestep;
  MjModelPtr m = CompileMj(name, main_file, files.vfs.get(), &out.error);
  SaveDeformables(name, m, AssetLookup(assets), &out);
  SaveBinary(name, m, &out);
  return out;
}

CompiledScene CompileSceneFile(const std::string& path) {
  CompiledScene out;
  std::ifstream in(path);
  if (!in) {
    out.error = path + ": cannot open the file";
    return out;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string directory = DirName(path);
  const SceneTextCheck check = CheckSceneText(path, text.str(), &directory, {});
  out.error = check.error;
  if (!out.error.empty()) return out;
  out.sets_timestep = check.sets_timestep;
  MujocoCompileGuard guard(&out.warnings);
  MjModelPtr m = CompileMj(path, path, nullptr, &out.error);
  std::map<std::string, std::string> files;
  SaveDeformables(path, m, DiskLookup(directory, &files), &out);
  SaveBinary(path, m, &out);
  return out;
}

ModelImport ImportCompiledScene(const CompiledScene& scene, const std::string& source) {
  if (scene.mjb.empty()) return {nullptr, source + ": no compiled model"};
  std::vector<std::string> warnings;
  MujocoCompileGuard guard(&warnings);
  VirtualFileSystem files;
  MjModelPtr m;
  try {
    if (std::string error = files.Add("model.mjb", scene.mjb); !error.empty()) {
      return {nullptr, source + ": " + error};
    }
    m.reset(mj_loadModel("model.mjb", files.vfs.get()));
    // MuJoCo 2.2.2 loads some truncated buffers: the model must account for every byte.
    if (m != nullptr && static_cast<std::size_t>(mj_sizeModel(m.get())) != scene.mjb.size()) {
      return {nullptr, source + ": the compiled model is truncated or has trailing bytes"};
    }
  } catch (const MujocoError& e) {
    return {nullptr, source + ": the compiled model does not load: " + e.what()};
  }
  if (m == nullptr) return {nullptr, source + ": the compiled model does not load"};
  warnings.insert(warnings.begin(), scene.warnings.begin(), scene.warnings.end());
  std::vector<DeformableSpec> deformables;
  if (!scene.deformables.empty() && !DeserializeDeformables(scene.deformables, &deformables)) {
    return {nullptr, source + ": the compiled deformables are corrupt"};
  }
  return Convert(source, m.get(), scene.sets_timestep, std::move(warnings), deformables);
}

}  // namespace alsim
