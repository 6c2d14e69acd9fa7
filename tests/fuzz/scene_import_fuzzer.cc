// scene_import_fuzzer: MJCF/URDF text plus assets (scene_input.h) through the importer's two
// halves as the server runs them, CompileSceneText (MuJoCo's parser and compiler) and
// ImportCompiledScene (MJB -> alsim::Model), then a few steps of every model that imports.
//
// MuJoCo reads files missing from the assets from the disk; the input runs where no file can be
// opened for reading (file_sandbox.h), as the server's scene compiler runs.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "tests/fuzz/file_sandbox.h"
#include "tests/fuzz/scene_input.h"

namespace {

// Models larger than this import but are not stepped: a step of a few hundred bodies under ASan
// takes long enough to trip libFuzzer's timeout without being a bug.
constexpr int kMaxSteppedDofs = 200;
constexpr int kMaxSteppedGeoms = 200;
constexpr int kSteps = 3;

void Fail(const char* what) {
  std::fprintf(stderr, "scene_import_fuzzer: %s\n", what);
  std::abort();
}

// ALSIM_FUZZ_VERBOSE=1 prints what became of each input (to check seeds and reproducers).
const bool verbose = std::getenv("ALSIM_FUZZ_VERBOSE") != nullptr;

void ImportAndStep(std::string_view input) {
  const alsim::fuzz::SceneInput scene = alsim::fuzz::DecodeSceneInput(input);
  if (alsim::fuzz::KnownBug(scene)) {
    if (verbose) std::fprintf(stderr, "skipped: a known bug (scene_input.h)\n");
    return;
  }
  const alsim::CompiledScene compiled =
      alsim::CompileSceneText(scene.text, scene.assets, "scene.xml");
  if (compiled.error.empty() == compiled.mjb.empty()) {
    Fail("CompileSceneText must give either an MJB or an error");
  }
  if (!compiled.error.empty()) {
    if (verbose) std::fprintf(stderr, "compile error: %s\n", compiled.error.c_str());
    return;
  }
  const alsim::ModelImport imported = alsim::ImportCompiledScene(compiled, "scene.xml");
  if (!imported) {
    if (imported.error.empty()) Fail("a failed import must say why");
    if (verbose) std::fprintf(stderr, "import error: %s\n", imported.error.c_str());
    return;
  }
  const alsim::Model& model = *imported.model;
  alsim::Data data(model);
  if (verbose) {
    std::fprintf(stderr, "imported: nq %d nv %d nu %d ngeom %d\n", model.nq, model.nv, model.nu,
                 model.ngeom);
  }
  if (model.nv > kMaxSteppedDofs || model.ngeom > kMaxSteppedGeoms) return;
  for (int u = 0; u < model.nu; ++u) data.ctrl[u] = 0.5;
  alsim::StepOptions options;
  // Every solver in turn, chosen by the input so that a finding reproduces.
  options.solver.type = static_cast<alsim::SolverType>(input.size() % 4);
  options.solver.max_iterations = 20;
  for (int k = 0; k < kSteps; ++k) {
    const alsim::StepStatus status = alsim::Step(model, data, options);
    if (status == alsim::StepStatus::kInvalidOptions) Fail("Step refused valid options");
    if (status == alsim::StepStatus::kDiverged) {
      if (verbose) std::fprintf(stderr, "diverged at step %d\n", k);
      return;
    }
    for (const double q : data.qpos) {
      if (!std::isfinite(q)) Fail("Step returned kOk with a non-finite qpos");
    }
    for (const double v : data.qvel) {
      if (!std::isfinite(v)) Fail("Step returned kOk with a non-finite qvel");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::InstallMujocoHandlers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  alsim::fuzz::RunWithoutFileReads([input] { ImportAndStep(input); });
  return 0;
}
