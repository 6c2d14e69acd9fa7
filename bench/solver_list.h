// A bench's --solvers list, "name[:iterations],...": each item a solver's name (ParseSolverName)
// and, optionally, its iteration cap (SolverOptions::max_iterations) instead of the bench's.
// Shared by the issue-46 benches (single_step_bench, pouring_bench, bolt_nut_bench,
// dish_place_bench).
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "engine/solver/solver.h"

namespace alsim::bench {

// The non-empty items of a comma-separated list, in order.
inline std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

struct SolverRun {
  std::string item;  // as written, e.g. "pgs:100"
  std::string name;  // the solver's name, e.g. "pgs"
  SolverType type = SolverType::kSubAdmm;
  int iterations = 0;  // the item's cap, else the bench's default
};

// Parses `list` into *runs; false, with *bad the item, for an unknown name or a cap below 1.
inline bool ParseSolverRuns(const std::string& list, int default_iterations,
                            std::vector<SolverRun>* runs, std::string* bad) {
  runs->clear();
  for (const std::string& item : SplitCommas(list)) {
    SolverRun run;
    const size_t colon = item.find(':');
    run.item = item;
    run.name = item.substr(0, colon);
    run.iterations =
        colon == std::string::npos ? default_iterations : std::atoi(item.c_str() + colon + 1);
    if (!ParseSolverName(run.name.c_str(), &run.type) || run.iterations < 1) {
      *bad = item;
      return false;
    }
    runs->push_back(run);
  }
  return true;
}

}  // namespace alsim::bench
