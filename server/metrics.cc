#include "server/metrics.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include <grpcpp/support/interceptor.h>

#include <google/protobuf/descriptor.h>

#include "alsim/v1/alsim.grpc.pb.h"

#include "server/build_info.h"

namespace alsim::server {
namespace {

std::string DependencyVersion(const BuildInfo& info, const std::string& name) {
  for (const auto& [library, version] : info.dependencies) {
    if (library == name) return version;
  }
  return "unknown";
}

// Powers of `factor` from `first` up to `last`: bucket bounds for values spanning decades.
prometheus::Histogram::BucketBoundaries Exponential(double first, double factor, double last) {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double b = first; b <= last * 1.0000001; b *= factor) bounds.push_back(b);
  return bounds;
}

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

const char* RpcTypeName(grpc::experimental::ServerRpcInfo::Type type) {
  using Type = grpc::experimental::ServerRpcInfo::Type;
  switch (type) {
    case Type::UNARY:
      return "unary";
    case Type::CLIENT_STREAMING:
      return "client_stream";
    case Type::SERVER_STREAMING:
      return "server_stream";
    case Type::BIDI_STREAMING:
      return "bidi_stream";
  }
  return "unary";
}

// One per RPC: counts the start at creation, the code and duration when the status is sent.
// The methods this server serves: a call to any other name (which a client may invent freely)
// is counted under service and method "unknown", so no client input creates a metric series.
bool KnownMethod(const std::string& full) {
  static const std::set<std::string> known = [] {
    std::set<std::string> names = {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
                                   "/grpc.reflection.v1alpha.ServerReflection/"
                                   "ServerReflectionInfo",
                                   "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"};
    const google::protobuf::ServiceDescriptor* simulator =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            alsim::v1::Simulator::service_full_name());
    for (int i = 0; simulator != nullptr && i < simulator->method_count(); ++i) {
      names.insert("/" + simulator->full_name() + "/" + simulator->method(i)->name());
    }
    return names;
  }();
  return known.count(full) != 0;
}

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(ServerMetrics* metrics, grpc::experimental::ServerRpcInfo* info)
      : metrics_(metrics), type_(RpcTypeName(info->type())), start_(Clock::now()) {
    // "/package.Service/Method"
    const std::string full = info->method() != nullptr ? info->method() : "";
    const auto slash = full.rfind('/');
    if (KnownMethod(full) && slash != std::string::npos) {
      service_ = full.substr(1, slash - 1);
      method_ = full.substr(slash + 1);
    } else {
      service_ = method_ = "unknown";
    }
    metrics_->RpcStarted(type_, service_, method_);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      metrics_->RpcHandled(type_, service_, method_,
                           StatusCodeName(methods->GetSendStatus().error_code()), seconds);
    }
    methods->Proceed();
  }

 private:
  using Clock = std::chrono::steady_clock;
  ServerMetrics* metrics_;
  std::string type_, service_, method_;
  Clock::time_point start_;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(ServerMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(metrics_, info);
  }

 private:
  ServerMetrics* metrics_;
};

// The fields of /proc/self/stat this collector reads (proc(5)): CPU time in user and kernel
// mode and the start time, in clock ticks (the start time since boot).
struct ProcStat {
  double user_ticks = 0, system_ticks = 0, start_ticks = 0;
};

// Parses /proc/self/stat. The command name (field 2) is in parentheses and may itself hold spaces
// and parentheses, so the fields are counted from the last ')'.
bool ReadProcStat(ProcStat* out) {
  std::ifstream file("/proc/self/stat");
  std::string text;
  if (!std::getline(file, text)) return false;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  // After the name: field 3 (state) is the first; utime is field 14, stime 15, starttime 22.
  for (int number = 3; number <= 22 && fields >> field; ++number) {
    if (number == 14) out->user_ticks = std::strtod(field.c_str(), nullptr);
    if (number == 15) out->system_ticks = std::strtod(field.c_str(), nullptr);
    if (number == 22) {
      out->start_ticks = std::strtod(field.c_str(), nullptr);
      return true;
    }
  }
  return false;
}

// The boot time (seconds since the epoch): the `btime` line of /proc/stat; 0 when unreadable.
double BootTime() {
  std::ifstream file("/proc/stat");
  std::string key;
  double value = 0;
  while (file >> key) {
    if (key == "btime" && file >> value) return value;
    file.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Process gauges and counters computed when scraped (see ServerMetrics::process_collector).
class ProcessCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families;
    auto add = [&](const char* name, const char* help, prometheus::MetricType type, double value) {
      prometheus::MetricFamily family;
      family.name = name;
      family.help = help;
      family.type = type;
      prometheus::ClientMetric metric;
      if (type == prometheus::MetricType::Counter) {
        metric.counter.value = value;
      } else {
        metric.gauge.value = value;
      }
      family.metric.push_back(metric);
      families.push_back(std::move(family));
    };
    auto gauge = [&](const char* name, const char* help, double value) {
      add(name, help, prometheus::MetricType::Gauge, value);
    };
    // The Prometheus client conventions' process_* series (names, units and help as the official
    // clients export them), so that standard dashboards and alerts work unchanged.
    ProcStat stat;
    if (ReadProcStat(&stat)) {
      const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
      add("process_cpu_seconds_total", "Total user and system CPU time spent in seconds",
          prometheus::MetricType::Counter, (stat.user_ticks + stat.system_ticks) / ticks);
      const double boot = BootTime();
      if (boot > 0) {
        gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds",
              boot + stat.start_ticks / ticks);
      }
    }
    std::ifstream statm("/proc/self/statm");
    double pages = 0, resident = 0;
    if (statm >> pages >> resident) {
      const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
      gauge("process_resident_memory_bytes", "Resident memory size in bytes", resident * page);
      gauge("process_virtual_memory_bytes", "Virtual memory size in bytes", pages * page);
    }
    gauge("alsim_heap_in_use_bytes",
          "Bytes malloc has handed out and not had back, over all arenas (glibc's malloc_info)",
          HeapInUse());
    return families;
  }

 private:
  // malloc_info's totals over every arena (mallinfo2 covers the main arena only): memory taken
  // from the system, less the free chunks, plus the chunks mapped on their own.
  static double HeapInUse() {
    char* text = nullptr;
    std::size_t size = 0;
    FILE* out = open_memstream(&text, &size);
    if (out == nullptr) return 0;
    malloc_info(0, out);
    std::fclose(out);
    const std::string xml(text, size);
    std::free(text);
    // The totals follow the last </heap>.
    const std::size_t totals = xml.rfind("</heap>");
    auto value = [&](const std::string& tag) {
      const std::size_t at = xml.find(tag, totals == std::string::npos ? 0 : totals);
      if (at == std::string::npos) return 0.0;
      const std::size_t quote = xml.find("size=\"", at);
      return quote == std::string::npos ? 0.0 : std::strtod(xml.c_str() + quote + 6, nullptr);
    };
    return value("<system type=\"current\"") - value("<total type=\"fast\"") -
           value("<total type=\"rest\"") + value("<total type=\"mmap\"");
  }
};

}  // namespace

ServerMetrics::ServerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      process_collector_(std::make_shared<ProcessCollector>()) {
  const BuildInfo& info = ServerBuildInfo();
  prometheus::BuildGauge()
      .Name("alsim_build_info")
      .Help("Build information of the running alsim server; the value is always 1")
      .Register(*registry_)
      .Add({{"version", info.version},
            {"git_revision", info.git_revision},
            {"build_type", info.build_type},
            {"grpc_version", DependencyVersion(info, "grpc")},
            {"mujoco_version", DependencyVersion(info, "mujoco")}})
      .Set(1);
  rpc_started_ = &prometheus::BuildCounter()
                      .Name("grpc_server_started_total")
                      .Help("RPCs started on the server")
                      .Register(*registry_);
  rpc_handled_ = &prometheus::BuildCounter()
                      .Name("grpc_server_handled_total")
                      .Help("RPCs completed on the server, by status code")
                      .Register(*registry_);
  rpc_seconds_ = &prometheus::BuildHistogram()
                      .Name("grpc_server_handling_seconds")
                      .Help("Time from an RPC's start to its status being sent")
                      .Register(*registry_);
  step_seconds_ = &prometheus::BuildHistogram()
                       .Name("alsim_step_duration_seconds")
                       .Help("Wall time of one instance step (batch time / instances / substeps)")
                       .Register(*registry_)
                       .Add({}, Exponential(1e-5, 2, 1.31072));  // 10 us .. 1.3 s
  iterations_ = &prometheus::BuildHistogram()
                     .Name("alsim_solver_iterations")
                     .Help("Most iterations any island took in one instance step")
                     .Register(*registry_)
                     .Add({}, Exponential(1, 2, 1024));
  residual_ = &prometheus::BuildHistogram()
                   .Name("alsim_solver_residual")
                   .Help("Contact residual (SubADMM paper Sec. VII) of one instance step")
                   .Register(*registry_)
                   .Add({}, Exponential(1e-12, 10, 1));
  contacts_ = &prometheus::BuildHistogram()
                   .Name("alsim_contacts")
                   .Help("Contact points in one instance step")
                   .Register(*registry_)
                   .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 2, 4, 8, 16, 32, 64, 128,
                                                                    256, 512, 1024});
  islands_ =
      &prometheus::BuildHistogram()
           .Name("alsim_islands")
           .Help("Contact islands in one instance step")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 2, 4, 8, 16, 32, 64, 128, 256});
  instances_ = &prometheus::BuildGauge()
                    .Name("alsim_instances")
                    .Help("Live simulation instances")
                    .Register(*registry_)
                    .Add({});
  steps_total_ = &prometheus::BuildCounter()
                      .Name("alsim_steps_total")
                      .Help("Instance steps taken (substeps counted one by one)")
                      .Register(*registry_)
                      .Add({});
  scenes_ = &prometheus::BuildGauge()
                 .Name("alsim_scenes")
                 .Help("Compiled scenes held (in use by instances, or cached)")
                 .Register(*registry_)
                 .Add({});
  memory_reserved_ = &prometheus::BuildGauge()
                          .Name("alsim_memory_reserved_bytes")
                          .Help(
                              "Estimated bytes of the compiled scenes and instances, charged "
                              "against --max-memory")
                          .Register(*registry_)
                          .Add({});
  memory_limit_ = &prometheus::BuildGauge()
                       .Name("alsim_memory_limit_bytes")
                       .Help("The memory budget for scenes and instances (--max-memory)")
                       .Register(*registry_)
                       .Add({});
  instances_limit_ = &prometheus::BuildGauge()
                          .Name("alsim_instances_limit")
                          .Help("The most live instances the server holds (--max-instances)")
                          .Register(*registry_)
                          .Add({});
  diverged_total_ = &prometheus::BuildCounter()
                         .Name("alsim_instances_diverged_total")
                         .Help(
                             "Instances whose step diverged (non-finite state); each refuses Step "
                             "until Reset or SetState")
                         .Register(*registry_)
                         .Add({});
  frames_dropped_ = &prometheus::BuildCounter()
                         .Name("alsim_stream_frames_dropped_total")
                         .Help("StreamStates frames skipped because the client was not ready")
                         .Register(*registry_)
                         .Add({});
}

void ServerMetrics::ObserveStep(const SolverStatistics& statistics, double seconds) {
  step_seconds_->Observe(seconds);
  iterations_->Observe(statistics.max_iterations);
  residual_->Observe(statistics.contact_residual);
  contacts_->Observe(statistics.contacts);
  islands_->Observe(statistics.islands);
}

void ServerMetrics::RpcStarted(const std::string& type, const std::string& service,
                               const std::string& method) {
  rpc_started_->Add({{"grpc_type", type}, {"grpc_service", service}, {"grpc_method", method}})
      .Increment();
}

void ServerMetrics::RpcHandled(const std::string& type, const std::string& service,
                               const std::string& method, const std::string& code, double seconds) {
  rpc_handled_
      ->Add({{"grpc_type", type},
             {"grpc_service", service},
             {"grpc_method", method},
             {"grpc_code", code}})
      .Increment();
  rpc_seconds_
      ->Add({{"grpc_type", type}, {"grpc_service", service}, {"grpc_method", method}},
            Exponential(1e-5, 4, 10.0))
      .Observe(seconds);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(ServerMetrics* metrics) {
  return std::make_unique<MetricsInterceptorFactory>(metrics);
}

}  // namespace alsim::server
