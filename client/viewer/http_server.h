// A small HTTP/1.1 server for `alsim view`: GET only, one request per connection, a thread per
// connection (bounded), over POSIX sockets.
//
// It serves a browser on the same machine, not the Internet: requests are bounded (8 KiB of
// request line and headers, 10 s to send them), anything but GET (and HEAD) is 405, unknown paths
// are 404 (the caller's handler decides), and on a loopback address the Host header must name a
// loopback host too, so that a web page from elsewhere cannot read the API through DNS rebinding.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace alsim::viewer {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // without the query, percent-decoding not applied (paths are fixed names)
  std::map<std::string, std::string> query;  // decoded; a repeated key keeps its last value
};

// A connection's socket, for handlers that stream (server-sent events).
class HttpConnection {
 public:
  explicit HttpConnection(int fd) : fd_(fd) {}
  // Writes all of `bytes`; false when the peer is gone or a write blocked longer than the send
  // timeout (a browser that stopped reading).
  bool Write(const std::string& bytes) const;
  // Writes a whole response: status line, Content-Type, Content-Length, no-store caching,
  // Connection: close, and the body (not for HEAD).
  bool Respond(int status, const std::string& content_type, const std::string& body,
               bool head = false) const;
  // True once the peer closed its side (it sent EOF or reset), checked without blocking.
  bool PeerClosed() const;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Handles one request; returns after writing the response (or streaming until it ends).
using HttpHandler = std::function<void(const HttpRequest&, HttpConnection&)>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  int max_connections = 32;               // beyond: 503 at once
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; false with *error set ("cannot listen on ...: reason").
  bool Start(std::string* error);
  // The address it listens on, host:port with the port chosen (after Start).
  std::string address() const { return address_; }
  bool loopback() const { return loopback_; }
  // Stops accepting and waits for the connection threads (handlers must watch stopping()).
  void Stop();
  bool stopping() const { return stopping_; }

 private:
  void AcceptLoop();
  void Serve(int fd);

  HttpServerOptions options_;
  HttpHandler handler_;
  int listen_fd_ = -1;
  std::string address_;
  bool loopback_ = true;
  std::atomic<bool> stopping_{false};
  // Connection threads are detached; Stop waits until `active_` is back to 0.
  std::mutex mutex_;
  std::condition_variable idle_;
  int active_ = 0;  // guarded by mutex_
  std::thread accept_thread_;
};

// "a b" from "a%20b" / "a+b"; invalid escapes are kept as they are.
std::string PercentDecode(const std::string& text);

// Splits "host:port" ("[v6]:port" too); false when malformed.
bool SplitHostPort(const std::string& address, std::string* host, std::string* port);

}  // namespace alsim::viewer
