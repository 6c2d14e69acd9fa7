// Packing of engine quantities into alsim.v1 tensors (little-endian, row-major bytes), the
// action decoding with its validation, and the specs that describe both.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"
#include "engine/model/model.h"
#include "server/instance_registry.h"

namespace alsim::server {

// A step's solver statistics as the contract's diagnostics.
void FillDiagnostics(const SolverStatistics& s, alsim::v1::SolverDiagnostics* out);

// The action spec and every observation spec of `m`.
void FillSpecs(const Model& m, alsim::v1::Specs* specs);

// A checked [K, ...] float32 or float64 input tensor (actions, external forces), read row by
// row straight from the request's bytes: instance k's row is decoded by the batch's task for k,
// into the instance's own arrays, with no intermediate K-row copy. Empty (present() false) for an
// absent tensor. It points into the request, which must outlive it.
class BatchRows {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  bool present() const { return bytes_ != nullptr; }
  // Values per row (instance).
  std::size_t row_size() const { return row_; }
  // The flat index (over the whole tensor) of row k's first value that is NaN or Inf, or kNone.
  std::size_t FirstNonFinite(int k) const;
  // Row k as row_size() doubles into `out` (float32 widened exactly as a cast does).
  void Read(int k, double* out) const;
  // INVALID_ARGUMENT naming the value at flat index `i` as not finite ("no instance was stepped").
  grpc::Status NonFinite(std::size_t i) const;

 private:
  friend grpc::Status CheckActions(const alsim::v1::Tensor&, int, int, BatchRows*);
  friend grpc::Status CheckExternalForces(const alsim::v1::Tensor&, int, const Model&, BatchRows*);
  const char* bytes_ = nullptr;
  bool single_ = false;  // float32
  std::size_t row_ = 0;
  std::function<std::string(std::size_t)> describe_;  // names the value at a flat index
};

// Checks actions [K, nu] (float32 or float64): INVALID_ARGUMENT, naming the problem, for a wrong
// dtype, shape or byte count. The values are not looked at: the caller scans them per row
// (FirstNonFinite; a NaN or Inf is named by the instance's batch index and the actuator).
grpc::Status CheckActions(const alsim::v1::Tensor& actions, int batch, int nu, BatchRows* rows);

// Checks external forces [K, nbody, 6] (float32 or float64; per body (force, torque), as
// Data::xfrc_applied) as CheckActions does; a NaN or Inf is named by batch index, body and
// component.
grpc::Status CheckExternalForces(const alsim::v1::Tensor& forces, int batch, const Model& m,
                                 BatchRows* rows);

// INVALID_ARGUMENT unless every requested observation is a known one; fills `kinds` without
// duplicates, or with qpos alone when `requested` is empty and `default_qpos` is set.
grpc::Status ParseObservations(const google::protobuf::RepeatedField<int>& requested,
                               bool default_qpos, std::vector<alsim::v1::Observation>* kinds);

// About how many bytes PackObservations writes for `batch` instances of `m` (the values exactly,
// plus a small allowance per tensor): to refuse a reply too large to send before stepping.
std::size_t EstimateObservationBytes(const Model& m, int batch,
                                     const std::vector<alsim::v1::Observation>& kinds);

// RESOURCE_EXHAUSTED when a `what` ("reply", "frame") of about `bytes` exceeds the server's message
// limit (--max-message-bytes); `consequence` ends the message (what to do, what did not happen).
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
