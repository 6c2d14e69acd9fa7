#include "server/scene_compiler_protocol.h"

#include <cstring>

namespace alsim::server {
namespace {

constexpr std::uint32_t kRequestMagic = 0x51435341;  // "ASCQ"
constexpr std::uint32_t kReplyMagic = 0x52435341;    // "ASCR"
constexpr std::uint32_t kVersion = 2;

class Writer {
 public:
  void U8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(std::uint32_t v) { Bytes(&v, 4); }
  void U64(std::uint64_t v) { Bytes(&v, 8); }
  void String(const std::string& s) {
    U64(s.size());
    out_ += s;
  }
  std::string Take() { return std::move(out_); }

 private:
  // The project builds for little-endian hosts only (the state snapshot says the same).
  void Bytes(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool U8(std::uint8_t* v) { return Bytes(v, 1); }
  bool U32(std::uint32_t* v) { return Bytes(v, 4); }
  bool U64(std::uint64_t* v) { return Bytes(v, 8); }
  bool String(std::string* s) {
    std::uint64_t n = 0;
    if (!U64(&n) || n > in_.size() - at_) return false;
    s->assign(in_, at_, n);
    at_ += n;
    return true;
  }
  bool AtEnd() const { return at_ == in_.size(); }

 private:
  bool Bytes(void* p, std::size_t n) {
    if (n > in_.size() - at_) return false;
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  const std::string& in_;
  std::size_t at_ = 0;
};

bool Header(Reader& in, std::uint32_t magic, const char* what, std::string* error) {
  std::uint32_t m = 0, version = 0;
  if (!in.U32(&m) || m != magic) {
    *error = std::string(what) + ": not a scene compiler message";
    return false;
  }
  if (!in.U32(&version) || version != kVersion) {
    *error = std::string(what) + ": unknown version";
    return false;
  }
  return true;
}

}  // namespace

std::string EncodeRequest(const SceneCompileRequest& request) {
  Writer out;
  out.U32(kRequestMagic);
  out.U32(kVersion);
  out.String(request.path);
  out.String(request.text);
  out.String(request.name);
  out.U64(request.assets.size());
  for (const ModelAsset& asset : request.assets) {
    out.String(asset.name);
    out.String(asset.bytes);
  }
  return out.Take();
}

bool DecodeRequest(const std::string& bytes, SceneCompileRequest* request, std::string* error) {
  Reader in(bytes);
  *request = SceneCompileRequest{};
  if (!Header(in, kRequestMagic, "request", error)) return false;
  std::uint64_t assets = 0;
  if (!in.String(&request->path) || !in.String(&request->text) || !in.String(&request->name) ||
      !in.U64(&assets)) {
    *error = "request: truncated";
    return false;
  }
  for (std::uint64_t k = 0; k < assets; ++k) {
    ModelAsset asset;
    if (!in.String(&asset.name) || !in.String(&asset.bytes)) {
      *error = "request: truncated asset";
      return false;
    }
    request->assets.push_back(std::move(asset));
  }
  if (!in.AtEnd()) {
    *error = "request: trailing bytes";
    return false;
  }
  return true;
}

std::string EncodeReply(const SceneCompileReply& reply) {
  Writer out;
  out.U32(kReplyMagic);
  out.U32(kVersion);
  out.String(reply.scene.error);
  out.String(reply.scene.mjb);
  out.U8(reply.scene.sets_timestep ? 1 : 0);
  out.U64(reply.scene.warnings.size());
  for (const std::string& warning : reply.scene.warnings) out.String(warning);
  out.String(reply.scene.deformables);
  out.U64(reply.model_bytes);
  out.U64(reply.instance_bytes);
  out.U8(reply.out_of_memory ? 1 : 0);
  return out.Take();
}

bool DecodeReply(const std::string& bytes, SceneCompileReply* reply, std::string* error) {
  Reader in(bytes);
  *reply = SceneCompileReply{};
  if (!Header(in, kReplyMagic, "reply", error)) return false;
  std::uint8_t sets_timestep = 0, out_of_memory = 0;
  std::uint64_t warnings = 0;
  if (!in.String(&reply->scene.error) || !in.String(&reply->scene.mjb) || !in.U8(&sets_timestep) ||
      !in.U64(&warnings)) {
    *error = "reply: truncated";
    return false;
  }
  for (std::uint64_t k = 0; k < warnings; ++k) {
    std::string warning;
    if (!in.String(&warning)) {
      *error = "reply: truncated warning";
      return false;
    }
    reply->scene.warnings.push_back(std::move(warning));
  }
  if (!in.String(&reply->scene.deformables) || !in.U64(&reply->model_bytes) ||
      !in.U64(&reply->instance_bytes) || !in.U8(&out_of_memory) || !in.AtEnd()) {
    *error = "reply: truncated or trailing bytes";
    return false;
  }
  reply->scene.sets_timestep = sets_timestep != 0;
  reply->out_of_memory = out_of_memory != 0;
  return true;
}

std::string Frame(const std::string& message) {
  std::string framed(kFrameHeaderBytes, '\0');
  const std::uint64_t n = message.size();
  std::memcpy(framed.data(), &n, kFrameHeaderBytes);
  return framed + message;
}

std::uint64_t FrameLength(const char* header) {
  std::uint64_t n = 0;
  std::memcpy(&n, header, kFrameHeaderBytes);
  return n;
}

}  // namespace alsim::server
