#include "engine/collision/collision.h"

#include <algorithm>
#include <cstdint>

#include "engine/collision/broadphase.h"
#include "engine/collision/narrowphase.h"
#include "engine/core/parallel.h"

namespace alsim {
namespace {

// Below this much work (CollideShapesCost summed over the candidates) the narrowphase runs on the
// calling thread: spawning tasks costs more than it saves. With closed forms only, that is 128
// candidates: a scene of cheap capsule-plane pairs below it ran slower in parallel, one with
// general convex pairs faster (bench/collision_bench, serial vs parallel on 2 cores). A general
// convex pair counts kGeneralConvexPairCost closed forms, so a handful of them is enough
// (figures: BENCHMARKS.md, "Collision vs MuJoCo 2.2.2"; docs/benchmarks-history.md, "Pair costs
// decide").
constexpr int kParallelCost = 128;
// Candidates per task: up to 16, fewer for short lists, so that their few expensive pairs spread
// over both threads.
constexpr int kCandidatesPerTask = 16;
constexpr int kMinTasks = 8;

// True when some geom's pairs get kMaxContactsPerSdfPair slots; else every candidate has
// kMaxContactsPerPair and candidate_contact_adr is not filled.
bool HasManyContactGeoms(const Model& m) {
  return std::any_of(m.geom_many_contacts.begin(), m.geom_many_contacts.end(),
                     [](std::uint8_t many) { return many != 0; });
}

int SlotsOf(const Data& d, int k, bool many) {
  return many ? d.candidate_contact_adr[k] : k * kMaxContactsPerPair;
}

// Candidate k's contacts, complete (geoms, friction, frame) in its own slots.
void CollideCandidate(const Model& m, Data& d, int k, bool many) {
  const CollisionCandidate& candidate = d.collision_candidates[k];
  Contact* found = d.candidate_contacts.data() + SlotsOf(d, k, many);
  const int count = CollideShapes(ShapeOfGeom(m, d, candidate.geom1),
                                  ShapeOfGeom(m, d, candidate.geom2), candidate.margin, found);
  d.candidate_contact_count[k] = count;
  if (count == 0) return;
  const ContactParameters parameters =
      ContactParametersOfPair(m, candidate.geom1, candidate.geom2, candidate.explicit_pair);
  for (int i = 0; i < count; ++i) {
    found[i].geom1 = candidate.geom1;
    found[i].geom2 = candidate.geom2;
    found[i].friction = parameters.friction;
    found[i].friction_torsion = parameters.friction_torsion;
    found[i].friction_rolling = parameters.friction_rolling;
    found[i].dim = parameters.dim;
    found[i].frame = ContactFrame(found[i].normal);
    found[i].explicit_pair = candidate.explicit_pair;
  }
}

void Narrowphase(const Model& m, Data& d, bool many) {
  const int n = static_cast<int>(d.collision_candidates.size());
  if (static_cast<int>(d.candidate_contact_count.size()) < n) d.candidate_contact_count.resize(n);
  // Each candidate's slots: kMaxContactsPerSdfPair for an SDF geom or a concave mesh.
  int slots = n * kMaxContactsPerPair;
  if (many) {
    d.candidate_contact_adr.resize(n + 1);
    slots = 0;
    for (int k = 0; k < n; ++k) {
      const CollisionCandidate& candidate = d.collision_candidates[k];
      d.candidate_contact_adr[k] = slots;
      slots += m.geom_many_contacts[candidate.geom1] || m.geom_many_contacts[candidate.geom2]
                   ? kMaxContactsPerSdfPair
                   : kMaxContactsPerPair;
    }
    d.candidate_contact_adr[n] = slots;
  }
  if (static_cast<int>(d.candidate_contacts.size()) < slots) d.candidate_contacts.resize(slots);
  int cost = 0;
  for (int k = 0; k < n && cost < kParallelCost; ++k) {
    const CollisionCandidate& candidate = d.collision_candidates[k];
    cost += CollideShapesCost(m.geom_type[candidate.geom1], m.geom_type[candidate.geom2]);
  }
  if (cost < kParallelCost) {
    for (int k = 0; k < n; ++k) CollideCandidate(m, d, k, many);
    return;
  }
  // Each candidate writes only its own slots, so the tasks share nothing.
  const int grain = std::max(1, std::min(kCandidatesPerTask, n / kMinTasks));
  ParallelFor(0, n, grain, [&](int k) { CollideCandidate(m, d, k, many); });
}

// Gathers the candidates' contacts in candidate order, which makes the output deterministic.
void GatherContacts(Data& d, bool many) {
  d.contact.clear();
  const int n = static_cast<int>(d.collision_candidates.size());
  for (int k = 0; k < n; ++k) {
    const Contact* found = d.candidate_contacts.data() + SlotsOf(d, k, many);
    d.contact.insert(d.contact.end(), found, found + d.candidate_contact_count[k]);
  }
}

}  // namespace

double ContactFriction(const Model& m, int geom1, int geom2, int explicit_pair) {
  return ContactParametersOfPair(m, geom1, geom2, explicit_pair).friction;
}

namespace {

// condim 1 is MuJoCo's frictionless contact: alsim keeps its 3 rows with friction 0, where
// every cone projection leaves the normal row alone (the tangent rows carry no impulse).
int ContactDimOfCondim(int condim) { return condim >= 6 ? 6 : condim >= 4 ? 4 : 3; }

}  // namespace

ContactParameters ContactParametersOfPair(const Model& m, int geom1, int geom2, int explicit_pair) {
  ContactParameters p;
  int condim = 3;
  Vec3 friction;  // (sliding, torsional, rolling)
  if (explicit_pair >= 0) {
    condim = m.pair_condim[explicit_pair];
    friction = Vec3(m.pair_friction[explicit_pair], m.pair_friction_torsion[explicit_pair],
                    m.pair_friction_rolling[explicit_pair]);
  } else if (m.geom_priority[geom1] != m.geom_priority[geom2]) {
    const int g = m.geom_priority[geom1] > m.geom_priority[geom2] ? geom1 : geom2;
    condim = m.geom_condim[g];
    friction = m.geom_friction[g];
  } else {
    condim = std::max(m.geom_condim[geom1], m.geom_condim[geom2]);
    friction = m.geom_friction[geom1].cwiseMax(m.geom_friction[geom2]);
  }
  p.dim = ContactDimOfCondim(condim);
  p.friction = condim == 1 ? 0.0 : friction[0];
  if (p.dim >= 4) p.friction_torsion = friction[1];
  if (p.dim >= 6) p.friction_rolling = friction[2];
  return p;
}

Mat3 ContactFrame(const Vec3& normal) {
  // The world axis least aligned with the normal gives a well-conditioned first tangent.
  int least = 0;
  normal.cwiseAbs().minCoeff(&least);
  const Vec3 tangent1 = normal.cross(Vec3::Unit(least)).normalized();
  Mat3 frame;
  frame << normal, tangent1, normal.cross(tangent1);
  return frame;
}

void SpeculativeMarginsOfBodies(const Model& m, Data& d, double horizon, double slop,
                                int body_begin, int body_end) {
  for (int g = m.body_geom_adr[body_begin]; g < m.body_geom_adr[body_end]; ++g) {
    const int body = m.geom_body[g];
    if (m.body_subsystem[body] < 0) {
      d.geom_speculative_margin[g] = 0;  // static geoms do not move; the other side covers it
      continue;
    }
    const Vec6& velocity = d.cvel[body];
    const Vec3 omega = velocity.head<3>();
    const Vec3 center_velocity =
        velocity.tail<3>() + omega.cross(d.geom_xpos[g] - SpatialReferencePoint(m, d, body));
    d.geom_speculative_margin[g] =
        horizon * (center_velocity.norm() + omega.norm() * m.geom_rbound[g]) + slop;
  }
}

void Collision(const Model& m, Data& d, bool boxes_ready) {
  Broadphase(m, d, boxes_ready);
  const bool many = HasManyContactGeoms(m);
  Narrowphase(m, d, many);
  GatherContacts(d, many);
}

}  // namespace alsim
