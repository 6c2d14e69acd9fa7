// Small scenes shared by the fuzz targets and the corpus writer (make_corpus.cc).
#pragma once

namespace alsim::fuzz {

// The model of state_snapshot_fuzzer: a box with a free joint resting on the floor (contacts), a
// limited hinge arm held by a position servo (limit and soft rows), a ball joint, a slide joint,
// and a connect equality (equality rows), so that a snapshot taken after a few steps carries
// warm-start entries of every kind.
extern const char* const kSnapshotModelXml;

// Steps after which make_corpus saves snapshots of kSnapshotModelXml.
inline constexpr int kSnapshotSeedSteps[] = {0, 1, 5, 30};

}  // namespace alsim::fuzz
