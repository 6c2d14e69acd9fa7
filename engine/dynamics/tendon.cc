#include "engine/dynamics/tendon.h"

namespace alsim {

void TendonKinematics(const Model& m, Data& d) {
  for (int t = 0; t < m.ntendon; ++t) {
    d.ten_length[t] = TendonLength(m, d, t);
    d.ten_velocity[t] = TendonVelocity(m, d, t);
  }
}

}  // namespace alsim
