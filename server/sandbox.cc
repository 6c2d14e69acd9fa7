#include "server/sandbox.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

namespace alsim::server {
namespace {

std::string SetLimit(int resource, const char* name, std::uint64_t value) {
  rlimit limit{};
  limit.rlim_cur = value;
  limit.rlim_max = value;
  if (setrlimit(resource, &limit) != 0) {
    return std::string("setrlimit(") + name + "): " + std::strerror(errno);
  }
  return "";
}

}  // namespace

std::string ApplyResourceLimits(const SandboxLimits& limits) {
  std::string error = SetLimit(RLIMIT_CORE, "RLIMIT_CORE", 0);
  if (error.empty()) error = SetLimit(RLIMIT_FSIZE, "RLIMIT_FSIZE", 0);
  if (error.empty() && limits.memory_bytes > 0) {
    error = SetLimit(RLIMIT_AS, "RLIMIT_AS", limits.memory_bytes);
  }
  if (error.empty() && limits.cpu_seconds > 0) {
    error = SetLimit(RLIMIT_CPU, "RLIMIT_CPU", limits.cpu_seconds);
  }
  return error;
}

std::string ForbidFilesAndProcesses() {
#if defined(__x86_64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  return "the scene compiler's sandbox supports x86_64 and aarch64 only";
#endif
  std::vector<sock_filter> program;
  // Refuse other architectures' calling conventions outright.
  program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  auto answer = [&](int call, std::uint32_t action) {
    program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(call), 0, 1));
    program.push_back(BPF_STMT(BPF_RET | BPF_K, action));
  };
  const std::uint32_t refuse = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
#ifndef ALSIM_SANITIZED
  // Only these; everything else (open, openat, execve, socket, connect, clone, ptrace, kill, ...)
  // is refused.
  for (const int call :
       {SYS_read,       SYS_write,         SYS_readv,          SYS_writev,
        SYS_close,      SYS_fstat,         SYS_newfstatat,     SYS_lseek,
        SYS_mmap,       SYS_munmap,        SYS_mremap,         SYS_mprotect,
        SYS_brk,        SYS_madvise,       SYS_futex,          SYS_exit,
        SYS_exit_group, SYS_rt_sigreturn,  SYS_rt_sigprocmask, SYS_rt_sigaction,
        SYS_getrandom,  SYS_clock_gettime, SYS_gettimeofday,   SYS_gettid,
        SYS_getpid,     SYS_tgkill,        SYS_sched_yield,    SYS_sched_getaffinity}) {
    answer(call, SECCOMP_RET_ALLOW);
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, refuse));
#else
  // Sanitizer builds (make asan, make tsan, make fuzz): their runtimes need calls no list can
  // foresee (sigaltstack, readlink of /proc/self/exe, UBSan's pipe probe, ...). Refuse what reaches
  // files, other processes and the network; allow the rest.
  for (const int call : {SYS_open,
                         SYS_openat,
                         SYS_openat2,
                         SYS_creat,
                         SYS_execve,
                         SYS_execveat,
                         SYS_socket,
                         SYS_connect,
                         SYS_bind,
                         SYS_ptrace,
                         SYS_fork,
                         SYS_vfork,
                         SYS_kill,
                         SYS_unlink,
                         SYS_unlinkat,
                         SYS_rename,
                         SYS_renameat,
                         SYS_renameat2,
                         SYS_mkdir,
                         SYS_mkdirat,
                         SYS_truncate,
                         SYS_name_to_handle_at,
                         SYS_open_by_handle_at}) {
    answer(call, refuse);
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#endif
  sock_fprog filter{};
  filter.len = static_cast<unsigned short>(program.size());
  filter.filter = program.data();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
    return std::string("seccomp: ") + std::strerror(errno);
  }
  return "";
}

}  // namespace alsim::server
