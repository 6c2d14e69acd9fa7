// A minimal blocking HTTP/1.0 GET over TCP, enough to scrape a Prometheus endpoint in tests.
#pragma once

#include <string>

namespace alsim::testing {

struct HttpResponse {
  int status = 0;  // 0 when the request failed before a status line arrived
  std::string body;
  std::string error;  // why it failed, when status == 0
};

// `url` must be http://host:port/path with a numeric IPv4 host.
HttpResponse HttpGet(const std::string& url, int timeout_seconds = 5);

}  // namespace alsim::testing
