#include "host/yaml_json.hpp"

#include "config/utf8.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace cosmicac::host {
namespace {

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s)
    if (!pred(c)) return false;
  return true;
}
bool dec(char c) { return c >= '0' && c <= '9'; }
bool oct(char c) { return c >= '0' && c <= '7'; }
bool hex(char c) { return dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool is_core_null(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }
bool is_core_true(std::string_view s) { return s == "true" || s == "True" || s == "TRUE"; }
bool is_core_false(std::string_view s) { return s == "false" || s == "False" || s == "FALSE"; }

bool is_core_int(std::string_view s) {
  if (s.size() > 2 && s.substr(0, 2) == "0o") return all_of(s.substr(2), oct);
  if (s.size() > 2 && s.substr(0, 2) == "0x") return all_of(s.substr(2), hex);
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return all_of(s, dec);
}

bool is_core_float(std::string_view s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "-.inf" || s == ".nan" || s == ".NaN" ||
      s == ".NAN")
    return true;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  std::size_t i = 0, digits = 0;
  while (i < s.size() && dec(s[i])) { ++i; ++digits; }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && dec(s[i])) { ++i; ++digits; }
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (i == s.size()) return false;
    while (i < s.size() && dec(s[i])) ++i;
  }
  return i == s.size();
}

// What Kubernetes' own YAML reader (go-yaml v2, YAML 1.1) would also retype:
// yes/no/on/off, and numbers with '_' or ':' (sexagesimal) or leading zeros.
bool is_yaml11_special(std::string_view s) {
  static const std::set<std::string_view> words = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                                   "on", "On", "ON", "off", "Off", "OFF"};
  if (words.count(s)) return true;
  std::string_view t = s;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  if (t.empty() || !(dec(t[0]) || t[0] == '.')) return false;
  for (char c : t)
    if (!(dec(c) || c == '_' || c == ':' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  return true;
}

// YAML streams may not carry C0 controls (other than tab and line breaks) or
// DEL raw; double quotes are the only style that can escape them.
bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto const u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\n') || u == 0x7f;
  });
}

bool needs_quotes(std::string_view s) {
  if (has_control(s)) return true;
  return is_core_null(s) || is_core_true(s) || is_core_false(s) || is_core_int(s) || is_core_float(s) ||
         is_yaml11_special(s);
}

Json plain_scalar(std::string const& s) {
  if (is_core_null(s)) return nullptr;
  if (is_core_true(s)) return true;
  if (is_core_false(s)) return false;
  if (is_core_int(s)) {
    std::string_view v = s;
    int base = 10;
    bool neg = false;
    if (v[0] == '-' || v[0] == '+') { neg = v[0] == '-'; v.remove_prefix(1); }
    if (v.substr(0, 2) == "0o") { base = 8; v.remove_prefix(2); }
    else if (v.substr(0, 2) == "0x") { base = 16; v.remove_prefix(2); }
    std::uint64_t u = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), u, base);
    if (ec == std::errc() && p == v.data() + v.size()) {
      if (!neg) {
        if (u <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(u);
        return u;
      }
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) return -static_cast<std::int64_t>(u);
    }
    // Out of range: fall through to a float, as YAML readers do.
  }
  if (is_core_float(s) || is_core_int(s)) {
    if (s.find("inf") != std::string::npos || s.find("Inf") != std::string::npos ||
        s.find("INF") != std::string::npos)
      return s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    if (s.find("nan") != std::string::npos || s.find("NaN") != std::string::npos || s.find("NAN") != std::string::npos)
      return std::nan("");
    return std::strtod(s.c_str(), nullptr);
  }
  return s;
}

// A job spec is a few hundred values, a handful of levels deep. The limits
// keep a hostile one from exhausting memory through YAML aliases (each alias
// expands to a full copy: "billion laughs", of values or of long strings) or
// the stack through nesting (conversion, emission and comparison all recurse).
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxValues = 100'000;
// Everything rendered ends up in Kubernetes objects (etcd's limit is 1.5 MiB).
constexpr std::size_t kMaxScalarBytes = 2u << 20;

bool deeper_than(Json const& v, int limit) {
  if (!v.is_structured()) return false;
  if (limit == 0) return true;
  for (auto const& item : v)
    if (deeper_than(item, limit - 1)) return true;
  return false;
}

// Counts the documents of a YAML stream, stopping at `at_most`. Not
// YAML::LoadAll: yaml-cpp 0.7's can return documents without end on some
// malformed streams (job_spec_fuzz found '"a",\n0b'), growing until memory
// runs out; the event parser stops where we tell it to.
struct IgnoreEvents : YAML::EventHandler {
  void OnDocumentStart(YAML::Mark const&) override {}
  void OnDocumentEnd() override {}
  void OnNull(YAML::Mark const&, YAML::anchor_t) override {}
  void OnAlias(YAML::Mark const&, YAML::anchor_t) override {}
  void OnScalar(YAML::Mark const&, std::string const&, YAML::anchor_t, std::string const&) override {}
  void OnSequenceStart(YAML::Mark const&, std::string const&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(YAML::Mark const&, std::string const&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::size_t count_documents(std::string const& text, std::size_t at_most) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  IgnoreEvents ignore;
  std::size_t n = 0;
  while (n < at_most && parser.HandleNextDocument(ignore)) ++n;
  return n;
}

struct Converter {
  std::string origin;
  std::size_t values = 0;
  std::size_t scalar_bytes = 0;

  [[noreturn]] void fail(YAML::Node const& n, std::string const& why) {
    auto mark = n.Mark();
    throw ErrorException(make_error(Reason::ConfigInvalid, origin + " line " + std::to_string(mark.line + 1) + ": " + why));
  }

  Json convert(YAML::Node const& n, int depth = 0) {
    if (depth > kMaxDepth) fail(n, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (++values > kMaxValues)
      fail(n, "more than " + std::to_string(kMaxValues) + " values (aliases expanding?)");
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        scalar_bytes += n.Scalar().size();
        if (scalar_bytes > kMaxScalarBytes)
          fail(n, "more than " + std::to_string(kMaxScalarBytes >> 20) + " MiB of text (aliases expanding?)");
        if (n.Tag() == "?") return plain_scalar(n.Scalar());
        return n.Scalar();  // quoted ("!") or explicitly tagged: a string
      case YAML::NodeType::Sequence: {
        Json arr = Json::array();
        for (auto const& item : n) arr.push_back(convert(item, depth + 1));
        return arr;
      }
      case YAML::NodeType::Map: {
        Json obj = Json::object();
        for (auto const& kv : n) {
          if (!kv.first.IsScalar()) fail(kv.first, "mapping keys must be scalars");
          std::string key = kv.first.Scalar();
          if (obj.contains(key)) fail(kv.first, "duplicate key '" + key + "'");
          obj[key] = convert(kv.second, depth + 1);
        }
        return obj;
      }
    }
    return nullptr;
  }
};

void emit(YAML::Emitter& out, Json const& v) {
  switch (v.type()) {
    case Json::value_t::object:
      if (v.empty()) { out << YAML::Flow << YAML::BeginMap << YAML::EndMap; break; }
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key;
        if (needs_quotes(it.key())) out << YAML::DoubleQuoted;
        out << it.key() << YAML::Value;
        emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case Json::value_t::array:
      if (v.empty()) { out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq; break; }
      // A list of one-line scalars reads best on one line: [a, b, c].
      if (std::all_of(v.begin(), v.end(), [](Json const& item) {
            return item.is_primitive() && !(item.is_string() && item.get_ref<std::string const&>().find('\n') !=
                                                                   std::string::npos);
          }))
        out << YAML::Flow;
      out << YAML::BeginSeq;
      for (auto const& item : v) emit(out, item);
      out << YAML::EndSeq;
      break;
    case Json::value_t::string: {
      auto const& s = v.get_ref<std::string const&>();
      // A literal block keeps exactly one trailing newline ("clip" chomping)
      // and cannot start with a space: use it only when that is what we have.
      bool literal = s.find('\n') != std::string::npos && s.back() == '\n' &&
                     (s.size() < 2 || s[s.size() - 2] != '\n') && s.front() != ' ' && !has_control(s) &&
                     s.find(" \n") == std::string::npos;
      if (literal) out << YAML::Literal;
      else if (needs_quotes(s) || s.find('\n') != std::string::npos) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case Json::value_t::boolean:
      out << v.get<bool>();
      break;
    case Json::value_t::number_integer:
      out << v.get<std::int64_t>();
      break;
    case Json::value_t::number_unsigned:
      out << v.get<std::uint64_t>();
      break;
    case Json::value_t::number_float:
      out << v.dump();  // nlohmann prints the shortest round-tripping form
      break;
    case Json::value_t::null:
    case Json::value_t::discarded:
    case Json::value_t::binary:
      out << YAML::Null;
      break;
  }
}

}  // namespace

Result<Json> parse_yaml_or_json(std::string_view text, std::string_view origin) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  // JSON may be indented with tabs, which YAML forbids: read JSON as JSON.
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    try {
      Json value = Json::parse(text.begin(), text.end());  // iterative: any depth parses
      if (deeper_than(value, kMaxDepth))
        return make_error(Reason::ConfigInvalid,
                          std::string(origin) + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
      return value;
    } catch (nlohmann::json::exception const& e) {  // parse_error, and out_of_range for a number past double
      return make_error(Reason::ConfigInvalid, std::string(origin) + ": invalid JSON: " + e.what());
    }
  }
  // yaml-cpp passes any bytes through; JSON (and so everything we render) needs UTF-8.
  if (!config::valid_utf8(text))
    return make_error(Reason::ConfigInvalid, std::string(origin) + ": not valid UTF-8 (YAML and JSON text must be)");
  try {
    std::string const owned(text);
    std::size_t const docs = count_documents(owned, 2);
    if (docs != 1)
      return make_error(Reason::ConfigInvalid, std::string(origin) + ": expected one YAML document, found " +
                                                   (docs == 0 ? "none" : "more than one"));
    Converter c{std::string(origin)};
    return c.convert(YAML::Load(owned));  // the first document only
  } catch (YAML::Exception const& e) {
    return make_error(Reason::ConfigInvalid, std::string(origin) + " line " + std::to_string(e.mark.line + 1) +
                                                 ": invalid YAML: " + e.msg);
  } catch (ErrorException const& e) {
    return e.error;
  }
}

std::string to_yaml(Json const& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetNullFormat(YAML::LowerNull);
  emit(out, value);
  std::string s = out.c_str();
  // yaml-cpp escapes every C0 control in double quotes but writes DEL raw,
  // which YAML does not allow. Every string holding one was double-quoted
  // (needs_quotes), and a raw byte is never part of an escape there.
  for (std::size_t at = s.find('\x7f'); at != std::string::npos; at = s.find('\x7f', at))
    s.replace(at, 1, "\\x7F");
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

std::string to_yaml_stream(std::vector<Json> const& docs) {
  std::string s;
  for (auto const& d : docs) s += "---\n" + to_yaml(d);
  return s;
}

}  // namespace cosmicac::host
