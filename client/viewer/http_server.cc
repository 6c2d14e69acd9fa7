#include "client/viewer/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace alsim::viewer {
namespace {

constexpr std::size_t kMaxRequestBytes = 8192;
constexpr int kRequestSeconds = 10;
// A browser that takes no bytes for this long is gone (or stuck): its stream ends.
constexpr int kSendTimeoutSeconds = 10;
// The kernel's send buffer per connection: small, so that a browser that reads slowly backs the
// stream up after a few frames and the viewer drops frames instead of piling them up here.
constexpr int kSendBufferBytes = 32 * 1024;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// Closes after the response is out: a peer still sending (a request refused before it was read
// whole) would otherwise get a reset that can discard the response before the browser reads it.
// So the write side is shut first, and what the peer still sends is read and dropped, for at most
// a second and 64 KiB.
void LingeringClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  std::size_t drained = 0;
  char buffer[4096];
  while (drained < 64 * 1024 && std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) break;
    drained += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string PercentDecode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  std::size_t colon;
  if (!address.empty() && address[0] == '[') {
    const std::size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return false;
    }
    *host = address.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    *host = address.substr(0, colon);
  }
  *port = address.substr(colon + 1);
  if (port->empty() || port->size() > 5) return false;
  for (const char c : *port) {
    if (c < '0' || c > '9') return false;
  }
  return std::stoi(*port) <= 65535;
}

bool HttpConnection::Write(const std::string& bytes) const {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EAGAIN here is the send timeout: the browser stopped reading
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool HttpConnection::Respond(int status, const std::string& content_type, const std::string& body,
                             bool head) const {
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  text += "Content-Type: " + content_type + "\r\n";
  text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  text += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n";
  if (status == 405) text += "Allow: GET, HEAD\r\n";
  text += "\r\n";
  if (!head) text += body;
  return Write(text);
}

bool HttpConnection::PeerClosed() const {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLERR | POLLHUP)) != 0) return true;
  char byte;
  const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0;  // EOF; bytes the browser sends after its request are ignored
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

HttpServer::~HttpServer() { Stop(); }

bool HttpServer::Start(std::string* error) {
  std::string host, port;
  if (!SplitHostPort(options_.listen, &host, &port)) {
    *error = "--listen '" + options_.listen + "' is not HOST:PORT";
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = "cannot listen on " + options_.listen + ": " + ::gai_strerror(rc);
    return false;
  }
  std::string reason = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t length = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
      char text[INET6_ADDRSTRLEN] = {};
      int bound_port = 0;
      if (bound.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&bound);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
        bound_port = ntohs(v6->sin6_port);
        loopback_ = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
        address_ = "[" + std::string(text) + "]:" + std::to_string(bound_port);
      } else {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&bound);
        ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
        bound_port = ntohs(v4->sin_port);
        loopback_ = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
        address_ = std::string(text) + ":" + std::to_string(bound_port);
      }
    } else {
      reason = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    *error = "cannot listen on " + options_.listen + ": " + reason;
    return false;
  }
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void HttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return active_ == 0; });
}

void HttpServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // wakes up to see `stopping_`
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {  // out of descriptors, say: the connection waits in the backlog a while
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    bool admitted;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      admitted = active_ < options_.max_connections;
      if (admitted) ++active_;
    }
    if (!admitted) {
      HttpConnection(fd).Respond(503, "text/plain", "too many connections to the viewer\n");
      ::close(fd);
      continue;
    }
    std::thread([this, fd] {
      Serve(fd);
      LingeringClose(fd);
      const std::lock_guard<std::mutex> lock(mutex_);
      --active_;
      idle_.notify_all();
    }).detach();
  }
}

void HttpServer::Serve(int fd) {
  timeval receive{kRequestSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receive, sizeof receive);
  timeval send{kSendTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send, sizeof send);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBufferBytes, sizeof kSendBufferBytes);
  HttpConnection connection(fd);

  // The request line and headers, up to the blank line; the whole exchange within the timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kRequestSeconds);
  std::string head;
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() >= kMaxRequestBytes) {
      connection.Respond(413, "text/plain", "request headers too large\n");
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) return;
    char buffer[2048];
    const std::size_t want = std::min(sizeof buffer, kMaxRequestBytes - head.size());
    const ssize_t n = ::recv(fd, buffer, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // closed or timed out before a whole request
    head.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const std::size_t space1 = line.find(' ');
  const std::size_t space2 = line.find(' ', space1 == std::string::npos ? 0 : space1 + 1);
  if (space1 == std::string::npos || space2 == std::string::npos ||
      line.compare(space2 + 1, 5, "HTTP/") != 0) {
    connection.Respond(400, "text/plain", "malformed request line\n");
    return;
  }
  HttpRequest request;
  request.method = line.substr(0, space1);
  const std::string target = line.substr(space1 + 1, space2 - space1 - 1);
  if (request.method != "GET" && request.method != "HEAD") {
    connection.Respond(405, "text/plain", "only GET and HEAD\n");
    return;
  }
  // Headers: only Host matters.
  std::string host_header;
  bool have_host = false;
  for (std::size_t at = line_end + 2; at < head.size();) {
    const std::size_t end = head.find("\r\n", at);
    if (end == std::string::npos || end == at) break;
    const std::string header = head.substr(at, end - at);
    const std::size_t colon = header.find(':');
    if (colon != std::string::npos && Lower(header.substr(0, colon)) == "host") {
      host_header = header.substr(colon + 1);
      while (!host_header.empty() && host_header.front() == ' ') host_header.erase(0, 1);
      while (!host_header.empty() && host_header.back() == ' ') host_header.pop_back();
      have_host = true;
    }
    at = end + 2;
  }
  if (loopback_) {
    // DNS rebinding: a page of another origin that resolves its own name to 127.0.0.1 sends its
    // name as Host; a browser that opened the viewer itself sends a loopback host.
    std::string host = host_header, port;
    if (host_header.find(':') != std::string::npos &&
        (host_header[0] == '[' ? host_header.find("]:") != std::string::npos : true)) {
      if (!SplitHostPort(host_header, &host, &port)) host = host_header;
    }
    if (!have_host || !IsLoopbackHost(host)) {
      connection.Respond(403, "text/plain",
                         "the viewer listens on loopback and answers only requests for a "
                         "loopback host (Host: 127.0.0.1 or localhost)\n");
      return;
    }
  }
  const std::size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) {
    const std::string query = target.substr(question + 1);
    std::size_t at = 0;
    while (at <= query.size()) {
      std::size_t amp = query.find('&', at);
      if (amp == std::string::npos) amp = query.size();
      const std::string pair = query.substr(at, amp - at);
      const std::size_t equals = pair.find('=');
      if (!pair.empty()) {
        request.query[PercentDecode(pair.substr(0, equals))] =
            equals == std::string::npos ? "" : PercentDecode(pair.substr(equals + 1));
      }
      at = amp + 1;
    }
  }
  handler_(request, connection);
}

}  // namespace alsim::viewer
