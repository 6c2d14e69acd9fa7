// A solver's figure of the last step by name (SolverStatistics::figures), for tests.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "engine/data/data.h"

namespace alsim::testing {

// The value of the last step's figure `name`; a test failure and 0 when the solver gave none.
inline double Figure(const Data& d, const std::string& name) {
  const SolverStatistics& s = d.solver_statistics;
  for (int k = 0; k < s.num_figures; ++k) {
    if (name == s.figures[k].name) return s.figures[k].value;
  }
  ADD_FAILURE() << "no figure " << name;
  return 0;
}

}  // namespace alsim::testing
