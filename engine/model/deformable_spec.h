// Tetrahedral deformables as a scene declares them (issue 48; Macklin et al., seed 002): MJCF
// 2.2.2 has none, so the scene names a companion XML file among its assets in custom text MuJoCo
// ignores,
//   <custom><text name="alsim:deformables" data="soft.xml"/></custom>
// and that file lists each deformable, its mesh and its material:
//   <deformables>
//     <deformable name="tomato" node="tomato.node" ele="tomato.ele" material="neohookean"
//                 young="1e5" poisson="0.45" density="1000" friction="0.75" thickness="0.001"
//                 rgba="0.8 0.1 0.1 1" pos="0 0 0.1" scale="1">
//       <pin vertices="0 1 2"/>                       <!-- fixed in the world -->
//       <attach body="finger" vertices="3 4"/>        <!-- carried by a body -->
//       <activation name="inflate" tets="0 1" range="0 1"/>  <!-- a control: rest shape x (1 + a)
//       -->
//     </deformable>
//   </deformables>
// The mesh is TetGen's .node and .ele files (among the scene's assets; first index 0 or 1, as
// TetGen numbers; 4-node tets; attributes and boundary markers ignored), or inline:
//   <tetmesh vertices="x y z ..." tets="a b c d ..."/>   (0-based)
// Attributes and defaults: material linear | corotated | neohookean (default corotated: 6 rows a
// tet against the Neo-Hookean's 9 and their 9 x 9 projection, engine/deformable/tet_material.h);
// young (Pa, > 0) and density (kg/m^3, > 0) required; poisson in [0, 0.5) (default 0.3); friction
// >= 0 (default 0.5); thickness >= 0, m (default 0); rgba in [0, 1] (default 0.8 0.5 0.3 1); pos
// (m) and scale (> 0) map the mesh's coordinates to the world's: x = pos + scale x_mesh.
//
// Every error names the file and line: unknown elements and attributes, bad numbers (NaN, inf),
// out-of-range values, vertex or tet indices out of range, a degenerate or inverted tet (its
// signed volume (X1 - X0) . ((X2 - X0) x (X3 - X0)) / 6 must be positive: TetGen's orientation),
// a vertex no tet uses, duplicate names, sizes above the caps below. Body names are checked
// where the model is built (the scene's bodies are known there).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/math/types.h"

namespace alsim {

enum class DeformableMaterial : std::uint8_t { kLinear = 0, kCorotated = 1, kNeoHookean = 2 };

struct DeformableSpec {
  struct Attachment {
    std::string body;
    std::vector<int> vertices;
  };
  struct Activation {
    std::string name;
    std::vector<int> tets;
    double lower = 0, upper = 1;  // the control's range
  };

  std::string name;
  DeformableMaterial material = DeformableMaterial::kCorotated;  // [OURS] (above)
  double young = 0;                                              // Young's modulus Y, Pa
  double poisson = 0.3;                                          // nu
  double density = 0;                                            // rho, kg/m^3
  double friction = 0.5;
  double thickness = 0;  // m, kept between its surface and what it touches
  std::array<float, 4> rgba{0.8f, 0.5f, 0.3f, 1.0f};
  std::vector<Vec3> vertices;            // rest positions in the world, m
  std::vector<std::array<int, 4>> tets;  // vertex indices, positive volume
  std::vector<int> pinned;               // vertices fixed in the world
  std::vector<Attachment> attachments;
  std::vector<Activation> activations;
};

// The most a scene may declare (all deformables together).
inline constexpr int kMaxDeformableVertices = 1 << 18;
inline constexpr int kMaxDeformableTets = 1 << 20;
inline constexpr int kMaxDeformables = 1024;

// The bytes of the scene's file `name` (matched without its directory, as MuJoCo's VFS does), or
// null when there is none.
using DeformableFileLookup = std::function<const std::string*(const std::string& name)>;

// Parses the companion file `name` (its text) into `out`; "" on success, else the error with
// "file:line: " before it.
std::string ParseDeformables(const std::string& text, const std::string& name,
                             const DeformableFileLookup& files, std::vector<DeformableSpec>* out);

// A byte string that carries parsed deformables across a process boundary (the sandboxed scene
// compiler) and back; Deserialize refuses truncated or inconsistent bytes (false, out cleared).
std::string SerializeDeformables(const std::vector<DeformableSpec>& specs);
bool DeserializeDeformables(const std::string& bytes, std::vector<DeformableSpec>* out);

}  // namespace alsim
