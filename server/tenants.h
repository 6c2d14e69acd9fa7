// Who is calling: bearer tokens (--auth-tokens FILE) name the tenant that owns what a call
// creates and the only instances it can see. Without a token file every caller is the one
// anonymous tenant "" (a server for one team).
//
// The file holds one "TOKEN TENANT" pair per line; blank lines and lines starting with '#' are
// skipped. Tokens are compared in constant time, so response times do not reveal how much of a
// guessed token was right.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/server_context.h>

namespace alsim::server {

class TenantDirectory {
 public:
  // Reads a token file; null with *error naming the file and line when it cannot be used.
  static std::unique_ptr<TenantDirectory> Load(const std::string& path, std::string* error);
  // From pairs (tests).
  static std::unique_ptr<TenantDirectory> FromPairs(
      const std::vector<std::pair<std::string, std::string>>& token_tenant, std::string* error);

  // The tenant of the call's "authorization: Bearer TOKEN" metadata; UNAUTHENTICATED when it is
  // missing or unknown (the message never repeats the token).
  grpc::Status Authenticate(const grpc::ServerContextBase& context, std::string* tenant) const;

  std::size_t tenants() const;

 private:
  std::vector<std::pair<std::string, std::string>> tokens_;  // token -> tenant
};

}  // namespace alsim::server
