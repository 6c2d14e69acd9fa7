// The hybrid solver's own knob (hybrid_solver.h).
#pragma once

namespace alsim {

struct HybridParameters {
  // An island that SubADMM has not converged after this many iterations (and that has not
  // stalled) is handed to CANAL, warm-started from SubADMM's impulses.
  int switch_after_iterations = 30;
};

}  // namespace alsim
