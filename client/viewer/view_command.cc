#include "client/viewer/view_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "client/command/flags.h"
#include "client/command/observations.h"
#include "client/viewer/http_server.h"

namespace alsim::viewer {
namespace {

// The page's files: served by these names only (the whitelist of static paths).
struct StaticFile {
  const char* name;
  const char* content_type;
};
constexpr StaticFile kStaticFiles[] = {
    {"index.html", "text/html; charset=utf-8"},
    {"viewer.js", "text/javascript; charset=utf-8"},
    {"three.module.js", "text/javascript; charset=utf-8"},
    {"OrbitControls.js", "text/javascript; charset=utf-8"},
};

// Instances per stream at most (one stream shows instances of one scene).
constexpr std::size_t kMaxStreamInstances = 64;
// Frame rates a page may ask for.
constexpr double kMinRate = 1, kMaxRate = 60;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

// The directory of the running executable ("" when unknown).
std::string ExecutableDir() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string text(path, static_cast<std::size_t>(n));
  return text.substr(0, text.rfind('/'));
}

bool ReadFile(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *bytes = text.str();
  return static_cast<bool>(in) || in.eof();
}

std::string Json(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string ErrorJson(const grpc::Status& status) {
  return "{\"error\":" +
         Quoted(client::StatusCodeName(status.error_code()) + ": " + status.error_message()) + "}";
}

// Seven significant digits: a tenth of a micrometre on a 1 m scene, plenty for drawing.
void AppendNumber(std::string* out, double value) {
  if (!std::isfinite(value)) {
    *out += "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.7g", value);
  *out += text;
}

void AppendNumbers(std::string* out, const std::string& key, const double* values, std::size_t n) {
  *out += ",\"" + key + "\":[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) *out += ',';
    AppendNumber(out, values[i]);
  }
  *out += ']';
}

template <class Repeated>
void AppendRepeated(std::string* out, const std::string& key, const Repeated& values) {
  *out += ",\"" + key + "\":[";
  for (int i = 0; i < values.size(); ++i) {
    if (i > 0) *out += ',';
    AppendNumber(out, values.Get(i));
  }
  *out += ']';
}

// One StreamStates frame as the page's JSON event (ids as strings: they exceed JavaScript's
// exact integers).
std::string FrameJson(const alsim::v1::StateFrame& frame, std::uint64_t viewer_dropped) {
  std::string out = "{\"sequence\":" + std::to_string(frame.sequence()) +
                    ",\"dropped\":" + std::to_string(frame.dropped()) +
                    ",\"viewer_dropped\":" + std::to_string(viewer_dropped) + ",\"server_time\":";
  AppendNumber(&out, frame.server_time());
  out += ",\"ids\":[";
  for (int k = 0; k < frame.instance_ids_size(); ++k) {
    if (k > 0) out += ',';
    out += "\"" + std::to_string(frame.instance_ids(k)) + "\"";
  }
  out += ']';
  for (const char* name : {"time", "body_pos", "body_quat"}) {
    std::vector<double> values;
    if (command::ObservationValues(frame.observations(), name, &values).ok()) {
      AppendNumbers(&out, name, values.data(), values.size());
    }
  }
  // The deformables' vertices only for a scene that has some: other scenes' frames stay as they
  // were.
  std::vector<double> vertices;
  if (command::ObservationValues(frame.observations(), "deformable_vertices", &vertices).ok() &&
      !vertices.empty()) {
    AppendNumbers(&out, "deformable_vertices", vertices.data(), vertices.size());
  }
  out += ",\"details\":[";
  for (int k = 0; k < frame.details_size(); ++k) {
    const alsim::v1::InstanceFrameDetails& d = frame.details(k);
    if (k > 0) out += ',';
    out += "{\"steps\":" + std::to_string(d.steps()) +
           ",\"status\":" + Quoted(command::InstanceStatusName(d.status())) +
           ",\"contacts\":" + std::to_string(d.diagnostics().contacts()) +
           ",\"islands\":" + std::to_string(d.diagnostics().islands()) +
           ",\"max_iterations\":" + std::to_string(d.diagnostics().max_iterations()) +
           ",\"mean_iterations\":";
    AppendNumber(&out, d.diagnostics().mean_iterations());
    out += ",\"primal_residual\":";
    AppendNumber(&out, d.diagnostics().primal_residual());
    out += ",\"dual_residual\":";
    AppendNumber(&out, d.diagnostics().dual_residual());
    if (d.has_contacts()) {
      AppendRepeated(&out, "contact_position", d.contacts().position());
      AppendRepeated(&out, "contact_normal", d.contacts().normal());
    }
    out += '}';
  }
  return out + "]}";
}

// The newest frame of one stream, waiting for its browser: the gRPC reader replaces it, so a
// browser that reads slowly gets the newest frame when it is ready and the ones in between are
// dropped (counted), never queued.
struct LatestFrame {
  std::mutex mutex;
  std::condition_variable changed;
  alsim::v1::StateFrame frame;  // guarded; valid when `fresh`
  bool fresh = false;
  std::uint64_t dropped = 0;  // frames replaced before the browser took them, since the last sent
  bool ended = false;
  grpc::Status status;  // the stream's end
};

class Viewer {
 public:
  Viewer(client::Client& client, std::map<std::string, std::string> files, double rate)
      : client_(client), files_(std::move(files)), rate_(rate) {}

  void Handle(const HttpRequest& request, HttpConnection& connection) {
    const bool head = request.method == "HEAD";
    const std::string name = request.path == "/" ? "index.html" : request.path.substr(1);
    for (const StaticFile& file : kStaticFiles) {
      const auto found = files_.find(file.name);
      if (name == file.name && found != files_.end()) {
        connection.Respond(200, file.content_type, found->second, head);
        return;
      }
    }
    if (request.path == "/api/instances") {
      alsim::v1::ListResponse list;
      const grpc::Status status = client_.List(&list);
      if (!status.ok()) {
        connection.Respond(502, "application/json", ErrorJson(status), head);
      } else {
        connection.Respond(200, "application/json", Json(list), head);
      }
      return;
    }
    if (request.path == "/api/scene") {
      alsim::v1::GetSceneRequest scene_request;
      std::vector<std::uint64_t> ids;
      std::string error;
      if (!ParseIds(request, &ids, &error) || ids.size() != 1) {
        connection.Respond(400, "application/json",
                           "{\"error\":" + Quoted(error.empty() ? "one id=ID" : error) + "}", head);
        return;
      }
      scene_request.set_instance_id(ids.front());
      alsim::v1::GetSceneResponse scene;
      const grpc::Status status = client_.GetScene(scene_request, &scene);
      if (!status.ok()) {
        connection.Respond(status.error_code() == grpc::StatusCode::NOT_FOUND ? 404 : 502,
                           "application/json", ErrorJson(status), head);
      } else {
        connection.Respond(200, "application/json", Json(scene), head);
      }
      return;
    }
    if (request.path == "/api/stream") {
      if (head) {
        connection.Respond(405, "text/plain", "a stream is read with GET\n", true);
        return;
      }
      Stream(request, connection);
      return;
    }
    connection.Respond(404, "text/plain", "no such page: " + request.path + "\n", head);
  }

 private:
  // ?id=I or ?ids=I,J,... (decimal instance ids).
  static bool ParseIds(const HttpRequest& request, std::vector<std::uint64_t>* ids,
                       std::string* error) {
    auto found = request.query.find("ids");
    if (found == request.query.end()) found = request.query.find("id");
    if (found == request.query.end()) {
      *error = "give id=ID or ids=ID,ID,...";
      return false;
    }
    std::stringstream list(found->second);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (item.empty() || item.size() > 20 ||
          item.find_first_not_of("0123456789") != std::string::npos) {
        *error = "instance id '" + item + "' is not a decimal number";
        return false;
      }
      ids->push_back(std::stoull(item));
    }
    if (ids->empty() || ids->size() > kMaxStreamInstances) {
      *error = "give 1 to " + std::to_string(kMaxStreamInstances) + " instance ids";
      return false;
    }
    return true;
  }

  // Server-sent events: one "frame" event per frame the browser can take, "end" when the
  // server ends the stream (instances destroyed, server shutting down).
  void Stream(const HttpRequest& request, HttpConnection& connection) {
    std::vector<std::uint64_t> ids;
    std::string error;
    if (!ParseIds(request, &ids, &error)) {
      connection.Respond(400, "application/json", "{\"error\":" + Quoted(error) + "}");
      return;
    }
    double rate = rate_;
    if (const auto found = request.query.find("rate"); found != request.query.end()) {
      char* end = nullptr;
      rate = std::strtod(found->second.c_str(), &end);
      if (found->second.empty() || *end != '\0' || !(rate >= kMinRate && rate <= kMaxRate)) {
        connection.Respond(400, "application/json",
                           "{\"error\":\"rate must be a number of frames per second in [1, 60]\"}");
        return;
      }
    }
    const auto contacts = request.query.find("contacts");
    const bool with_contacts = contacts != request.query.end() && contacts->second == "1";

    alsim::v1::StreamStatesRequest stream_request;
    for (const std::uint64_t id : ids) stream_request.mutable_instances()->add_instance_ids(id);
    stream_request.set_rate_hz(rate);
    stream_request.add_observations(alsim::v1::OBSERVATION_BODY_POSES);
    stream_request.add_observations(alsim::v1::OBSERVATION_TIME);
    // Always asked for: a scene without deformables sends an empty tensor ([K, 0, 3]).
    stream_request.add_observations(alsim::v1::OBSERVATION_DEFORMABLE_VERTICES);
    stream_request.set_include_diagnostics(true);
    stream_request.set_include_contacts(with_contacts);

    if (!connection.Write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                          "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                          "Connection: close\r\n\r\nretry: 2000\n\n")) {
      return;
    }
    LatestFrame latest;
    client::StreamCanceller canceller;
    std::thread reader([&] {
      const grpc::Status status = client_.StreamStates(
          stream_request,
          [&](const alsim::v1::StateFrame& frame) {
            const std::lock_guard<std::mutex> lock(latest.mutex);
            if (latest.fresh) ++latest.dropped;
            latest.frame = frame;
            latest.fresh = true;
            latest.changed.notify_all();
            return true;
          },
          &canceller);
      const std::lock_guard<std::mutex> lock(latest.mutex);
      latest.ended = true;
      latest.status = status;
      latest.changed.notify_all();
    });

    auto last_write = std::chrono::steady_clock::now();
    while (true) {
      alsim::v1::StateFrame frame;
      std::uint64_t dropped = 0;
      bool have = false, ended = false;
      grpc::Status status;
      {
        std::unique_lock<std::mutex> lock(latest.mutex);
        latest.changed.wait_for(lock, std::chrono::milliseconds(500),
                                [&] { return latest.fresh || latest.ended; });
        if (latest.fresh) {
          frame.Swap(&latest.frame);
          dropped = latest.dropped;
          latest.dropped = 0;
          latest.fresh = false;
          have = true;
        } else if (latest.ended) {
          ended = true;
          status = latest.status;
        }
      }
      if (g_stop || connection.PeerClosed()) break;
      if (have) {
        if (!connection.Write("event: frame\ndata: " + FrameJson(frame, dropped) + "\n\n")) break;
        last_write = std::chrono::steady_clock::now();
      } else if (ended) {
        connection.Write(
            "event: end\ndata: " + (status.ok() ? std::string("{}") : ErrorJson(status)) + "\n\n");
        break;
      } else if (std::chrono::steady_clock::now() - last_write > std::chrono::seconds(10)) {
        // A comment keeps proxies from closing an idle stream and finds a browser that left.
        if (!connection.Write(": idle\n\n")) break;
        last_write = std::chrono::steady_clock::now();
      }
    }
    canceller.Cancel();
    reader.join();
  }

  client::Client& client_;
  const std::map<std::string, std::string> files_;
  const double rate_;
};

}  // namespace

int ViewCommand(client::Client& client, const std::vector<std::string>& args) {
  command::FlagParser parser("view", args);
  HttpServerOptions http;
  std::string web_dir = ExecutableDir() + "/viewer";
  double rate = 30;
  while (parser.Next()) {
    if (parser.Is("--listen")) {
      http.listen = parser.Value();
    } else if (parser.Is("--web-dir")) {
      web_dir = parser.Value();
    } else if (parser.Is("--rate")) {
      rate = parser.NumberValue(kMinRate, kMaxRate);
    } else if (parser.Is("--max-connections")) {
      http.max_connections = static_cast<int>(parser.UnsignedValue(1, 1024));
    } else {
      parser.Unexpected();
    }
  }
  std::map<std::string, std::string> files;
  for (const StaticFile& file : kStaticFiles) {
    std::string bytes;
    if (ReadFile(web_dir + "/" + file.name, &bytes)) {
      files[file.name] = std::move(bytes);
    } else {
      std::cerr << "alsim: view: the page's file " << web_dir << "/" << file.name
                << " cannot be read (build the viewer, or give --web-dir)\n";
      return command::kExitFailed;
    }
  }
  Viewer viewer(client, std::move(files), rate);
  HttpServer server(http, [&viewer](const HttpRequest& request, HttpConnection& connection) {
    viewer.Handle(request, connection);
  });
  std::string error;
  if (!server.Start(&error)) {
    std::cerr << "alsim: view: " << error << "\n";
    return command::kExitFailed;
  }
  struct sigaction action {};
  action.sa_handler = OnSignal;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  std::cout << "alsim viewer: http://" << server.address() << "/ (server " << client.address()
            << ")" << std::endl;
  if (!server.loopback()) {
    std::cerr << "alsim: view: warning: serving on a non-loopback address: anyone who reaches "
              << server.address() << " sees these instances\n";
  }
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.Stop();
  return command::kExitOk;
}

}  // namespace alsim::viewer
