// A console reporter that also prints alsim/MuJoCo time ratios: a benchmark named
// "<Stage>_alsim/<scene>" is paired with "<Stage>_mujoco/<scene>" from the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace alsim::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool aggregate = run.run_type == Run::RT_Aggregate;
      if (aggregate && run.aggregate_name != "median") continue;
      if (!aggregate && run.repetitions > 1) continue;
      times_[run.run_name.str()] = run.GetAdjustedRealTime();
    }
  }

  // Pairs "X_alsim/scene" with "X_mujoco/scene".
  void PrintRatios() const {
    std::printf("\n%-40s %12s %12s %8s\n", "stage / scene", "alsim", "MuJoCo", "ratio");
    for (const auto& [name, alsim_time] : times_) {
      const size_t at = name.find("_alsim");
      if (at == std::string::npos) continue;
      std::string peer = name;
      peer.replace(at, 6, "_mujoco");
      const auto it = times_.find(peer);
      if (it == times_.end()) continue;
      std::string label = name;
      label.erase(at, 6);
      std::printf("%-40s %12.3g %12.3g %8.2f\n", label.c_str(), alsim_time, it->second,
                  alsim_time / it->second);
    }
  }

 private:
  std::map<std::string, double> times_;
};

// main() of a side-by-side benchmark: parses the flags, registers, runs, prints the ratios.
inline int RunWithRatios(int argc, char** argv, void (*register_benchmarks)()) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}

}  // namespace alsim::bench
