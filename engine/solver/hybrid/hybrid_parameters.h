// The hybrid solver's own knob (hybrid_solver.h).
#pragma once

namespace alsim {

struct HybridParameters {
  // An island that SubADMM has not converged after this many iterations (and that has not
  // stalled) is handed to CANAL, warm-started from SubADMM's impulses. Of the values measured on
  // the humanoids and the quadrupeds (BENCHMARKS.md, "The hybrid"), the largest hands over the
  // fewest islands and costs the least; none beat SubADMM alone.
  int switch_after_iterations = 50;
};

}  // namespace alsim
