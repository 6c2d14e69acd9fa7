#include "server/tensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

// A [K, per...] tensor of doubles filled by value(instance, out) writing `per` doubles.
template <class Fill>
void PackDoubles(const std::vector<Instance*>& instances, std::initializer_list<long> per_shape,
                 const Fill& fill, Tensor* tensor) {
  long per = 1;
  for (const long n : per_shape) per *= n;
  tensor->set_dtype(alsim::v1::DTYPE_FLOAT64);
  tensor->add_shape(static_cast<long>(instances.size()));
  for (const long n : per_shape) tensor->add_shape(n);
  std::string* bytes = tensor->mutable_data();
  bytes->resize(instances.size() * per * sizeof(double));
  if (per == 0) return;  // e.g. actuator state of a scene without actuators: shape [K, 0]
  std::vector<double> values(per);
  for (size_t k = 0; k < instances.size(); ++k) {
    fill(*instances[k], values.data());
    std::memcpy(bytes->data() + k * per * sizeof(double), values.data(), per * sizeof(double));
  }
}

// "[a, b, c]".
template <class Dims>
std::string ShapeText(const Dims& dims) {
  std::string text;
  for (const auto n : dims) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return "[" + text + "]";
}

// A float32 or float64 `tensor` of exactly `shape` as doubles, row-major. INVALID_ARGUMENT, with a
// message that starts with `what`, for a wrong dtype, shape (`meaning` names the dimensions) or
// byte count, and for a NaN or Inf, named by describe(flat index).
template <class Describe>
grpc::Status DecodeBatch(const Tensor& tensor, const std::string& what,
                         const std::vector<long>& shape, const char* meaning,
                         std::vector<double>* values, const Describe& describe) {
  const bool single = tensor.dtype() == alsim::v1::DTYPE_FLOAT32;
  if (!single && tensor.dtype() != alsim::v1::DTYPE_FLOAT64) {
    return {grpc::StatusCode::INVALID_ARGUMENT, what + " must be float32 or float64"};
  }
  bool same = tensor.shape_size() == static_cast<int>(shape.size());
  for (int i = 0; same && i < tensor.shape_size(); ++i) same = tensor.shape(i) == shape[i];
  if (!same) {
    return {grpc::StatusCode::INVALID_ARGUMENT, what + " have shape " + ShapeText(tensor.shape()) +
                                                    "; this batch needs " + ShapeText(shape) + " " +
                                                    meaning};
  }
  std::size_t count = 1;
  for (const long n : shape) count *= static_cast<std::size_t>(n);
  const std::size_t element = single ? sizeof(float) : sizeof(double);
  if (tensor.data().size() != count * element) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            what + " hold " + std::to_string(tensor.data().size()) + " bytes; shape " +
                ShapeText(shape) + " of " + (single ? "float32" : "float64") + " needs " +
                std::to_string(count * element)};
  }
  values->resize(count);
  const char* bytes = tensor.data().data();
  for (std::size_t i = 0; i < count; ++i) {
    double value;
    if (single) {
      float f;
      std::memcpy(&f, bytes + i * element, sizeof(float));
      value = f;
    } else {
      std::memcpy(&value, bytes + i * element, sizeof(double));
    }
    if (!std::isfinite(value)) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              describe(i) + " is not finite; no instance was stepped"};
    }
    (*values)[i] = value;
  }
  return grpc::Status::OK;
}

}  // namespace

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
  specs->set_timestep(m.timestep);
  specs->set_nq(m.nq);
  specs->set_nv(m.nv);
  specs->set_nu(m.nu);
  specs->set_nbody(m.nbody);
  for (int b = 0; b < m.nbody; ++b) specs->add_body_names(m.body_name[b]);
}

grpc::Status DecodeActions(const Tensor& actions, int batch, int nu, std::vector<double>* values) {
  return DecodeBatch(
      actions, "actions", {batch, nu}, "(instances, actuators)", values, [nu](std::size_t i) {
        return "action [" + std::to_string(i / nu) + ", " + std::to_string(i % nu) + "]";
      });
}

grpc::Status DecodeExternalForces(const Tensor& forces, int batch, const Model& m,
                                  std::vector<double>* values) {
  return DecodeBatch(forces, "external_forces", {batch, m.nbody, 6},
                     "(instances, bodies, force and torque)", values, [&m](std::size_t i) {
                       const std::size_t body = i / 6 % m.nbody;
                       return "external force [" + std::to_string(i / (6 * m.nbody)) + ", " +
                              std::to_string(body) + ", " + std::to_string(i % 6) + "] (body '" +
                              m.body_name[body] + "')";
                     });
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
  std::size_t per_instance = 0;  // bytes of one instance's values
  for (const Observation kind : kinds) {
    switch (kind) {
      case alsim::v1::OBSERVATION_QPOS:
        per_instance += 8u * m.nq;
        break;
      case alsim::v1::OBSERVATION_QVEL:
        per_instance += 8u * m.nv;
        break;
      case alsim::v1::OBSERVATION_BODY_POSES:
        per_instance += 8u * 7u * m.nbody;
        break;
      case alsim::v1::OBSERVATION_ACTUATOR_STATE:
        per_instance += 8u * 2u * m.nu;
        break;
      case alsim::v1::OBSERVATION_CONTACT_SUMMARY:
        per_instance += 4 + 8;
        break;
      case alsim::v1::OBSERVATION_TIME:
        per_instance += 8;
        break;
      default:
        break;
    }
  }
  // Each tensor adds a name, a dtype and a shape: a few dozen bytes.
  return per_instance * static_cast<std::size_t>(batch) + 64 * kinds.size();
}

grpc::Status CheckMessageSize(const char* what, std::size_t bytes, std::size_t limit,
                              const std::string& consequence) {
  if (bytes <= limit) return grpc::Status::OK;
  return {grpc::StatusCode::RESOURCE_EXHAUSTED,
          std::string("the ") + what + " would be about " + std::to_string(bytes) +
              " bytes, above the server's message limit of " + std::to_string(limit) +
              " (--max-message-bytes); " + consequence};
}

void PackObservations(const std::vector<Instance*>& instances,
                      const std::vector<Observation>& kinds,
                      google::protobuf::Map<std::string, Tensor>* out) {
  if (instances.empty()) return;
  const Model& m = *instances.front()->model;
  for (const Observation kind : kinds) {
    switch (kind) {
      case alsim::v1::OBSERVATION_QPOS:
        PackDoubles(
            instances, {m.nq},
            [&](const Instance& i, double* v) { std::copy_n(i.data->qpos.data(), m.nq, v); },
            &(*out)["qpos"]);
        break;
      case alsim::v1::OBSERVATION_QVEL:
        PackDoubles(
            instances, {m.nv},
            [&](const Instance& i, double* v) { std::copy_n(i.data->qvel.data(), m.nv, v); },
            &(*out)["qvel"]);
        break;
      case alsim::v1::OBSERVATION_BODY_POSES:
        for (Instance* instance : instances) Kinematics(m, *instance->data);
        PackDoubles(
            instances, {m.nbody, 3},
            [&](const Instance& i, double* v) {
              for (int b = 0; b < m.nbody; ++b) std::copy_n(i.data->xpos[b].data(), 3, v + 3 * b);
            },
            &(*out)["body_pos"]);
        PackDoubles(
            instances, {m.nbody, 4},
            [&](const Instance& i, double* v) {
              for (int b = 0; b < m.nbody; ++b) std::copy_n(i.data->xquat[b].data(), 4, v + 4 * b);
            },
            &(*out)["body_quat"]);
        break;
      case alsim::v1::OBSERVATION_ACTUATOR_STATE:
        PackDoubles(
            instances, {m.nu},
            [&](const Instance& i, double* v) { std::copy_n(i.data->ctrl.data(), m.nu, v); },
            &(*out)["ctrl"]);
        PackDoubles(
            instances, {m.nu},
            [&](const Instance& i, double* v) {
              std::copy_n(i.data->actuator_force.data(), m.nu, v);
            },
            &(*out)["actuator_force"]);
        break;
      case alsim::v1::OBSERVATION_CONTACT_SUMMARY: {
        Tensor& count = (*out)["contact_count"];
        count.set_dtype(alsim::v1::DTYPE_INT32);
        count.add_shape(static_cast<long>(instances.size()));
        count.add_shape(1);
        std::string* bytes = count.mutable_data();
        bytes->resize(instances.size() * sizeof(std::int32_t));
        for (size_t k = 0; k < instances.size(); ++k) {
          const auto n = static_cast<std::int32_t>(instances[k]->data->contact.size());
          std::memcpy(bytes->data() + k * sizeof(n), &n, sizeof(n));
        }
        PackDoubles(
            instances, {1},
            [&](const Instance& i, double* v) {
              double deepest = 0;
              for (const Contact& c : i.data->contact) deepest = std::max(deepest, -c.dist);
              v[0] = deepest;
            },
            &(*out)["max_penetration"]);
        break;
      }
      case alsim::v1::OBSERVATION_TIME:
        PackDoubles(
            instances, {1}, [&](const Instance& i, double* v) { v[0] = i.data->time; },
            &(*out)["time"]);
        break;
      default:
        break;
    }
  }
}

}  // namespace alsim::server
