#include "server/tensors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <oneapi/tbb/task_arena.h>

#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"

namespace alsim::server {
namespace {

using alsim::v1::DType;
using alsim::v1::Observation;
using alsim::v1::Tensor;
using alsim::v1::TensorSpec;

constexpr double kInf = std::numeric_limits<double>::infinity();

TensorSpec* AddSpec(alsim::v1::Specs* specs, const std::string& name, DType dtype,
                    std::initializer_list<long> shape) {
  TensorSpec* spec = specs->add_observations();
  spec->set_name(name);
  spec->set_dtype(dtype);
  for (const long n : shape) spec->add_shape(n);
  return spec;
}

// A new [batch, per...] tensor `name` of `dtype` in `out` with all its bytes; their start.
char* AddTensor(google::protobuf::Map<std::string, Tensor>* out, const std::string& name,
                DType dtype, int batch, std::initializer_list<long> per_shape) {
  Tensor& tensor = (*out)[name];
  tensor.Clear();
  tensor.set_dtype(dtype);
  tensor.add_shape(batch);
  std::size_t per = 1;
  for (const long n : per_shape) {
    tensor.add_shape(n);
    per *= static_cast<std::size_t>(n);
  }
  const std::size_t size = dtype == alsim::v1::DTYPE_INT32 ? sizeof(std::int32_t) : sizeof(double);
  std::string* bytes = tensor.mutable_data();
  bytes->resize(static_cast<std::size_t>(batch) * per * size);
  return bytes->data();
}

}  // namespace

void FillDiagnostics(const SolverStatistics& s, alsim::v1::SolverDiagnostics* out) {
  out->set_contacts(s.contacts);
  out->set_islands(s.islands);
  out->set_max_iterations(s.max_iterations);
  out->set_mean_iterations(s.mean_iterations);
  out->set_primal_residual(s.primal_residual);
  out->set_dual_residual(s.dual_residual);
  out->set_contact_residual(s.contact_residual);
  out->set_split(s.split);
  out->set_solve_seconds(s.solve_seconds);
  for (int f = 0; f < s.num_figures; ++f)
    (*out->mutable_figures())[s.figures[f].name] = s.figures[f].value;
}

void FillSpecs(const Model& m, alsim::v1::Specs* specs) {
  TensorSpec* action = specs->mutable_action();
  action->set_name("action");
  action->set_dtype(alsim::v1::DTYPE_FLOAT64);
  action->add_shape(m.nu);
  for (int a = 0; a < m.nu; ++a) {
    action->add_lower(m.actuator_ctrl_limited[a] ? m.actuator_ctrl_lower[a] : -kInf);
    action->add_upper(m.actuator_ctrl_limited[a] ? m.actuator_ctrl_upper[a] : kInf);
    action->add_element_names(m.actuator_name[a]);
  }
  AddSpec(specs, "qpos", alsim::v1::DTYPE_FLOAT64, {m.nq});
  AddSpec(specs, "qvel", alsim::v1::DTYPE_FLOAT64, {m.nv});
  TensorSpec* body_pos = AddSpec(specs, "body_pos", alsim::v1::DTYPE_FLOAT64, {m.nbody, 3});
  TensorSpec* body_quat = AddSpec(specs, "body_quat", alsim::v1::DTYPE_FLOAT64, {m.nbody, 4});
  for (int b = 0; b < m.nbody; ++b) {
    body_pos->add_element_names(m.body_name[b]);
    body_quat->add_element_names(m.body_name[b]);
  }
  AddSpec(specs, "ctrl", alsim::v1::DTYPE_FLOAT64, {m.nu});
  AddSpec(specs, "actuator_force", alsim::v1::DTYPE_FLOAT64, {m.nu});
  AddSpec(specs, "contact_count", alsim::v1::DTYPE_INT32, {1});
  AddSpec(specs, "max_penetration", alsim::v1::DTYPE_FLOAT64, {1});
  AddSpec(specs, "time", alsim::v1::DTYPE_FLOAT64, {1});
  AddSpec(specs, "deformable_vertices", alsim::v1::DTYPE_FLOAT64, {m.nvert, 3});
  specs->set_timestep(m.timestep);
  specs->set_nq(m.nq);
  specs->set_nv(m.nv);
  specs->set_nu(m.nu);
  specs->set_nbody(m.nbody);
  specs->set_nvert(static_cast<std::uint32_t>(m.nvert));
  for (int b = 0; b < m.nbody; ++b) specs->add_body_names(m.body_name[b]);
}

grpc::Status ToGrpc(const batch::Status& status) {
  static_assert(static_cast<int>(batch::Code::kInvalidArgument) == grpc::INVALID_ARGUMENT &&
                static_cast<int>(batch::Code::kResourceExhausted) == grpc::RESOURCE_EXHAUSTED &&
                static_cast<int>(batch::Code::kFailedPrecondition) == grpc::FAILED_PRECONDITION);
  if (status.ok()) return grpc::Status::OK;
  if (status.code == batch::Code::kInterrupted) return {grpc::CANCELLED, status.message};
  return {static_cast<grpc::StatusCode>(status.code), status.message};
}

batch::TensorView ViewOf(const Tensor& tensor) {
  batch::TensorView view;
  switch (tensor.dtype()) {
    case alsim::v1::DTYPE_UNSPECIFIED:
      return view;
    case alsim::v1::DTYPE_FLOAT32:
      view.dtype = batch::DType::kFloat32;
      break;
    case alsim::v1::DTYPE_FLOAT64:
      view.dtype = batch::DType::kFloat64;
      break;
    default:
      view.dtype = batch::DType::kOther;
      break;
  }
  view.shape = tensor.shape().data();
  view.rank = tensor.shape_size();
  view.data = tensor.data().data();
  view.bytes = tensor.data().size();
  return view;
}

batch::ObservationKinds ObservationKindsOf(const std::vector<Observation>& kinds) {
  batch::ObservationKinds out;
  for (const Observation kind : kinds) {
    switch (kind) {
      case alsim::v1::OBSERVATION_QPOS:
        out.qpos = true;
        break;
      case alsim::v1::OBSERVATION_QVEL:
        out.qvel = true;
        break;
      case alsim::v1::OBSERVATION_BODY_POSES:
        out.body_poses = true;
        break;
      case alsim::v1::OBSERVATION_ACTUATOR_STATE:
        out.actuator_state = true;
        break;
      case alsim::v1::OBSERVATION_CONTACT_SUMMARY:
        out.contact_summary = true;
        break;
      case alsim::v1::OBSERVATION_TIME:
        out.time = true;
        break;
      case alsim::v1::OBSERVATION_DEFORMABLE_VERTICES:
        out.deformable_vertices = true;
        break;
      default:
        break;
    }
  }
  return out;
}

grpc::Status ParseObservations(const google::protobuf::RepeatedField<int>& requested,
                               bool default_qpos, std::vector<Observation>* kinds) {
  kinds->clear();
  for (const int value : requested) {
    if (!alsim::v1::Observation_IsValid(value) || value == alsim::v1::OBSERVATION_UNSPECIFIED) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "unknown observation " + std::to_string(value) + " (see alsim.v1.Observation)"};
    }
    const auto kind = static_cast<Observation>(value);
    if (std::find(kinds->begin(), kinds->end(), kind) == kinds->end()) kinds->push_back(kind);
  }
  if (kinds->empty() && default_qpos) kinds->push_back(alsim::v1::OBSERVATION_QPOS);
  return grpc::Status::OK;
}

std::size_t EstimateObservationBytes(const Model& m, int batch,
                                     const std::vector<Observation>& kinds) {
  return batch::ObservationBytes(m, batch, ObservationKindsOf(kinds));
}

grpc::Status CheckMessageSize(const char* what, std::size_t bytes, std::size_t limit,
                              const std::string& consequence) {
  return ToGrpc(batch::CheckMessageSize(what, bytes, limit, consequence));
}

batch::GradientInputs GradientInputsOf(const alsim::v1::StepRequest& request) {
  batch::GradientInputs in;
  if (!request.has_gradients()) return in;
  const alsim::v1::GradientRequest& gradients = request.gradients();
  in.requested = true;
  in.request.state = gradients.state();
  in.request.positions = !gradients.skip_positions();
  in.request.controls = gradients.controls();
  in.request.parameters.assign(gradients.parameters().begin(), gradients.parameters().end());
  in.mask = gradients.instance_mask().data();
  in.mask_size = gradients.instance_mask_size();
  return in;
}

JacobianWriter::JacobianWriter(const Model& m, int batch, const GradientRequest& request,
                               alsim::v1::Jacobians* out) {
  out->mutable_computed()->Resize(batch, false);
  out->mutable_residual()->Resize(batch, 0.0);
  out->mutable_constraint_changes()->Resize(batch, 0);
  for (const std::string& name : request.parameters) out->add_parameters(name);
  computed_ = out->mutable_computed()->mutable_data();
  residual_ = out->mutable_residual()->mutable_data();
  changes_ = out->mutable_constraint_changes()->mutable_data();
  // Every tensor is made before any pointer into one is taken (ObservationWriter's reason).
  auto add = [&](const char* name, const std::vector<double> StepJacobians::*values, long columns) {
    AddTensor(out->mutable_tensors(), name, alsim::v1::DTYPE_FLOAT64, batch, {m.nv, columns});
    blocks_.push_back({values, nullptr, static_cast<std::size_t>(m.nv) * columns});
  };
  std::vector<const char*> names;
  if (request.state) {
    add("dv_dv", &StepJacobians::dv_dv, m.nv);
    add("dq_dv", &StepJacobians::dq_dv, m.nv);
    names.insert(names.end(), {"dv_dv", "dq_dv"});
    if (request.positions) {
      add("dv_dq", &StepJacobians::dv_dq, m.nv);
      add("dq_dq", &StepJacobians::dq_dq, m.nv);
      names.insert(names.end(), {"dv_dq", "dq_dq"});
    }
  }
  if (request.controls) {
    add("dv_du", &StepJacobians::dv_du, m.nu);
    add("dq_du", &StepJacobians::dq_du, m.nu);
    names.insert(names.end(), {"dv_du", "dq_du"});
  }
  if (!request.parameters.empty()) {
    const long np = static_cast<long>(request.parameters.size());
    add("dv_dp", &StepJacobians::dv_dp, np);
    add("dq_dp", &StepJacobians::dq_dp, np);
    names.insert(names.end(), {"dv_dp", "dq_dp"});
  }
  // NaN until an instance's Jacobians are written: rows of instances without any stay NaN.
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    std::string* bytes = out->mutable_tensors()->at(names[b]).mutable_data();
    blocks_[b].bytes = bytes->data();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < bytes->size(); i += sizeof(double)) {
      std::memcpy(bytes->data() + i, &nan, sizeof(double));
    }
  }
}

void JacobianWriter::Write(int k, const StepJacobians& jacobians) const {
  computed_[k] = true;
  residual_[k] = jacobians.residual;
  changes_[k] = static_cast<std::uint32_t>(jacobians.constraint_changes);
  for (const Block& block : blocks_) {
    const std::vector<double>& values = jacobians.*(block.values);
    if (values.size() != block.per || block.per == 0) continue;  // a block the engine left out
    std::memcpy(block.bytes + static_cast<std::size_t>(k) * block.per * sizeof(double),
                values.data(), block.per * sizeof(double));
  }
}

ObservationWriter::ObservationWriter(const Model& m, int batch,
                                     const std::vector<Observation>& kinds,
                                     google::protobuf::Map<std::string, Tensor>* out)
    : m_(m) {
  // Every tensor is created before any pointer into one is taken: a map's insertions then move
  // nothing that a pointer was taken to.
  constexpr DType kF64 = alsim::v1::DTYPE_FLOAT64;
  for (const Observation kind : kinds) {
    switch (kind) {
      case alsim::v1::OBSERVATION_QPOS:
        qpos_ = AddTensor(out, "qpos", kF64, batch, {m.nq});
        break;
      case alsim::v1::OBSERVATION_QVEL:
        qvel_ = AddTensor(out, "qvel", kF64, batch, {m.nv});
        break;
      case alsim::v1::OBSERVATION_BODY_POSES:
        body_pos_ = AddTensor(out, "body_pos", kF64, batch, {m.nbody, 3});
        body_quat_ = AddTensor(out, "body_quat", kF64, batch, {m.nbody, 4});
        break;
      case alsim::v1::OBSERVATION_ACTUATOR_STATE:
        ctrl_ = AddTensor(out, "ctrl", kF64, batch, {m.nu});
        actuator_force_ = AddTensor(out, "actuator_force", kF64, batch, {m.nu});
        break;
      case alsim::v1::OBSERVATION_CONTACT_SUMMARY:
        contact_count_ = AddTensor(out, "contact_count", alsim::v1::DTYPE_INT32, batch, {1});
        max_penetration_ = AddTensor(out, "max_penetration", kF64, batch, {1});
        break;
      case alsim::v1::OBSERVATION_TIME:
        time_ = AddTensor(out, "time", kF64, batch, {1});
        break;
      case alsim::v1::OBSERVATION_DEFORMABLE_VERTICES:
        deformable_vertices_ = AddTensor(out, "deformable_vertices", kF64, batch, {m.nvert, 3});
        break;
      default:
        break;
    }
  }
  // The maps's nodes (and so the tensors' strings) stay where they are as entries are added; the
  // pointers are taken again now that every entry exists, which needs no such guarantee.
  auto bytes = [out](const char* name, char* taken) {
    return taken == nullptr ? nullptr : out->at(name).mutable_data()->data();
  };
  qpos_ = bytes("qpos", qpos_);
  qvel_ = bytes("qvel", qvel_);
  body_pos_ = bytes("body_pos", body_pos_);
  body_quat_ = bytes("body_quat", body_quat_);
  ctrl_ = bytes("ctrl", ctrl_);
  actuator_force_ = bytes("actuator_force", actuator_force_);
  contact_count_ = bytes("contact_count", contact_count_);
  max_penetration_ = bytes("max_penetration", max_penetration_);
  time_ = bytes("time", time_);
  deformable_vertices_ = bytes("deformable_vertices", deformable_vertices_);
}

void ObservationWriter::Write(int k, Data& data) const {
  const Model& m = m_;
  constexpr std::size_t kF64 = sizeof(double);
  auto doubles = [k](char* base, const double* values, std::size_t n) {
    if (base != nullptr && n > 0) std::memcpy(Row(base, k, n, kF64), values, n * kF64);
  };
  doubles(qpos_, data.qpos.data(), static_cast<std::size_t>(m.nq));
  doubles(qvel_, data.qvel.data(), static_cast<std::size_t>(m.nv));
  if (body_pos_ != nullptr) {
    Kinematics(m, data);
    char* pos = Row(body_pos_, k, 3u * m.nbody, kF64);
    char* quat = Row(body_quat_, k, 4u * m.nbody, kF64);
    for (int b = 0; b < m.nbody; ++b) {
      std::memcpy(pos + 3u * b * kF64, data.xpos[b].data(), 3 * kF64);
      std::memcpy(quat + 4u * b * kF64, data.xquat[b].data(), 4 * kF64);
    }
  }
  doubles(ctrl_, data.ctrl.data(), static_cast<std::size_t>(m.nu));
  doubles(actuator_force_, data.actuator_force.data(), static_cast<std::size_t>(m.nu));
  if (contact_count_ != nullptr) {
    const auto n = static_cast<std::int32_t>(data.contact.size());
    std::memcpy(Row(contact_count_, k, 1, sizeof(n)), &n, sizeof(n));
    double deepest = 0;
    for (const Contact& c : data.contact) deepest = std::max(deepest, -c.dist);
    doubles(max_penetration_, &deepest, 1);
  }
  doubles(time_, &data.time, 1);
  // Vec3 is three packed doubles (Eigen's fixed-size vector), so the vertices are one block.
  static_assert(sizeof(Vec3) == 3 * sizeof(double));
  if (m.nvert > 0) {
    doubles(deformable_vertices_, data.vert_xpos.front().data(), 3u * m.nvert);
  }
}

void PackObservations(const std::vector<Instance*>& instances,
                      const std::vector<Observation>& kinds,
                      google::protobuf::Map<std::string, Tensor>* out, PackMode mode) {
  if (instances.empty()) return;
  const int batch = static_cast<int>(instances.size());
  const ObservationWriter writer(*instances.front()->model, batch, kinds, out);
  if (mode == PackMode::kSerial) {
    for (int k = 0; k < batch; ++k) writer.Write(k, *instances[k]->data);
    return;
  }
  // Isolated, as the batched step's tasks: the waiting thread takes no other queued call.
  tbb::this_task_arena::isolate(
      [&] { ParallelFor(0, batch, 1, [&](int k) { writer.Write(k, *instances[k]->data); }); });
}

}  // namespace alsim::server
