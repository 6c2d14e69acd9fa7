// The signed distance field of an ISO metric external thread: the bolt of the SubADMM/CANAL
// paper's bolt-nut assembly (Sec. VII-A; digest seed-004 section 8.1: an M48 bolt, its nut a
// triangle mesh). The paper's bolt is a neural SDF; this one is analytic, with an analytic
// gradient. The field of GeomType::kSdf geoms of kind SdfKind::kThread (engine/model/model.h;
// scene text alsim:sdf:GEOM, docs/engine.md); its pairs are in sdf_pairs.h. Pure geometry of
// math/ alone, so that the importer (engine/model/) may use it (tests/unit/engine_layers_test.py).
//
// The shape, in its own frame. Cylindrical coordinates (r, theta, z) about the local z axis,
// theta = atan2(y, x). The thread is a helical sweep of one planar profile: with b = P / (2 pi)
// (P the pitch) and h = +1 for a right-handed thread (-1 left-handed), the screw coordinate
//   u = z - h b theta   (mod P)
// is constant along the thread's helices (right-handed: turning counterclockwise seen from +z
// advances along +z), and the infinite thread is T = {r <= R(u)}, R the ISO 68-1 basic profile's
// radius, P-periodic and even in u. With r_maj = d / 2 (d the major diameter), H = sqrt(3)/2 P (the
// fundamental triangle's height), r_min = r_maj - 5H/8 = (d - 1.082532 P) / 2 (d1, the basic
// minor diameter) and w = |u| reduced to [0, P/2]:
//   R = r_maj                                 for w in [0, P/16]      (the crest flat, P/8 wide)
//   R = r_maj - (w - P/16) 2H/P               for w in [P/16, 3P/8]   (the flank, 30 deg off
//   radial) R = r_min                                 for w in [3P/8, P/2]    (the root flat, P/4
//   wide)
// The crest is centered at u = 0: at theta = 0 on z = 0, mod P. The root is the basic profile's
// flat at d1, not ISO 965's rounded root at d3 = d - 1.226869 P: the nut's internal thread shares
// the basic profile, so flanks and flats are the whole contact geometry and the profile is a
// polyline. The pitch diameter d2 = d - 0.649519 P falls where the thread is P/2 wide (w = P/4).
// The bolt is the threaded shank B = T ∩ {z0 <= z <= z1}, its ends flat caps.
//
// The field. q = (r, u) in the (r, u) half-plane; s(q) is the signed planar distance from q to the
// P-periodic profile curve r = R(u), negative where r < R(u). The periodic curve is symmetric about
// every crest and root center, so the nearest point to q is found on the half period w in [0, P/2]
// (three segments: crest, flank, root); no neighbouring period can be nearer. Then
//   phi_T(p) = s(r, u),   phi_S(p) = max(z0 - z, z - z1),   phi(p) = max(phi_T(p), phi_S(p)).
// s is the exact distance for the unrolled (straight) thread; for the helix it is the distance
// measured in the axial half-plane through p, and the lead angle alpha(r), tan alpha(r) = b / r,
// separates it from the Euclidean one. What phi is, with d_T and d_B the exact signed Euclidean
// distances to T and B (both proved below, both tested against a search over the true surface):
//   - the sign is exact: phi < 0 exactly inside B, 0 on its surface, > 0 outside;
//   - thread alone, |d_T| <= |phi_T|: the point (r*, theta, z + u* - u), at the same angle as p,
//     with q* = (r*, u*) the nearest profile point, lies on the surface at distance |s|;
//   - thread alone, |d_T| >= kappa |phi_T|, where
//       kappa = 1 / sqrt(1 + (b / (sigma rho))^2),  rho = sqrt(r r_min),
//       sigma = sin(g) / g,  g = asin(min(1, |phi_T| / (2 rho))):
//     a surface point w at (r_w, theta_w, z_w), Delta theta = theta - theta_w in (-pi, pi], is at
//       |p - w|^2 = (r - r_w)^2 + 4 r r_w sin^2(Delta theta / 2) + (z - z_w)^2;
//     the nearest one has |p - w| <= |phi_T|, so |Delta theta| / 2 <= g (r_w >= r_min) and
//     4 r r_w sin^2(Delta theta / 2) >= sigma^2 rho^2 Delta theta^2; by Cauchy-Schwarz
//       (z - z_w)^2 + sigma^2 rho^2 Delta theta^2 >= kappa^2 (z - z_w - h b Delta theta)^2,
//     and (r_w, u + z_w - z + h b Delta theta) is a point of the periodic profile curve, so
//     |p - w|^2 >= kappa^2 s^2. So |phi_T| overestimates the distance by a factor at most
//     1 / kappa ~ sec alpha(rho) near the thread: for the M48 at r >= r_min and |phi_T| <= P,
//     1 - kappa < 7.1e-4 (under 1 um at a millimetre);
//   - the bolt: inside (phi <= 0), phi <= d_B <= kappa phi (inside an intersection the depth is
//     the smaller of the two depths); outside, d_B >= kappa phi (the distance to an intersection is
//     at least each distance), and d_B <= phi where phi = phi_T and the surface point of the
//     second item lies between the caps. Near the rims of the caps, outside, phi underestimates
//     d_B as max does (by up to a factor sqrt(2) off a right-angled rim): a lower bound there.
// It is continuous, and Lipschitz with the local constant sec alpha(r): the gradient below has
// |grad phi_T| = sqrt(1 + g_u^2 tan^2 alpha(r)) in [1, sec alpha(r)] (1 exactly on the flats),
// below 1.0007 for r >= r_min of the M48; toward the axis, 21 mm deep in the M48, it grows like
// b / r. It is not rescaled to a unit gradient: Frank-Wolfe needs the
// gradient of the value it minimizes, and the value's error is already bounded above.
//
// The gradient, analytic. g = (g_r, g_u) is the unit planar direction of grad s (from the nearest
// profile point toward q outside, away from it inside; the flank's normal is (1/2, sqrt(3)/2)
// in (r, w) up to the sign of u), and with e_r, e_theta the radial and tangential units,
//   grad phi_T = g_r e_r + g_u grad u,   grad u = e_z - h (b / r) e_theta,
//   grad phi_S = -e_z (z0 - z >= z - z1) or +e_z,
// grad phi that of the larger term (the thread's on a tie). Where phi has a kink this returns a
// deterministic one-sided value:
//   - where two of the half period's segments are equally near, the first of crest, flank, root;
//   - on the profile (s = 0) the segment's outward normal; at a corner, the first segment's;
//   - at u = 0 (mod P, a crest center) and u = -P/2 (a root center) the fold w = |u| takes the
//     side u >= 0, respectively u < 0 (these are kinks only deep inside, under a crest between
//     the flanks, or far outside, between two crests);
//   - on the axis r = 0: theta = 0, e_r = +x, and the e_theta term is dropped: (g_r, 0, g_u);
//   - phi_T = phi_S: the thread's term.
// Frank-Wolfe minimizes this field over the nut's triangles (seed-004 8.1), so no closest-point
// query is provided.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "engine/collision/sdf_revolution.h"
#include "engine/math/types.h"

namespace alsim {

// A threaded shank along the local z axis by the field above. Lengths in meters; the defaults are
// an M48 coarse thread (ISO 261: d = 48 mm, P = 5 mm; d1 = 42.587 mm, d2 = 44.752 mm), right-
// handed, 100 mm long about the local origin.
struct SdfThread {
  double major_diameter = 0.048;
  double pitch = 0.005;
  // The flat ends: the shank spans z0 <= z <= z1.
  double z0 = -0.05;
  double z1 = 0.05;
  bool right_handed = true;

  // Finite, positive pitch and a major diameter above 1.082532 P (so that the minor diameter is
  // positive), finite z0 < z1. The queries below assume it.
  bool IsValid() const;

  // The basic minor diameter d1 = d - 5H/4 = d - 1.082532 P: the root flats.
  double MinorDiameter() const;

  // phi(p) of the header, p in the shape's frame: negative inside the shank, zero on its surface,
  // positive outside, within the header's factor kappa of the Euclidean distance.
  double Distance(const Vec3& p) const;
  // The same value, bit for bit, and its gradient (the header's comment: analytic, with the
  // documented one-sided values on kinks and on the axis).
  double DistanceAndGradient(const Vec3& p, Vec3* gradient) const;

  // The radius about the local origin of the smallest ball centered there that holds the solid
  // (Model::geom_rbound's convention): sqrt(r_maj^2 + max(z0^2, z1^2)), reached where a crest meets
  // the farther cap (every angle carries a crest at every P of height).
  double BoundingRadius() const;
  // The smallest local box that holds the solid: [-r_maj, r_maj]^2 x [z0, z1], reached by the
  // crests where the shank is at least a pitch long.
  SdfBox LocalBox() const;

  // Parameters in order: major_diameter, pitch, z0, z1, handedness (+1 right-handed, -1 left).
  static constexpr int kParameterCount = 5;
  static SdfThread FromParameters(const double* parameters);

  // A triangulation of the shank's surface, in its frame, appended to `vertices` and `faces`
  // (indices local to the appended vertices), watertight with outward normals. The thread is a
  // height field r = R(z - h b theta) over (theta, z): `segments` columns of vertices at equal
  // steps of theta, each from z0 to z1 with a vertex wherever the helix of a profile corner (the
  // crest and root flats' ends, u = +-P/16, +-3P/8) crosses it, and a rim vertex where such a helix
  // meets a cap between two columns; neighbouring columns are stitched in the order of u, so no
  // triangle crosses a corner, and each cap fans from its center. Every vertex lies on the surface
  // (Distance 0 at rounding); a face's points lie within the columns' chord sag r_maj (1 - cos(pi
  // / segments)) inside it. scenes/generate_thread_meshes.py writes the same mesh for the M48
  // (scenes/assets/m48_bolt.stl, 120 segments). segments >= 3.
  void Triangulate(int segments, std::vector<Vec3>* vertices,
                   std::vector<Eigen::Vector3i>* faces) const;
};

}  // namespace alsim
