// Reading a mapping of typed fields (job spec, operator profile): shared by
// job_spec.cpp and operator_profile.cpp only, not an interface of the host
// library. Errors are thrown as SpecError {field path, message} and turned
// into one Errc::Spec error by spec_error().
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/kube_names.hpp"
#include "host/base/yaml_json.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace cosmicac::host::spec_detail {

struct SpecError {
  std::string field;
  std::string message;
};

[[noreturn]] void fail(std::string field, std::string message);

// "<origin>: <field>: <message>", every part through the terminal escaper:
// field paths are made of the document's keys, and a message may quote a
// value the document gave.
HostError spec_error(std::string_view origin, SpecError const& e);

bool is_resource_suffix(std::string_view s);  // the name part of nvidia.com/<this>
void check_image(std::string const& field, std::string const& image);
void check_subdomain(std::string const& field, std::string const& value);

// Reads one JSON object, remembering which keys were used so that unknown
// keys (typos) are reported instead of silently ignored. With `classified`,
// every key read must pass it (a field the parser reads but nobody
// classified is a bug: std::logic_error).
class Fields {
 public:
  using Classifier = bool (*)(std::string const& path);
  Fields(Json const& obj, std::string prefix, Classifier classified = nullptr);

  std::string path(std::string const& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  Json const* get(std::string const& key);
  std::optional<std::string> str(std::string const& key);  // non-empty, one line
  std::string required_str(std::string const& key);
  std::optional<long long> integer(std::string const& key, long long lo, long long hi);
  std::optional<std::string> quantity(std::string const& key);  // "100Gi" or a bare number of bytes
  std::optional<Fields> object(std::string const& key);
  void no_unknown_keys() const;

 private:
  Json const& obj_;
  std::string prefix_;
  Classifier classified_;
  std::set<std::string> used_;
};

}  // namespace cosmicac::host::spec_detail
