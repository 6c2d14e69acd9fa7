// Packing of engine quantities into alsim.v1 tensors (little-endian, row-major bytes), the
// action decoding with its validation, and the specs that describe both.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"
#include "engine/model/model.h"
#include "server/instance_registry.h"

namespace alsim::server {

// The action spec and every observation spec of `m`.
void FillSpecs(const Model& m, alsim::v1::Specs* specs);

// Decodes actions [K, nu] (float32 or float64) into `values` (K * nu doubles, row-major).
// INVALID_ARGUMENT, naming the problem, for a wrong dtype, shape or byte count, and for NaN or
// Inf (naming the instance's batch index and the actuator).
grpc::Status DecodeActions(const alsim::v1::Tensor& actions, int batch, int nu,
                           std::vector<double>* values);

// Decodes external forces [K, nbody, 6] (float32 or float64; per body (force, torque), as
// Data::xfrc_applied) into `values` (K * nbody * 6 doubles, row-major), with the errors of
// DecodeActions (a NaN or Inf named by batch index, body and component).
grpc::Status DecodeExternalForces(const alsim::v1::Tensor& forces, int batch, const Model& m,
                                  std::vector<double>* values);

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

// Writes the requested observations of `instances` (all of one model) as [K, ...] tensors.
// Body poses need the kinematics at the current qpos: they are recomputed here (derived data
// only; the state is untouched).
void PackObservations(const std::vector<Instance*>& instances,
                      const std::vector<alsim::v1::Observation>& kinds,
                      google::protobuf::Map<std::string, alsim::v1::Tensor>* out);

}  // namespace alsim::server
