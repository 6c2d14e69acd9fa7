#include "tests/fuzz/file_sandbox.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace alsim::fuzz {
namespace {

#if !defined(__x86_64__)
#error "the fuzz targets' file sandbox supports x86_64 only"
#endif

// open(path, flags) and openat(dirfd, path, flags) fail with EACCES unless the flags ask for
// writing or creating; openat2 (whose flags are behind a pointer) always fails. The calling thread
// alone is filtered, and the threads it starts afterwards (TBB workers).
void ForbidReadingFiles() {
  constexpr std::uint32_t kWriting = O_WRONLY | O_RDWR | O_CREAT;
  constexpr std::uint32_t kRefuse = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
  auto argument = [](int k) {
    return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * k);  // low half
  };
  const std::vector<sock_filter> program = {
      // 0: another architecture's calling convention: allowed (nothing here uses one).
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      // 3
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 4, 0),     // -> 9
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 5, 0),   // -> 11
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 1, 0),  // -> 8
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      // 8
      BPF_STMT(BPF_RET | BPF_K, kRefuse),
      // 9: open's flags
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, argument(1)),
      BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),  // -> 12
      // 11: openat's flags
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, argument(2)),
      // 12
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kWriting, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, kRefuse),
  };
  sock_fprog filter{};
  filter.len = static_cast<unsigned short>(program.size());
  filter.filter = const_cast<sock_filter*>(program.data());
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
    std::fprintf(stderr, "fuzz: cannot install the seccomp filter: %s\n", std::strerror(errno));
    std::abort();
  }
}

// Sanitizer reports symbolize their stacks with llvm-symbolizer, a process the reporting thread
// would start: started under the filter, it could not load its libraries. Starting it here, on an
// unfiltered thread, keeps it for every later report.
void StartSymbolizer() {
  char buffer[256];
  __sanitizer_symbolize_pc(reinterpret_cast<void*>(&StartSymbolizer), "%p %F %L", buffer,
                           sizeof buffer);
}

class Worker {
 public:
  Worker() {
    StartSymbolizer();
    thread_ = std::thread([this] { Loop(); });
    thread_.detach();  // lives as long as the process
  }

  void Run(const std::function<void()>& fn) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &fn;
    wake_.notify_all();
    wake_.wait(lock, [this] { return job_ == nullptr; });
  }

 private:
  void Loop() {
    // For triage only: does a finding depend on the filter?
    if (std::getenv("ALSIM_FUZZ_NO_FILE_SANDBOX") == nullptr) ForbidReadingFiles();
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return job_ != nullptr; });
      (*job_)();
      job_ = nullptr;
      wake_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void()>* job_ = nullptr;
  std::thread thread_;
};

}  // namespace

void RunWithoutFileReads(const std::function<void()>& fn) {
  static Worker* const worker = new Worker();  // never destroyed: the thread never ends
  worker->Run(fn);
}

}  // namespace alsim::fuzz
