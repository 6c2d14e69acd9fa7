// Packing of engine quantities into alsim.v1 tensors (little-endian, row-major bytes), the specs
// that describe them, and the translation of requests' tensors and statuses to and from the
// batch-step core (server/batch_step.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"
#include "engine/model/model.h"
#include "engine/sim/step_gradients.h"
#include "server/batch_step.h"
#include "server/instance.h"

namespace alsim::server {

// A step's solver statistics as the contract's diagnostics.
void FillDiagnostics(const SolverStatistics& s, alsim::v1::SolverDiagnostics* out);

// The action spec and every observation spec of `m`.
void FillSpecs(const Model& m, alsim::v1::Specs* specs);

// The batch-step core's status as gRPC's (server/batch_step.h: the codes are numbered alike). The
// core's kInterrupted has no gRPC code: the caller words it (CallWatch::Reason); here it becomes
// CANCELLED.
grpc::Status ToGrpc(const batch::Status& status);

// A request's tensor as the core reads it, pointing into the request (DTYPE_UNSPECIFIED: absent).
batch::TensorView ViewOf(const alsim::v1::Tensor& tensor);

// The observation kinds of a parsed request (ParseObservations) as the core sizes them.
batch::ObservationKinds ObservationKindsOf(const std::vector<alsim::v1::Observation>& kinds);

// INVALID_ARGUMENT unless every requested observation is a known one; fills `kinds` without
// duplicates, or with qpos alone when `requested` is empty and `default_qpos` is set.
grpc::Status ParseObservations(const google::protobuf::RepeatedField<int>& requested,
                               bool default_qpos, std::vector<alsim::v1::Observation>* kinds);

// About how many bytes PackObservations writes for `batch` instances of `m`
// (batch::ObservationBytes): to refuse a reply too large to send before stepping.
std::size_t EstimateObservationBytes(const Model& m, int batch,
                                     const std::vector<alsim::v1::Observation>& kinds);

// batch::CheckMessageSize as a gRPC status (RESOURCE_EXHAUSTED above --max-message-bytes).
grpc::Status CheckMessageSize(const char* what, std::size_t bytes, std::size_t limit,
                              const std::string& consequence);

// The observation tensors of one reply, written in place: the constructor creates every tensor
// of `kinds` in `out` with its dtype, shape [batch, ...] and all its bytes (each sized once), and
// Write(k, data) fills instance k's rows from its Data. Writes of distinct k touch distinct bytes,
// so the batch's tasks write their own instances' rows concurrently. `out` must outlive the
// writer and gain no other entries meanwhile.
class ObservationWriter {
 public:
  ObservationWriter(const Model& m, int batch, const std::vector<alsim::v1::Observation>& kinds,
                    google::protobuf::Map<std::string, alsim::v1::Tensor>* out);
  // Instance k's rows. Body poses need the kinematics at the current qpos: when they are asked
  // for, Write recomputes them in `data` (derived data only; the state is untouched).
  void Write(int k, Data& data) const;

 private:
  // The first byte of instance k's row of a tensor with `per` values of `size` bytes each.
  static char* Row(char* base, int k, std::size_t per, std::size_t size) {
    return base + static_cast<std::size_t>(k) * per * size;
  }
  const Model& m_;
  // Each requested tensor's bytes (null when not requested).
  char* qpos_ = nullptr;
  char* qvel_ = nullptr;
  char* body_pos_ = nullptr;
  char* body_quat_ = nullptr;
  char* ctrl_ = nullptr;
  char* actuator_force_ = nullptr;
  char* contact_count_ = nullptr;
  char* max_penetration_ = nullptr;
  char* time_ = nullptr;
  char* deformable_vertices_ = nullptr;
};

// A request's gradient option (alsim.v1.GradientRequest) as the core takes it, pointing into the
// request (its mask). `requested` is false when the request has none.
batch::GradientInputs GradientInputsOf(const alsim::v1::StepRequest& request);

// The Jacobians of one reply (alsim.v1.Jacobians), written in place as ObservationWriter does:
// the constructor sizes every flag, figure and tensor of the asked blocks ([batch, nv, ...], NaN
// until written), and Write(k, jacobians) fills instance k's entries; writes of distinct k touch
// distinct bytes.
class JacobianWriter {
 public:
  JacobianWriter(const Model& m, int batch, const GradientRequest& request,
                 alsim::v1::Jacobians* out);
  void Write(int k, const StepJacobians& jacobians) const;

 private:
  struct Block {
    const std::vector<double> StepJacobians::*values;
    char* bytes;
    std::size_t per;  // doubles per instance: nv x columns
  };
  std::vector<Block> blocks_;
  bool* computed_ = nullptr;
  double* residual_ = nullptr;
  std::uint32_t* changes_ = nullptr;
};

// Writes the requested observations of `instances` (all of one model) as [K, ...] tensors. How the
// rows are written: one instance after another on the calling thread (a state stream's pump,
// which must not take the arena's threads from steps), or as parallel tasks, one per instance, on
// the calling task's arena (a Reset, which runs there like a batched step).
enum class PackMode { kSerial, kParallel };
void PackObservations(const std::vector<Instance*>& instances,
                      const std::vector<alsim::v1::Observation>& kinds,
                      google::protobuf::Map<std::string, alsim::v1::Tensor>* out, PackMode mode);

}  // namespace alsim::server
