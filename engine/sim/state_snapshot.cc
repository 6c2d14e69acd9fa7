#include "engine/sim/state_snapshot.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "engine/data/constraint_set.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"

namespace alsim {

// The format is little-endian with IEEE-754 doubles; the engine copies arrays with memcpy.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "state snapshots assume little-endian");
static_assert(std::numeric_limits<double>::is_iec559, "state snapshots assume IEEE-754 doubles");
static_assert(sizeof(int) == sizeof(std::int32_t), "ConstraintKey fields are written as i32");

namespace {

constexpr int kNumSizes = 8;
constexpr std::uint32_t kOldestReadableVersion = 2;     // version 2: no xfrc_applied (zero)
constexpr std::uint32_t kFirstVersionWithVertices = 5;  // before: vertices at rest, not moving
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 * kNumSizes + 8;  // magic .. fingerprint
constexpr double kQuaternionTolerance = 1e-6;
// ConstraintKey::kind: contact, equality, limit, soft, friction, tendon limit, foundation element
constexpr int kMaxKeyKind = 6;

// An integer as its 8 little-endian bytes.
std::uint64_t HashInteger(std::uint64_t hash, std::int64_t value) {
  for (int k = 0; k < 8; ++k) {
    hash ^= static_cast<unsigned char>(static_cast<std::uint64_t>(value) >> (8 * k));
    hash *= kFnvPrime;
  }
  return hash;
}

// Length, then the elements' bytes (plain arithmetic, enum or Eigen fixed-size elements).
template <class T>
std::uint64_t HashVector(std::uint64_t hash, const std::vector<T>& values) {
  hash = HashInteger(hash, static_cast<std::int64_t>(values.size()));
  return HashBytes(hash, values.data(), sizeof(T) * values.size());
}

std::uint64_t HashNames(std::uint64_t hash, const std::vector<std::string>& names) {
  hash = HashInteger(hash, static_cast<std::int64_t>(names.size()));
  for (const std::string& name : names) {
    hash = HashInteger(hash, static_cast<std::int64_t>(name.size()));
    hash = HashBytes(hash, name.data(), name.size());
  }
  return hash;
}

// The sizes in the header, in order.
void ModelSizes(const Model& m, std::uint32_t* sizes) {
  const int values[kNumSizes] = {m.nq, m.nv, m.nu, m.nbody, m.njnt, m.ngeom, m.neq, m.nsubsystem};
  for (int k = 0; k < kNumSizes; ++k) sizes[k] = static_cast<std::uint32_t>(values[k]);
}
constexpr const char* kSizeNames[kNumSizes] = {"nq",   "nv",    "nu",  "nbody",
                                               "njnt", "ngeom", "neq", "nsubsystem"};

class Writer {
 public:
  explicit Writer(std::size_t capacity) { bytes_.reserve(capacity); }
  void Raw(const void* data, std::size_t size) {
    if (size > 0) bytes_.append(static_cast<const char*>(data), size);
  }
  template <class T>
  void Value(const T& value) {
    Raw(&value, sizeof value);
  }
  // u32 count, then `count` doubles.
  void Doubles(const double* values, std::size_t count) {
    Value(static_cast<std::uint32_t>(count));
    Raw(values, sizeof(double) * count);
  }
  std::string Finish() {
    Value(HashBytes(kFnvOffsetBasis, bytes_.data(), bytes_.size()));
    return std::move(bytes_);
  }

 private:
  std::string bytes_;
};

// Reads [0, end) of `bytes` front to back; every read checks that the bytes are there.
class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end) : bytes_(bytes), end_(end) {}
  std::size_t position() const { return position_; }
  std::size_t remaining() const { return end_ - position_; }
  // True if `size` more bytes are there, else sets the error (truncated).
  bool Need(std::size_t size, const char* what, std::string* error) const {
    if (remaining() >= size) return true;
    *error = "state snapshot truncated: " + std::string(what) + " needs " + std::to_string(size) +
             " bytes at offset " + std::to_string(position_) + ", only " +
             std::to_string(remaining()) + " remain";
    return false;
  }
  bool Raw(void* out, std::size_t size, const char* what, std::string* error) {
    if (!Need(size, what, error)) return false;
    if (size > 0) std::memcpy(out, bytes_.data() + position_, size);
    position_ += size;
    return true;
  }
  template <class T>
  bool Value(T* out, const char* what, std::string* error) {
    return Raw(out, sizeof *out, what, error);
  }
  // A u32 count that must equal `expected`, then that many doubles into *out.
  bool Doubles(std::vector<double>* out, int expected, const char* what, std::string* error) {
    std::uint32_t count = 0;
    if (!Value(&count, what, error)) return false;
    if (count != static_cast<std::uint32_t>(expected)) {
      *error = "state snapshot: " + std::string(what) + " has " + std::to_string(count) +
               " entries, this model has " + std::to_string(expected);
      return false;
    }
    if (!Need(sizeof(double) * count, what, error)) return false;
    out->resize(count);
    return Raw(out->data(), sizeof(double) * count, what, error);
  }

 private:
  const std::string& bytes_;
  std::size_t end_;
  std::size_t position_ = 0;
};

// Everything a snapshot holds, parsed but not yet validated.
struct Snapshot {
  double time = 0;
  std::vector<double> qpos, qvel, ctrl, margin;
  std::vector<double> xfrc;  // 6 nbody doubles, or empty: no applied forces
  WarmStart warm;
  std::vector<Vec3> vert_xpos, vert_xvel;  // nvert each
};

bool CheckFinite(const std::vector<double>& values, const char* what, std::string* error) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      *error = "state snapshot: " + std::string(what) + "[" + std::to_string(i) + "] is " +
               (std::isnan(values[i]) ? "NaN" : "infinite");
      return false;
    }
  }
  return true;
}

// `what` names the array, e.g. "warm_start impulse" or "vert_xpos".
bool CheckFinite(const std::vector<Vec3>& values, const char* what, std::string* error) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].allFinite()) {
      *error = "state snapshot: " + std::string(what) + " " + std::to_string(i) + " is not finite";
      return false;
    }
  }
  return true;
}

bool Parse(const Model& m, const std::string& bytes, Snapshot* s, std::string* error) {
  constexpr std::size_t kMagicBytes = sizeof kStateSnapshotMagic;
  if (std::memcmp(bytes.data(), kStateSnapshotMagic, std::min(bytes.size(), kMagicBytes)) != 0) {
    *error = "state snapshot: wrong magic (not an alsim state snapshot)";
    return false;
  }
  if (bytes.size() < kHeaderBytes + sizeof(std::uint64_t)) {
    *error = "state snapshot truncated: " + std::to_string(bytes.size()) +
             " bytes, the header and checksum alone take " +
             std::to_string(kHeaderBytes + sizeof(std::uint64_t));
    return false;
  }
  // Everything but the trailing checksum; the header is there (checked above).
  Reader in(bytes, bytes.size() - sizeof(std::uint64_t));
  char magic[kMagicBytes];
  std::uint32_t version = 0;
  std::uint32_t sizes[kNumSizes], expected[kNumSizes];
  std::uint64_t fingerprint = 0;
  in.Raw(magic, sizeof magic, "magic", error);
  in.Value(&version, "version", error);
  in.Raw(sizes, sizeof sizes, "model sizes", error);
  in.Value(&fingerprint, "model fingerprint", error);
  if (version < kOldestReadableVersion || version > kStateSnapshotVersion) {
    *error = "state snapshot: format version " + std::to_string(version) +
             " is not supported (this build reads versions " +
             std::to_string(kOldestReadableVersion) + " to " +
             std::to_string(kStateSnapshotVersion) + ")";
    return false;
  }
  ModelSizes(m, expected);
  if (std::memcmp(sizes, expected, sizeof sizes) != 0) {
    std::string differences;
    for (int k = 0; k < kNumSizes; ++k) {
      if (sizes[k] == expected[k]) continue;
      differences += std::string(differences.empty() ? "" : ", ") + kSizeNames[k] + " " +
                     std::to_string(sizes[k]) + " vs " + std::to_string(expected[k]);
    }
    *error = "state snapshot is of a different model (snapshot vs this model: " + differences + ")";
    return false;
  }
  if (fingerprint != ModelFingerprint(m)) {
    *error =
        "state snapshot is of a different model: same sizes, but its model fingerprint differs "
        "(another scene, or the same scene with other parameters)";
    return false;
  }

  if (!in.Value(&s->time, "time", error) || !in.Doubles(&s->qpos, m.nq, "qpos", error) ||
      !in.Doubles(&s->qvel, m.nv, "qvel", error) || !in.Doubles(&s->ctrl, m.nu, "ctrl", error)) {
    return false;
  }
  if (version >= 3) {
    std::uint32_t bodies = 0;
    if (!in.Value(&bodies, "xfrc_applied count", error)) return false;
    if (bodies != 0 && bodies != static_cast<std::uint32_t>(m.nbody)) {
      *error = "state snapshot: xfrc_applied has " + std::to_string(bodies) +
               " bodies, this model has " + std::to_string(m.nbody) + " (or 0: no forces)";
      return false;
    }
    const std::size_t count = 6 * static_cast<std::size_t>(bodies);
    if (!in.Need(sizeof(double) * count, "xfrc_applied", error)) return false;
    s->xfrc.resize(count);
    in.Raw(s->xfrc.data(), sizeof(double) * count, "xfrc_applied", error);
  }
  if (!in.Doubles(&s->margin, m.ngeom, "geom_speculative_margin", error)) return false;
  std::uint32_t warm_count = 0;
  if (!in.Value(&warm_count, "warm_start count", error)) return false;
  constexpr std::size_t kEntryBytes =
      3 * sizeof(std::int32_t) + 2 * sizeof(Vec3) + sizeof(double) + sizeof(std::int32_t);
  if (!in.Need(kEntryBytes * warm_count, "warm_start", error)) return false;
  s->warm.key.resize(warm_count);
  s->warm.position.resize(warm_count);
  s->warm.impulse.resize(warm_count);
  s->warm.delassus_trace.resize(warm_count);
  s->warm.delassus_age.resize(warm_count);
  for (ConstraintKey& key : s->warm.key) {
    std::int32_t values[3] = {0, 0, 0};
    in.Raw(values, sizeof values, "warm_start keys", error);
    key = ConstraintKey{values[0], values[1], values[2]};
  }
  in.Raw(s->warm.position.data(), sizeof(Vec3) * warm_count, "warm_start positions", error);
  in.Raw(s->warm.impulse.data(), sizeof(Vec3) * warm_count, "warm_start impulses", error);
  in.Raw(s->warm.delassus_trace.data(), sizeof(double) * warm_count, "warm_start Delassus traces",
         error);
  in.Raw(s->warm.delassus_age.data(), sizeof(std::int32_t) * warm_count,
         "warm_start Delassus trace ages", error);
  s->warm.angular_impulse.assign(warm_count, Vec3::Zero());
  if (version >= 4) {
    std::uint32_t angular_count = 0;
    if (!in.Value(&angular_count, "warm_start angular impulse count", error)) return false;
    if (angular_count != 0 && angular_count != warm_count) {
      *error = "state snapshot: " + std::to_string(angular_count) +
               " warm_start angular impulses for " + std::to_string(warm_count) +
               " entries (or 0: none)";
      return false;
    }
    if (!in.Need(sizeof(Vec3) * angular_count, "warm_start angular impulses", error)) return false;
    in.Raw(s->warm.angular_impulse.data(), sizeof(Vec3) * angular_count,
           "warm_start angular impulses", error);
  }
  if (version >= kFirstVersionWithVertices) {
    std::uint32_t vertices = 0;
    if (!in.Value(&vertices, "vertex count", error)) return false;
    if (vertices != static_cast<std::uint32_t>(m.nvert)) {
      *error = "state snapshot: its deformable vertex state has " + std::to_string(vertices) +
               " vertices, this model has " + std::to_string(m.nvert) +
               " (a snapshot of another scene)";
      return false;
    }
    if (!in.Need(2 * sizeof(Vec3) * vertices, "vertex state", error)) return false;
    s->vert_xpos.resize(vertices);
    s->vert_xvel.resize(vertices);
    in.Raw(s->vert_xpos.data(), sizeof(Vec3) * vertices, "vert_xpos", error);
    in.Raw(s->vert_xvel.data(), sizeof(Vec3) * vertices, "vert_xvel", error);
  } else {
    // Older versions had no vertex state: the rest positions, not moving (ResetData's).
    s->vert_xpos = m.vert_pos0;
    s->vert_xvel.assign(m.nvert, Vec3::Zero());
  }
  if (in.remaining() != 0) {
    *error = "state snapshot: " + std::to_string(in.remaining()) +
             " bytes more than its fields take (trailing data)";
    return false;
  }
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + in.position(), sizeof checksum);
  if (checksum != HashBytes(kFnvOffsetBasis, bytes.data(), in.position())) {
    *error = "state snapshot: checksum mismatch (the bytes are corrupted)";
    return false;
  }
  return true;
}

bool Validate(const Model& m, const Snapshot& s, std::string* error) {
  if (!std::isfinite(s.time)) {
    *error = std::string("state snapshot: time is ") + (std::isnan(s.time) ? "NaN" : "infinite");
    return false;
  }
  if (!CheckFinite(s.qpos, "qpos", error) || !CheckFinite(s.qvel, "qvel", error) ||
      !CheckFinite(s.ctrl, "ctrl", error) || !CheckFinite(s.xfrc, "xfrc_applied", error) ||
      !CheckFinite(s.margin, "geom_speculative_margin", error) ||
      !CheckFinite(s.warm.position, "warm_start position", error) ||
      !CheckFinite(s.warm.impulse, "warm_start impulse", error) ||
      !CheckFinite(s.warm.angular_impulse, "warm_start angular impulse", error) ||
      !CheckFinite(s.vert_xpos, "vert_xpos", error) ||
      !CheckFinite(s.vert_xvel, "vert_xvel", error) ||
      !CheckFinite(s.warm.delassus_trace, "warm_start Delassus trace", error)) {
    return false;
  }
  for (std::size_t i = 0; i < s.warm.delassus_age.size(); ++i) {
    if (s.warm.delassus_age[i] < 0) {
      *error =
          "state snapshot: warm_start Delassus trace age " + std::to_string(i) + " is negative";
      return false;
    }
  }
  for (std::size_t g = 0; g < s.margin.size(); ++g) {
    if (s.margin[g] < 0) {
      *error = "state snapshot: geom_speculative_margin[" + std::to_string(g) + "] is negative";
      return false;
    }
  }
  for (int j = 0; j < m.njnt; ++j) {
    int adr = m.jnt_qpos_adr[j];
    if (m.jnt_type[j] == JointType::kFree) {
      adr += 3;
    } else if (m.jnt_type[j] != JointType::kBall) {
      continue;
    }
    const double norm = Quat(s.qpos[adr], s.qpos[adr + 1], s.qpos[adr + 2], s.qpos[adr + 3]).norm();
    if (!(std::abs(norm - 1.0) <= kQuaternionTolerance)) {
      *error = "state snapshot: the quaternion of joint " + std::to_string(j) + " ('" +
               m.jnt_name[j] + "', qpos[" + std::to_string(adr) + ".." + std::to_string(adr + 3) +
               "]) has norm " + std::to_string(norm) + ", not 1 within 1e-6";
      return false;
    }
  }
  for (std::size_t i = 0; i < s.warm.key.size(); ++i) {
    if (s.warm.key[i].kind < 0 || s.warm.key[i].kind > kMaxKeyKind) {
      *error = "state snapshot: warm_start key " + std::to_string(i) + " has unknown kind " +
               std::to_string(s.warm.key[i].kind);
      return false;
    }
    // The next step looks keys up by binary search (engine/data/constraint_set.h).
    if (i > 0 && ConstraintKeyLess(s.warm.key[i], s.warm.key[i - 1])) {
      *error = "state snapshot: warm_start key " + std::to_string(i) +
               " is out of order (keys must ascend by kind, then a, then b)";
      return false;
    }
  }
  return true;
}

}  // namespace

std::uint64_t ModelFingerprint(const Model& m) {
  std::uint64_t hash = kFnvOffsetBasis;
  for (const int size :
       {m.nq, m.nv, m.nu, m.nbody, m.njnt, m.ngeom, m.neq, m.nsubsystem, m.npair}) {
    hash = HashInteger(hash, size);
  }
  hash = HashBytes(hash, &m.timestep, sizeof m.timestep);
  // The options that change what a state evolves into: gravity and the disable flags.
  hash = HashBytes(hash, m.gravity.data(), 3 * sizeof(double));
  for (const bool flag : {m.constraints_enabled, m.limits_enabled, m.equalities_enabled,
                          m.contact_enabled, m.filter_parent}) {
    hash = HashInteger(hash, flag ? 1 : 0);
  }
  hash = HashVector(hash, m.body_parent);
  hash = HashVector(hash, m.body_mass);
  hash = HashVector(hash, m.jnt_type);
  hash = HashVector(hash, m.jnt_body);
  hash = HashVector(hash, m.dof_parent);
  hash = HashVector(hash, m.geom_type);
  hash = HashVector(hash, m.geom_body);
  hash = HashVector(hash, m.geom_size);
  hash = HashNames(hash, m.body_name);
  hash = HashNames(hash, m.jnt_name);
  hash = HashNames(hash, m.geom_name);
  hash = HashNames(hash, m.actuator_name);
  // Tendons only where there are some, so that the fingerprints of scenes without any, and the
  // snapshots saved from them, stay what they were.
  if (m.ntendon > 0) {
    hash = HashNames(hash, m.tendon_name);
    hash = HashVector(hash, m.tendon_wrap_num);
    hash = HashVector(hash, m.wrap_jnt);
    hash = HashVector(hash, m.wrap_coef);
  }
  return hash;
}

std::string SaveStateSnapshot(const Model& m, const Data& d) {
  const WarmStart& warm = d.warm_start;
  const std::size_t w = warm.key.size();
  static_assert(sizeof(Vec6) == 6 * sizeof(double), "Vec6 must be six packed doubles");
  const double* xfrc = d.xfrc_applied.front().data();
  const std::size_t xfrc_doubles = 6 * static_cast<std::size_t>(m.nbody);
  // Only +0.0 counts as no force: a -0.0 is kept, as every other bit pattern is.
  const bool forces =
      std::any_of(xfrc, xfrc + xfrc_doubles, [](double x) { return x != 0 || std::signbit(x); });
  const std::size_t doubles =
      static_cast<std::size_t>(m.nq) + m.nv + m.nu + m.ngeom + (forces ? xfrc_doubles : 0);
  // Only +0.0 counts as no angular impulse (every condim-3 scene): as xfrc_applied above.
  const double* angular = w > 0 ? warm.angular_impulse.front().data() : nullptr;
  const bool angular_impulses =
      std::any_of(angular, angular + 3 * w, [](double x) { return x != 0 || std::signbit(x); });
  const std::size_t angular_count = angular_impulses ? w : 0;
  const std::size_t nvert = static_cast<std::size_t>(m.nvert);
  Writer out(kHeaderBytes + 8 + 20 + 8 * doubles + 4 + 72 * w + 4 + 24 * angular_count + 4 +
             48 * nvert + 8);
  out.Raw(kStateSnapshotMagic, sizeof kStateSnapshotMagic);
  out.Value(kStateSnapshotVersion);
  std::uint32_t sizes[kNumSizes];
  ModelSizes(m, sizes);
  out.Raw(sizes, sizeof sizes);
  out.Value(ModelFingerprint(m));
  out.Value(d.time);
  out.Doubles(d.qpos.data(), m.nq);
  out.Doubles(d.qvel.data(), m.nv);
  out.Doubles(d.ctrl.data(), m.nu);
  out.Value(static_cast<std::uint32_t>(forces ? m.nbody : 0));
  if (forces) out.Raw(xfrc, sizeof(double) * xfrc_doubles);
  out.Doubles(d.geom_speculative_margin.data(), m.ngeom);
  out.Value(static_cast<std::uint32_t>(w));
  for (const ConstraintKey& key : warm.key) {
    const std::int32_t values[3] = {key.kind, key.a, key.b};
    out.Raw(values, sizeof values);
  }
  static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");
  out.Raw(warm.position.data(), sizeof(Vec3) * w);
  out.Raw(warm.impulse.data(), sizeof(Vec3) * w);
  out.Raw(warm.delassus_trace.data(), sizeof(double) * w);
  out.Raw(warm.delassus_age.data(), sizeof(std::int32_t) * w);
  out.Value(static_cast<std::uint32_t>(angular_count));
  out.Raw(angular, sizeof(Vec3) * angular_count);
  out.Value(static_cast<std::uint32_t>(nvert));
  out.Raw(d.vert_xpos.data(), sizeof(Vec3) * nvert);
  out.Raw(d.vert_xvel.data(), sizeof(Vec3) * nvert);
  return out.Finish();
}

bool RestoreStateSnapshot(const Model& m, const std::string& bytes, Data& d, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  if (d.qpos.size() != static_cast<std::size_t>(m.nq) ||
      d.qvel.size() != static_cast<std::size_t>(m.nv) ||
      d.ctrl.size() != static_cast<std::size_t>(m.nu) ||
      d.xfrc_applied.size() != static_cast<std::size_t>(m.nbody) ||
      d.geom_speculative_margin.size() != static_cast<std::size_t>(m.ngeom) ||
      d.vert_xpos.size() != static_cast<std::size_t>(m.nvert) ||
      d.vert_xvel.size() != static_cast<std::size_t>(m.nvert)) {
    *error = "state snapshot: the Data was not constructed from this model";
    return false;
  }
  Snapshot s;
  if (!Parse(m, bytes, &s, error) || !Validate(m, s, error)) return false;

  // Nothing was written so far; from here on nothing can fail.
  d.time = s.time;
  std::copy(s.qpos.begin(), s.qpos.end(), d.qpos.begin());
  std::copy(s.qvel.begin(), s.qvel.end(), d.qvel.begin());
  std::copy(s.ctrl.begin(), s.ctrl.end(), d.ctrl.begin());
  for (int b = 0; b < m.nbody; ++b) {
    d.xfrc_applied[b] =
        s.xfrc.empty() ? Vec6::Zero() : Vec6(Eigen::Map<const Vec6>(s.xfrc.data() + 6 * b));
  }
  std::copy(s.margin.begin(), s.margin.end(), d.geom_speculative_margin.begin());
  d.warm_start.key.assign(s.warm.key.begin(), s.warm.key.end());
  d.warm_start.position.assign(s.warm.position.begin(), s.warm.position.end());
  d.warm_start.impulse.assign(s.warm.impulse.begin(), s.warm.impulse.end());
  d.warm_start.angular_impulse.assign(s.warm.angular_impulse.begin(), s.warm.angular_impulse.end());
  d.warm_start.delassus_trace.assign(s.warm.delassus_trace.begin(), s.warm.delassus_trace.end());
  d.warm_start.delassus_age.assign(s.warm.delassus_age.begin(), s.warm.delassus_age.end());
  std::copy(s.vert_xpos.begin(), s.vert_xpos.end(), d.vert_xpos.begin());
  std::copy(s.vert_xvel.begin(), s.vert_xvel.end(), d.vert_xvel.begin());

  // Derived quantities at the restored state; no step has been taken from it yet.
  Forward(m, d);
  d.contact.clear();
  d.constraints.Clear();
  d.islands.num = 0;
  d.solver_statistics = SolverStatistics{};
  error->clear();
  return true;
}

}  // namespace alsim
