// A minimal writer for one JSON object (string, number, boolean and array values; nested objects
// and arrays of them through Raw and RawArray), enough for the CLI's machine-readable output
// without a JSON library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace alsim::cli {

class JsonObjectWriter {
 public:
  void String(const std::string& key, const std::string& value) {
    Key(key);
    AppendQuoted(value);
  }
  void Int(const std::string& key, std::int64_t value) {
    Key(key);
    text_ += std::to_string(value);
  }
  void Bool(const std::string& key, bool value) {
    Key(key);
    text_ += value ? "true" : "false";
  }
  void Double(const std::string& key, double value) {
    Key(key);
    AppendDouble(value);
  }
  void DoubleArray(const std::string& key, const std::vector<double>& values) {
    Key(key);
    text_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) text_ += ',';
      AppendDouble(values[i]);
    }
    text_ += ']';
  }

  void UInt(const std::string& key, std::uint64_t value) {
    Key(key);
    text_ += std::to_string(value);
  }
  void UIntArray(const std::string& key, const std::vector<std::uint64_t>& values) {
    Key(key);
    text_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += std::to_string(values[i]);
    }
    text_ += ']';
  }
  void StringArray(const std::string& key, const std::vector<std::string>& values) {
    Key(key);
    text_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) text_ += ',';
      AppendQuoted(values[i]);
    }
    text_ += ']';
  }
  // An array of JSON values already written, e.g. objects from other writers' Finish().
  void RawArray(const std::string& key, const std::vector<std::string>& json_values) {
    Key(key);
    text_ += '[';
    for (size_t i = 0; i < json_values.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += json_values[i];
    }
    text_ += ']';
  }

  // A JSON value already written, e.g. an object from another writer's Finish().
  void Raw(const std::string& key, const std::string& json_value) {
    Key(key);
    text_ += json_value;
  }

  // The object, closed, without a trailing newline.
  std::string Finish() const { return "{" + text_ + "}"; }

 private:
  void Key(const std::string& key) {
    if (!text_.empty()) text_ += ',';
    AppendQuoted(key);
    text_ += ':';
  }

  // %.17g round-trips every double exactly; JSON has no NaN or infinity, so those become null.
  void AppendDouble(double value) {
    if (!std::isfinite(value)) {
      text_ += "null";
      return;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.17g", value);
    text_ += buffer;
  }

  void AppendQuoted(const std::string& value) {
    text_ += '"';
    for (const char c : value) {
      switch (c) {
        case '"':
          text_ += "\\\"";
          break;
        case '\\':
          text_ += "\\\\";
          break;
        case '\n':
          text_ += "\\n";
          break;
        case '\r':
          text_ += "\\r";
          break;
        case '\t':
          text_ += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char escape[8];
            std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(c));
            text_ += escape;
          } else {
            text_ += c;  // UTF-8 passes through unchanged, as JSON allows
          }
      }
    }
    text_ += '"';
  }

  std::string text_;
};

}  // namespace alsim::cli
