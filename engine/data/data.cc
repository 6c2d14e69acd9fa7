#include "engine/data/data.h"

namespace alsim {
namespace {

// The highest-numbered dof on the path from `body` to the world: the body's own last dof, else
// its nearest moving ancestor's. Bodies come after their parents, so one forward pass suffices.
std::vector<int> LastDofOnPath(const Model& m) {
  std::vector<int> last(m.nbody, -1);
  for (int b = 1; b < m.nbody; ++b) {
    last[b] =
        m.body_dof_num[b] > 0 ? m.body_dof_adr[b] + m.body_dof_num[b] - 1 : last[m.body_parent[b]];
  }
  return last;
}

bool HasSliderCrank(const Model& m) {
  for (const auto transmission : m.actuator_transmission) {
    if (transmission == ActuatorTransmission::kSliderCrank) return true;
  }
  return false;
}

// Geoms that can collide with something: a nonzero contype or conaffinity.
bool Collidable(const Model& m, int g) {
  return m.geom_contype[g] != 0 || m.geom_conaffinity[g] != 0;
}

}  // namespace

Data::Data(const Model& m)
    : mass_layout(TreeSparseLayout::FromParents(m.dof_parent)),
      body_last_dof(LastDofOnPath(m)),
      qpos(m.qpos0),
      qvel(m.nv, 0.0),
      ctrl(m.nu, 0.0),
      xfrc_applied(m.nbody, Vec6::Zero()),
      vert_xpos(m.vert_pos0),
      vert_xvel(m.nvert, Vec3::Zero()),
      xpos(m.nbody, Vec3::Zero()),
      xquat(m.nbody, QuatIdentity()),
      xmat(m.nbody, Mat3::Identity()),
      xipos(m.nbody, Vec3::Zero()),
      ximat(m.nbody, Mat3::Identity()),
      xanchor(m.njnt, Vec3::Zero()),
      xaxis(m.njnt, Vec3::Zero()),
      cdof(m.nv, Vec6::Zero()),
      cinert(m.nbody),
      geom_xpos(m.ngeom, Vec3::Zero()),
      geom_xmat(m.ngeom, Mat3::Identity()),
      cvel(m.nbody, Vec6::Zero()),
      cdof_dot(m.nv, Vec6::Zero()),
      crb(m.nbody),
      M(mass_layout.nnz, 0.0),
      qLD(mass_layout.nnz, 0.0),
      qfrc_bias(m.nv, 0.0),
      cacc(m.nbody, Vec6::Zero()),
      cfrc(m.nbody, Vec6::Zero()),
      ten_length(m.ntendon, 0.0),
      ten_velocity(m.ntendon, 0.0),
      qfrc_passive(m.nv, 0.0),
      cfrc_applied(m.nbody, Vec6::Zero()),
      qfrc_applied(m.nv, 0.0),
      actuator_length(m.nu, 0.0),
      actuator_force(m.nu, 0.0),
      qfrc_actuator(m.nv, 0.0),
      qH(mass_layout.nnz, 0.0),
      qacc(m.nv, 0.0),
      qvel_start(m.nv, 0.0),
      qA(mass_layout.nnz, 0.0),
      qA_factor(mass_layout.nnz, 0.0),
      v_free(m.nv, 0.0),
      solver_rhs(m.nv, 0.0),
      v_hat(m.nv, 0.0),
      v_position(m.nv, 0.0) {
  geom_speculative_margin.assign(m.ngeom, 0.0);
  geom_aabb_lo.assign(m.ngeom, Vec3::Zero());
  geom_aabb_hi.assign(m.ngeom, Vec3::Zero());
  for (int g = 0; g < m.ngeom; ++g) {
    if (!Collidable(m, g)) continue;
    (m.geom_type[g] == GeomType::kPlane ? plane_geoms : sweep_order).push_back(g);
  }
  geom_in_sweep.assign(m.ngeom, 0);
  for (const int g : sweep_order) geom_in_sweep[g] = 1;
  sweep_boxes.resize(sweep_order.size());
  collision_candidates.reserve(4 * static_cast<size_t>(m.ngeom));
  candidate_contact_count.reserve(collision_candidates.capacity());
  candidate_contact_adr.reserve(collision_candidates.capacity() + 1);
  // Room for 4 pairs of kMaxContactsPerSdfPair slots per SDF geom or concave mesh, so that a pile
  // of dishes does not grow these in a step.
  size_t many = 0;
  for (int g = 0; g < m.ngeom; ++g) many += m.geom_many_contacts[g] ? 1 : 0;
  const size_t sdf_slots = 4 * many * kMaxContactsPerSdfPair;
  candidate_contacts.reserve(collision_candidates.capacity() * kMaxContactsPerPair + sdf_slots);
  contact.reserve(4 * static_cast<size_t>(m.ngeom) + sdf_slots);
  // Room for as many constraints as that many contacts plus every limit and servo, so that
  // ordinary scenes never grow these during a step. A tendon's limit and servo rows have a block
  // per joint.
  const size_t max_constraints = contact.capacity() + 2 * static_cast<size_t>(m.njnt + m.ntendon) +
                                 m.nu + m.foundation_site.size();
  constraints.constraints.reserve(max_constraints);
  constraints.blocks.reserve(2 * max_constraints + 4 * static_cast<size_t>(m.nwrap));
  constraints.bias.reserve(3 * max_constraints);
  constraints.lambda.reserve(3 * max_constraints);
  constraints.correction.reserve(3 * max_constraints);
  constraints.regularization.reserve(3 * max_constraints);
  constraints.split_row.reserve(3 * max_constraints);
  warm_start.key.reserve(max_constraints);
  warm_start.position.reserve(max_constraints);
  warm_start.impulse.reserve(max_constraints);
  warm_start.angular_impulse.reserve(max_constraints);
  warm_start.delassus_trace.reserve(max_constraints);
  warm_start.delassus_age.reserve(max_constraints);
  islands.constraints.reserve(max_constraints);
  islands.subsystem_island.reserve(m.nsubsystem);
  islands.parent.reserve(m.nsubsystem + 1);
  islands.subsystem_adr.reserve(m.nsubsystem + 1);
  islands.subsystems.reserve(m.nsubsystem);
  islands.constraint_adr.reserve(m.nsubsystem + 1);
  islands.split.reserve(m.nsubsystem);
  if (HasSliderCrank(m)) {
    for (auto* jac : {&crank_jacp, &slider_jacp, &slider_jacr, &unused_jacr}) {
      jac->setZero(3, m.nv);
    }
    transmission_moment.assign(m.nv, 0.0);
  }
}

Data::~Data() = default;
Data::Data(Data&&) noexcept = default;
Data& Data::operator=(Data&&) noexcept = default;

}  // namespace alsim
