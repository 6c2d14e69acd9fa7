// The one table of solver options: every field of SolverOptions a user can set, with its name,
// type, range, default and documentation. The engine validates options against it
// (ValidateSolverOptions, called by Step), and the CLI (`alsim run` flags, JSON keys), the server
// (SolverConfig's fields and its `parameters` map) and their documentation all read it instead of
// keeping copies; tests check `alsim run --help`, the proto's comments and README against it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/solver/solver_options.h"

namespace alsim {

enum class SolverOptionKind {
  kInteger,  // a whole number in [lower, upper]
  kNumber,   // a finite real in the range, each end open or closed
  kBoolean,  // on/off (also true/false, 1/0)
  kChoice,   // one of `choices`
};

struct SolverOptionSpec {
  const char* name;     // SolverConfig field or `parameters` key, JSON key: "relaxation"
  const char* flag;     // `alsim run` flag: "--relaxation"
  const char* metavar;  // the flag's value in help: "A"
  const char* solvers;  // who reads it: "all", or solver names joined by ", "
  SolverOptionKind kind;
  double lower = 0;  // kInteger, kNumber: the range
  double upper = 0;
  bool lower_open = false;  // kNumber: lower itself is out of range
  bool upper_open = false;
  const char* choices = "";  // kChoice: the names, ", "-separated
  const char* doc = "";      // one sentence, without the range or the default
  // Reads and writes the field. Numbers and integers travel as double (integers are exact);
  // choices and booleans as text.
  std::string (*get)(const SolverOptions&) = nullptr;
  // Writes an already validated value.
  void (*set)(SolverOptions*, std::string_view) = nullptr;
  // kInteger, kNumber: the value as a number (validation without text); null otherwise.
  double (*number)(const SolverOptions&) = nullptr;
};

// Every option, shared ones first, then each solver's, in a fixed order.
const std::vector<SolverOptionSpec>& SolverOptionTable();

// The option of that name or flag ("relaxation" or "--relaxation"); null for none.
const SolverOptionSpec* FindSolverOption(std::string_view name_or_flag);

// Parses `text` as a value of `spec` and stores it in *options; on error returns a message naming
// the option, the text and the valid range, and leaves *options unchanged. Empty on success.
std::string SetSolverOption(const SolverOptionSpec& spec, std::string_view text,
                            SolverOptions* options);

// The current value as text, in the form SetSolverOption parses ("1.6", "delassus", "on").
std::string SolverOptionValue(const SolverOptionSpec& spec, const SolverOptions& options);

// The valid range in words: "(0, 2)", "0 to 8", "at least 1", "delassus or pseudo-density",
// "on or off".
std::string SolverOptionRange(const SolverOptionSpec& spec);

// The default value as text (SolverOptionValue of SolverOptions{}).
std::string SolverOptionDefault(const SolverOptionSpec& spec);

// Empty when every option is in its range; otherwise a message naming the first that is not.
std::string ValidateSolverOptions(const SolverOptions& options);

// "subadmm, pgs, admm-nosub or admm-nobody": the registered solvers' names.
std::string SolverNameList();

}  // namespace alsim
