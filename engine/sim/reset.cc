#include "engine/sim/reset.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/dynamics/kinematics.h"

namespace alsim {

void ResetData(const Model& m, Data* d) {
  SolverHandle solver = std::move(d->solver);
  *d = Data(m);
  d->solver = std::move(solver);
}

bool ResetDataKeyframe(const Model& m, Data* d, int key) {
  if (key < -1 || key >= m.nkey) return false;
  ResetData(m, d);
  if (key < 0) return true;
  const auto k = static_cast<std::size_t>(key);
  const auto copy = [k](const std::vector<double>& from, std::vector<double>& to) {
    std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(k * to.size()), to.size(), to.begin());
  };
  d->time = m.key_time[k];
  copy(m.key_qpos, d->qpos);
  copy(m.key_qvel, d->qvel);
  copy(m.key_ctrl, d->ctrl);
  return true;
}

bool ApplyResetNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d) {
  if (noise > 0) {
    std::uniform_real_distribution<double> uniform(-noise, noise);
    for (int j = 0; j < m.njnt; ++j) {
      if (m.jnt_type[j] == JointType::kHinge || m.jnt_type[j] == JointType::kSlide) {
        d->qpos[m.jnt_qpos_adr[j]] += uniform(rng);
      }
    }
    for (int i = 0; i < m.nv; ++i) d->qvel[i] += uniform(rng);
  }
  Kinematics(m, *d);
  PlaceAttachedVertices(m, d);
  for (const double v : d->qpos) {
    if (!std::isfinite(v)) return false;
  }
  for (const double v : d->qvel) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

void PlaceAttachedVertices(const Model& m, Data* d) {
  for (int v = 0; v < m.nvert; ++v) {
    const int body = m.vert_body[v];
    if (body <= 0) continue;
    d->vert_xpos[v] = d->xpos[body] + d->xmat[body] * m.vert_body_offset[v];
    d->vert_xvel[v].setZero();
  }
}

bool ResetWithNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d) {
  ResetData(m, d);
  return ApplyResetNoise(m, noise, rng, d);
}

}  // namespace alsim
