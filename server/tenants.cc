#include "server/tenants.h"

#include <fstream>
#include <set>
#include <sstream>

namespace alsim::server {
namespace {

// Equal bytes, in time that depends on the lengths only.
bool ConstantTimeEqual(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < n; ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

}  // namespace

std::unique_ptr<TenantDirectory> TenantDirectory::FromPairs(
    const std::vector<std::pair<std::string, std::string>>& token_tenant, std::string* error) {
  auto directory = std::unique_ptr<TenantDirectory>(new TenantDirectory());
  std::set<std::string> seen;
  for (const auto& [token, tenant] : token_tenant) {
    if (token.size() < 16) {
      *error = "a token for tenant '" + tenant + "' is shorter than 16 characters";
      return nullptr;
    }
    if (tenant.empty()) {
      *error = "a token has no tenant";
      return nullptr;
    }
    if (!seen.insert(token).second) {
      *error = "a token is given twice (tenant '" + tenant + "')";
      return nullptr;
    }
    directory->tokens_.emplace_back(token, tenant);
  }
  if (directory->tokens_.empty()) {
    *error = "no tokens";
    return nullptr;
  }
  return directory;
}

std::unique_ptr<TenantDirectory> TenantDirectory::Load(const std::string& path,
                                                       std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read the token file " + path;
    return nullptr;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string token, tenant, extra;
    if (!(fields >> token) || token[0] == '#') continue;
    if (!(fields >> tenant) || (fields >> extra)) {
      *error = path + ":" + std::to_string(number) + ": expected 'TOKEN TENANT'";
      return nullptr;
    }
    pairs.emplace_back(token, tenant);
  }
  auto directory = FromPairs(pairs, error);
  if (directory == nullptr) *error = path + ": " + *error;
  return directory;
}

std::size_t TenantDirectory::tenants() const {
  std::set<std::string> names;
  for (const auto& pair : tokens_) names.insert(pair.second);
  return names.size();
}

grpc::Status TenantDirectory::Authenticate(const grpc::ServerContextBase& context,
                                           std::string* tenant) const {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            "this server needs a token: send the metadata 'authorization: Bearer TOKEN' "
            "(clients: --token or $ALSIM_TOKEN)"};
  }
  const std::string value(found->second.data(), found->second.size());
  const std::string prefix = "Bearer ";
  if (value.compare(0, prefix.size(), prefix) != 0) {
    return {grpc::StatusCode::UNAUTHENTICATED, "the authorization metadata must be 'Bearer TOKEN'"};
  }
  const std::string token = value.substr(prefix.size());
  const std::string* match = nullptr;
  for (const auto& [known, owner] : tokens_) {
    if (ConstantTimeEqual(token, known)) match = &owner;  // no early exit
  }
  if (match == nullptr) return {grpc::StatusCode::UNAUTHENTICATED, "unknown token"};
  *tenant = *match;
  return grpc::Status::OK;
}

}  // namespace alsim::server
