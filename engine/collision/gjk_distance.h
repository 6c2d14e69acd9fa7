// Distance between two convex sets given by their support mappings: GJK (Gilbert, Johnson and
// Keerthi, 1988) on the Minkowski difference A - B, whose point closest to the origin is
// point_a - point_b for the closest points of A and B.
//
// Each iteration asks for the support point w of A - B against the current closest point v and
// replaces the simplex (at most a tetrahedron of such points) by the smallest face of
// simplex + {w} that holds its closest point to the origin (Voronoi-region tests, the barycentric
// form of Johnson's distance subalgorithm). It stops when
//   - the lower bound v.w/|v| is within kGjkRelativeTolerance * |v| of the upper bound |v|,
//   - w is already in the simplex or |v| stops decreasing (polytopes: the answer is exact), or
//   - after kGjkMaxIterations (curved sets converge linearly; the answer is then an upper bound).
// Sets closer than kGjkTouchTolerance times the size of A - B, or whose difference contains the
// origin, count as touching. Deterministic, allocation-free.
#pragma once

#include <limits>

#include "engine/math/types.h"

namespace alsim {

// A convex set through its support mapping: support(set, dir) is a point of the set farthest
// along dir (dir is any nonzero vector).
struct SupportMapping {
  Vec3 (*support)(const void* set, const Vec3& dir);
  const void* set;
  Vec3 center;  // any point of the set; starts the search
};

inline constexpr int kGjkMaxIterations = 64;
inline constexpr double kGjkRelativeTolerance = 1e-12;
// For callers that refine GJK's normal and distance afterwards (convex_pairs.cc).
inline constexpr double kGjkRefinedTolerance = 1e-6;
inline constexpr double kGjkTouchTolerance = 1e-12;

struct GjkDistanceResult {
  bool separated = false;  // false: the sets intersect or touch
  // The distance was found to exceed the caller's stop_beyond: `distance` is then a lower bound
  // above it, `direction` the unit direction from A toward B that proves it (the sets are at
  // least `distance` apart along it), and there are no witnesses.
  bool beyond = false;
  Vec3 direction = Vec3::Zero();
  double distance = 0;          // |point_b - point_a| when separated
  Vec3 point_a = Vec3::Zero();  // closest points (witnesses) of A and B
  Vec3 point_b = Vec3::Zero();
  int iterations = 0;
};

// relative_tolerance replaces kGjkRelativeTolerance for callers that refine the answer anyway.
// With a finite stop_beyond, the search stops as soon as its lower bound on the distance exceeds
// it (result.beyond): a caller that only needs pairs closer than a margin is spared the slow
// convergence on curved sets that are far apart. stop_beyond = 0 stops at the first separating
// direction.
GjkDistanceResult GjkDistance(const SupportMapping& a, const SupportMapping& b,
                              double relative_tolerance = kGjkRelativeTolerance,
                              double stop_beyond = std::numeric_limits<double>::infinity());

}  // namespace alsim
