// state_snapshot_fuzzer: RestoreStateSnapshot on a fixed small model (fuzz_models.h), and one Step
// from every snapshot it accepts. A restore either refuses with a reason and leaves the Data as it
// was, or accepts a state that steps to a finite state or reports divergence; nothing crashes.
//
// Input: the snapshot's bytes. When its last 8 bytes (the checksum) are zero, the real checksum is
// filled in first (snapshot_checksum.h), so that mutations reach the checks behind it. The seeds
// (make_corpus) are real snapshots taken after a few steps, with their checksum and with it zeroed.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "tests/fuzz/fuzz_models.h"
#include "tests/fuzz/snapshot_checksum.h"

namespace {

void Fail(const std::string& what) {
  std::fprintf(stderr, "state_snapshot_fuzzer: %s\n", what.c_str());
  std::abort();
}

const alsim::Model& SnapshotModel() {
  static const std::shared_ptr<const alsim::Model> model = [] {
    const alsim::ModelImport imported =
        alsim::ImportModelFromString(alsim::fuzz::kSnapshotModelXml);
    if (!imported) Fail("the snapshot model does not import: " + imported.error);
    return imported.model;
  }();
  return *model;
}

bool AllFinite(const std::vector<double>& values) {
  for (const double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::InstallMujocoHandlers();
  SnapshotModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  alsim::fuzz::FillZeroChecksum(&bytes);

  const alsim::Model& model = SnapshotModel();
  alsim::Data state(model);
  const std::string before = alsim::SaveStateSnapshot(model, state);
  std::string error;
  if (!alsim::RestoreStateSnapshot(model, bytes, state, &error)) {
    if (error.empty()) Fail("a refused snapshot must say why");
    if (alsim::SaveStateSnapshot(model, state) != before)
      Fail("a refused snapshot changed the Data");
    return 0;
  }
  if (!std::isfinite(state.time) || !AllFinite(state.qpos) || !AllFinite(state.qvel) ||
      !AllFinite(state.ctrl)) {
    Fail("an accepted snapshot has a non-finite state");
  }
  // What was restored saves back to the same bytes, in the current format; an older version's
  // snapshot saves in the current one, which restores to the same state and saves to itself.
  const std::string saved = alsim::SaveStateSnapshot(model, state);
  std::uint32_t version = 0;
  if (bytes.size() >= 12) std::memcpy(&version, bytes.data() + 8, sizeof(version));
  if (version == alsim::kStateSnapshotVersion) {
    if (saved != bytes) Fail("restore then save changed the bytes");
  } else {
    alsim::Data again(model);
    if (!alsim::RestoreStateSnapshot(model, saved, again, &error)) {
      Fail("an older snapshot saved in the current format is refused");
    }
    if (alsim::SaveStateSnapshot(model, again) != saved || again.qpos != state.qpos ||
        again.qvel != state.qvel || again.time != state.time) {
      Fail("an older snapshot does not survive a save in the current format");
    }
  }

  alsim::StepOptions options;
  options.solver.max_iterations = 50;
  const alsim::StepStatus status = alsim::Step(model, state, options);
  if (status == alsim::StepStatus::kInvalidOptions) Fail("Step refused valid options");
  if (status == alsim::StepStatus::kOk &&
      (!std::isfinite(state.time) || !AllFinite(state.qpos) || !AllFinite(state.qvel))) {
    Fail("Step returned kOk with a non-finite state");
  }
  return 0;
}
