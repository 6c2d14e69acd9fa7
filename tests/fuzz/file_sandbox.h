// Keeps MuJoCo's compiler off the disk inside a fuzz target.
//
// MuJoCo reads a file that is not among a scene's assets from the disk (an <include>, a mesh), so a
// fuzzed scene could name /dev/zero or /etc/passwd. alsim-server compiles client scenes in a
// separate process that may open no file at all (server/sandbox.h); a fuzz target compiles in its
// own process instead, so it runs each input on a worker thread under a seccomp filter that makes
// opening a file for reading fail with EACCES, as a missing file fails. Opening for writing stays
// allowed, so that libFuzzer can still write its crash artifacts from that thread.
//
// The filter is the worker thread's alone: libFuzzer's own thread reads the seed corpus one file at
// a time between inputs, after the first input has run, so it must stay unfiltered.
#pragma once

#include <functional>

namespace alsim::fuzz {

// Runs `fn` on the sandboxed worker thread (started and filtered on the first call) and waits for
// it. Aborts when the kernel refuses the filter. ALSIM_FUZZ_NO_FILE_SANDBOX=1 leaves the filter
// out, to tell whether a finding depends on it (never when fuzzing: MuJoCo would read the disk).
void RunWithoutFileReads(const std::function<void()>& fn);

}  // namespace alsim::fuzz
