#include "client/command/flags.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

namespace alsim::command {

FlagParser::FlagParser(std::string command, std::vector<std::string> args)
    : command_(std::move(command)), args_(std::move(args)) {}

bool FlagParser::Next() {
  if (started_) ++index_;
  started_ = true;
  return index_ < args_.size();
}

std::string FlagParser::Value() {
  if (index_ + 1 >= args_.size()) Error(arg() + " needs a value");
  const std::string& flag = args_[index_];
  const std::string& value = args_[++index_];
  if (value.empty()) Error(flag + " needs a value");
  return value;
}

std::uint64_t FlagParser::UnsignedValue(std::uint64_t min, std::uint64_t max) {
  const std::string flag = arg();
  const std::string value = Value();
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(value.c_str(), &end, 10);
  if (std::isdigit(static_cast<unsigned char>(value[0])) == 0 || *end != '\0' || errno == ERANGE ||
      parsed < min || parsed > max) {
    Error(flag + " '" + value + "' is not an integer from " + std::to_string(min) + " to " +
          std::to_string(max));
  }
  return parsed;
}

double FlagParser::NumberValue(double min, double max) {
  const std::string flag = arg();
  const std::string value = Value();
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  if (*end != '\0' || !std::isfinite(parsed) || parsed < min || parsed > max) {
    char range[64];
    std::snprintf(range, sizeof range, "%g to %g", min, max);
    Error(flag + " '" + value + "' is not a number from " + range);
  }
  return parsed;
}

void FlagParser::Unexpected() const {
  if (IsFlag()) Error("unknown option '" + arg() + "'");
  Error("unexpected argument '" + arg() + "'");
}

void FlagParser::Error(const std::string& message) const {
  std::cerr << "alsim: " << command_ << ": " << message << "\nTry 'alsim " << command_
            << " --help'.\n";
  Leave(kExitUsage);
}

void Leave(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(code);
#else
  std::_Exit(code);
#endif
}

}  // namespace alsim::command
