// What the server and its scene compiler process (alsim-scene-compiler) say to each other over
// one socket: a request (a scene text and its assets, or a built-in scene's path), then a reply
// (MuJoCo's binary model or an error, and what the compile measured).
//
// Framing, little-endian: u32 magic, u32 version, then fields in order; a string is a u64 length
// and its bytes. Decoding checks every length against the bytes that are left, so a truncated or
// corrupt message is an error, never a read past the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model_import.h"

namespace alsim::server {

struct SceneCompileRequest {
  // A built-in scene's file (read from the server's disk, trusted); empty for a client's text.
  std::string path;
  std::string text;  // the client's scene text (when path is empty)
  std::string name;  // file name for messages and for MuJoCo's VFS
  std::vector<ModelAsset> assets;
};

struct SceneCompileReply {
  CompiledScene scene;  // scene.error empty on success
  // Heap bytes the worker measured (malloc's in-use bytes, before and after): the converted
  // Model, and one instance's Data and solver, constructed as a server would. Estimates: an
  // instance's contact buffers grow with the contacts it sees.
  std::uint64_t model_bytes = 0;
  std::uint64_t instance_bytes = 0;
  bool out_of_memory = false;  // the compile ran out of the memory it was allowed
};

std::string EncodeRequest(const SceneCompileRequest& request);
// False with *error set for a malformed message.
bool DecodeRequest(const std::string& bytes, SceneCompileRequest* request, std::string* error);

std::string EncodeReply(const SceneCompileReply& reply);
bool DecodeReply(const std::string& bytes, SceneCompileReply* reply, std::string* error);

// Messages go over a stream socket as a u64 length, then the bytes (EncodeRequest / EncodeReply).
inline constexpr std::size_t kFrameHeaderBytes = 8;
std::string Frame(const std::string& message);
// The length in a frame header (the first 8 bytes of `header`).
std::uint64_t FrameLength(const char* header);

}  // namespace alsim::server
