// Typed configuration parameters, declared once where they are read.
//
// A component reads its spec with a ConfigReader:
//     ConfigReader r(json, "configs/tpu-v2-like.json");
//     spec.lanes = r.get_int("vector.lanes", 128, {1, 4096}, "lanes", "lanes of the vector unit");
//     ...
//     r.finish();   // throws on any key present in the file that nobody declared
// Every get_* records a ParamDecl (key, type, default, unit, range, description). Running the same
// reading code on a ConfigReader::schema() collects all declarations without a file: that list is
// `tessera config --schema`, so the documentation cannot drift from the code that reads.
//
// Keys are dotted paths into nested JSON objects ("mxu.rows"). Errors are tessera::Error naming
// the source and the key: wrong type, out of range, unknown key (with the closest known key).
// Files may contain // and /* */ comments (used to cite sources for published figures).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

struct ParamDecl {
  std::string key;
  std::string type;  // "int", "float", "bool", "string"
  std::string default_value;
  std::string unit;
  std::string range;  // e.g. "[1, 4096]" or "one of: a, b"
  std::string description;
};

template <typename T>
struct Range {
  T min;
  T max;
};

class ConfigReader {
 public:
  ConfigReader(nlohmann::json root, std::string source);
  // A reader with no file: every get returns its default; used to collect the schema.
  static ConfigReader schema();
  // Parses a JSON (with comments) file (common/file_io.h, common/json_parse.h): a missing, empty
  // or directory path, a syntax error or a number a double cannot hold names the file (and line
  // and column).
  static ConfigReader from_file(const std::string& path);
  static ConfigReader from_string(std::string_view text, std::string source);

  int64_t get_int(std::string_view key, int64_t def, Range<int64_t> range, std::string_view unit,
                  std::string_view description);
  double get_float(std::string_view key, double def, Range<double> range, std::string_view unit,
                   std::string_view description);
  bool get_bool(std::string_view key, bool def, std::string_view description);
  std::string get_string(std::string_view key, std::string def, std::vector<std::string> choices,
                         std::string_view description);

  // A cross-parameter constraint: throws naming `key` with `why` when `ok` is false.
  void require(bool ok, std::string_view key, std::string_view why) const;

  // Rejects every key in the document that no get_* declared. Call after reading everything.
  void finish() const;

  const std::vector<ParamDecl>& declarations() const { return m_decls; }
  const std::string& source() const { return m_source; }
  bool is_schema() const { return m_schema; }

 private:
  const nlohmann::json* find(std::string_view key) const;
  void declare(ParamDecl d);
  [[noreturn]] void fail(std::string_view key, const std::string& why) const;

  nlohmann::json m_root;
  std::string m_source;
  bool m_schema = false;
  std::vector<ParamDecl> m_decls;
};

// Renders declarations as an aligned text table (for `tessera config --schema`) or JSON.
std::string schema_to_text(const std::vector<ParamDecl>& decls);
nlohmann::json schema_to_json(const std::vector<ParamDecl>& decls);

}  // namespace tessera
