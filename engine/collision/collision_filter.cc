#include "engine/collision/collision_filter.h"

namespace alsim {
namespace {

bool SameBodyPair(int a1, int a2, int b1, int b2) {
  return (a1 == b1 && a2 == b2) || (a1 == b2 && a2 == b1);
}

bool Excluded(const Model& m, int body1, int body2) {
  for (int i = 0; i < m.nexclude; ++i) {
    if (SameBodyPair(body1, body2, m.exclude_body1[i], m.exclude_body2[i])) return true;
  }
  return false;
}

bool HasExplicitPair(const Model& m, int body1, int body2) {
  for (int i = 0; i < m.npair; ++i) {
    if (SameBodyPair(body1, body2, m.geom_body[m.pair_geom1[i]], m.geom_body[m.pair_geom2[i]])) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool MayCollide(const Model& m, int g1, int g2) {
  const int body1 = m.geom_body[g1];
  const int body2 = m.geom_body[g2];
  const int weld1 = m.body_weld[body1];
  const int weld2 = m.body_weld[body2];
  if (weld1 == weld2) return false;
  if (!((m.geom_contype[g1] & m.geom_conaffinity[g2]) ||
        (m.geom_contype[g2] & m.geom_conaffinity[g1]))) {
    return false;
  }
  if (m.filter_parent && weld1 != 0 && weld2 != 0) {
    const int parent1 = m.body_weld[m.body_parent[weld1]];
    const int parent2 = m.body_weld[m.body_parent[weld2]];
    if (parent1 == weld2 || parent2 == weld1) return false;
  }
  return !Excluded(m, body1, body2) && !HasExplicitPair(m, body1, body2);
}

}  // namespace alsim
