#include "tests/support/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>

namespace alsim::testing {

HttpResponse HttpGet(const std::string& url, int timeout_seconds) {
  HttpResponse response;
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    response.error = "not an http:// URL: " + url;
    return response;
  }
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string host_port = rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  const auto colon = host_port.rfind(':');
  const std::string host = host_port.substr(0, colon);
  const int port = static_cast<int>(std::strtol(host_port.substr(colon + 1).c_str(), nullptr, 10));

  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (colon == std::string::npos || inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    response.error = "need a numeric IPv4 host:port in " + url;
    return response;
  }
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    response.error = "cannot connect to " + host_port;
    close(fd);
    return response;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    response.error = "cannot send request";
    close(fd);
    return response;
  }
  std::string raw;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, n);
  close(fd);

  // "HTTP/1.x 200 OK\r\n...headers...\r\n\r\nbody"
  const auto header_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/", 0) != 0 || header_end == std::string::npos) {
    response.error = "no HTTP response from " + host_port;
    return response;
  }
  response.status = static_cast<int>(std::strtol(raw.c_str() + raw.find(' ') + 1, nullptr, 10));
  response.body = raw.substr(header_end + 4);
  return response;
}

}  // namespace alsim::testing
