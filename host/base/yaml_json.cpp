#include "host/base/yaml_json.hpp"

#include "common/terminal_text.hpp"
#include "common/utf8.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
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
  while (i < s.size() && dec(s[i])) {
    ++i;
    ++digits;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && dec(s[i])) {
      ++i;
      ++digits;
    }
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
  static const std::set<std::string_view> words = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                                   "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
  if (words.count(s)) return true;
  std::string_view t = s;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  if (t.empty() || !(dec(t[0]) || t[0] == '.')) return false;
  for (char c : t)
    if (!(dec(c) || c == '_' || c == ':' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  return true;
}

bool needs_quotes(std::string_view s) {
  return is_core_null(s) || is_core_true(s) || is_core_false(s) || is_core_int(s) || is_core_float(s) ||
         is_yaml11_special(s);
}

bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Whether a string may go out as a plain (unquoted) scalar. A whitelist, not a
// list of dangers: YAML 1.1 readers (PyYAML for cloud-init, go-yaml v2 for
// Kubernetes) give meaning to far more than YAML 1.2 does — timestamps
// (2001-12-14), binary and sexagesimal ints (0b1, 1:30), "=" and "<<" — so
// only words that no reader can take for anything but a string stay plain.
bool plain_ok(std::string_view s, bool in_flow) {
  if (s.empty() || needs_quotes(s)) return false;
  char const first = s.front();
  if (!(letter(first) || dec(first) || first == '/' || first == '_')) return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char const c = s[i];
    if (letter(c) || dec(c) || c == '.' || c == '_' || c == '/' || c == '-' || c == '+' || c == '@') continue;
    // ": " ends a key; older PyYAML refuses any ':' inside flow collections.
    if (c == ':' && !in_flow && s[i + 1] != ' ') continue;
    if (c == ' ' && s[i + 1] != ' ') continue;  // single inner spaces only
    return false;
  }
  // A leading digit: only <digits><letters> (100Gi, 64Gi), never a number,
  // version, date or time in some reader's eyes.
  if (dec(first)) {
    std::size_t i = 0;
    while (i < s.size() && dec(s[i])) ++i;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
      if (!letter(s[i])) return false;
  }
  return true;
}

// Whether a literal block ("|") carries the string exactly. Only printable
// ASCII and line breaks (so no raw tab, DEL or any Unicode line break), one
// final newline (clip chomping), a first line that starts with a visible
// character (else the reader guesses a different indentation) and no line
// ending in a blank.
bool literal_ok(std::string_view s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.front() == ' ' || s.front() == '\n') return false;
  if (s.find(" \n") != std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '\n' || (c >= 0x20 && c <= 0x7e); });
}

// The emitted text may hold only printable ASCII and line breaks: every other
// character went out as an escape in a double-quoted scalar. Anything else is
// a bug in this encoder, and must never become a document someone parses.
void check_emitted(std::string const& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto const u = static_cast<unsigned char>(text[i]);
    if (u != '\n' && (u < 0x20 || u > 0x7e))
      throw std::logic_error("YAML encoder: byte " + std::to_string(u) + " emitted raw at offset " + std::to_string(i));
  }
}

Json plain_scalar(std::string const& s) {
  if (is_core_null(s)) return nullptr;
  if (is_core_true(s)) return true;
  if (is_core_false(s)) return false;
  if (is_core_int(s)) {
    std::string_view v = s;
    int base = 10;
    bool neg = false;
    if (v[0] == '-' || v[0] == '+') {
      neg = v[0] == '-';
      v.remove_prefix(1);
    }
    if (v.substr(0, 2) == "0o") {
      base = 8;
      v.remove_prefix(2);
    } else if (v.substr(0, 2) == "0x") {
      base = 16;
      v.remove_prefix(2);
    }
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
    if (s.find("inf") != std::string::npos || s.find("Inf") != std::string::npos || s.find("INF") != std::string::npos)
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

  // `why` may quote a key of the document: escaped for the terminal.
  [[noreturn]] void fail(YAML::Node const& n, std::string const& why) {
    auto mark = n.Mark();
    throw HostErrorException(host_error(Errc::Spec, terminal_safe(origin) + " line " + std::to_string(mark.line + 1) +
                                                        ": " + terminal_safe(why)));
  }

  // The text was valid UTF-8, but yaml-cpp 0.7 can still hand back a string
  // that is not (it reads NUL + 'N' as the lone byte 0x85; job_spec_fuzz
  // found it). Every string we hold must be UTF-8 (JSON and our YAML writer
  // need it): check what the reader gives, not only what it was given.
  void check_text(YAML::Node const& n, std::string const& s) {
    if (!valid_utf8(s)) fail(n, "a string that is not valid UTF-8 (a NUL byte?)");
  }

  Json convert(YAML::Node const& n, int depth = 0) {
    if (depth > kMaxDepth) fail(n, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (++values > kMaxValues) fail(n, "more than " + std::to_string(kMaxValues) + " values (aliases expanding?)");
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: return nullptr;
      case YAML::NodeType::Scalar:
        scalar_bytes += n.Scalar().size();
        if (scalar_bytes > kMaxScalarBytes)
          fail(n, "more than " + std::to_string(kMaxScalarBytes >> 20) + " MiB of text (aliases expanding?)");
        check_text(n, n.Scalar());
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
          check_text(kv.first, key);
          if (obj.contains(key)) fail(kv.first, "duplicate key '" + key + "'");
          obj[key] = convert(kv.second, depth + 1);
        }
        return obj;
      }
    }
    return nullptr;
  }
};

// The writer is ours, not yaml-cpp's Emitter. Tested (yaml-cpp 0.7): even
// with EscapeNonAscii its double-quoted writer replaces Unicode
// noncharacters (U+FFFE, U+FDD0 ...) with U+FFFD — the data changes — and
// without it writes U+2028/U+2029 and DEL raw, and literal blocks raw. The
// subset we write (block mappings and sequences, one-line flow sequences,
// literal blocks, plain and double-quoted scalars) is small enough to own.

// A double-quoted scalar holding only printable ASCII: every other
// character is an escape (\x85, \u2028, \U0001f600 ...). Valid UTF-8 only
// (everything we hold was checked on the way in).
std::string double_quoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto escape = [](std::string& out, char kind, char32_t cp, int digits) {
    out += '\\';
    out += kind;
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
  };
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    auto const ch = utf8_decode(s.substr(i));
    if (ch.length == 0) throw std::logic_error("YAML encoder: a string is not valid UTF-8");
    char32_t const cp = ch.code_point;
    i += ch.length;
    if (cp == '"') out += "\\\"";
    else if (cp == '\\') out += "\\\\";
    else if (cp == '\n') out += "\\n";
    else if (cp == '\t') out += "\\t";
    else if (cp >= 0x20 && cp < 0x7F) out += static_cast<char>(cp);
    else if (cp < 0x100) escape(out, 'x', cp, 2);
    else if (cp < 0x10000) escape(out, 'u', cp, 4);
    else escape(out, 'U', cp, 8);
  }
  return out + "\"";
}

std::string scalar_text(Json const& v, bool in_flow) {
  switch (v.type()) {
    case Json::value_t::string: {
      auto const& s = v.get_ref<std::string const&>();
      return plain_ok(s, in_flow) ? s : double_quoted(s);
    }
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
    case Json::value_t::number_float: {
      // nlohmann prints the shortest round-tripping form; YAML 1.1 wants a
      // '.' in a float ("1e+300" would be a string there): "1.0e+300".
      std::string f = v.dump();
      if (f.find_first_of(".en") == std::string::npos) f += ".0";
      else if (f.find('.') == std::string::npos && f.find('e') != std::string::npos) f.insert(f.find('e'), ".0");
      return f;
    }
    default: return "null";
  }
}

// A list of one-line scalars reads best on one line: [a, b, c].
bool flow_sequence(Json const& v) {
  return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](Json const& item) {
           return item.is_primitive() &&
                  !(item.is_string() && item.get_ref<std::string const&>().find('\n') != std::string::npos);
         });
}

// The text of a value that fits on the line after "key:" or "-", if it does.
std::optional<std::string> one_line(Json const& v) {
  if (v.is_object() && v.empty()) return "{}";
  if (v.is_array() && v.empty()) return "[]";
  if (flow_sequence(v)) {
    std::string t = "[";
    for (auto const& item : v) t += (t.size() > 1 ? ", " : "") + scalar_text(item, true);
    return t + "]";
  }
  if (v.is_primitive() && !(v.is_string() && literal_ok(v.get_ref<std::string const&>()))) return scalar_text(v, false);
  return std::nullopt;
}

class Writer {
 public:
  std::string out;

  void document(Json const& v) {
    if (v.is_object() && !v.empty()) mapping(v, 0, false);
    else if (v.is_array() && !flow_sequence(v) && !v.empty()) sequence(v, 0, false);
    else if (v.is_string()) out += double_quoted(v.get_ref<std::string const&>()) + "\n";  // never at column 0 bare
    else out += *one_line(v) + "\n";
  }

 private:
  void indent(int n) { out.append(static_cast<std::size_t>(n), ' '); }

  // After "key:" or "-": the value on this line, or below it at `inner`.
  void value(Json const& v, int inner) {
    if (auto t = one_line(v)) {
      out += " " + *t + "\n";
    } else if (v.is_string()) {  // a literal block (literal_ok)
      out += " |\n";
      std::string_view s = v.get_ref<std::string const&>();
      s.remove_suffix(1);  // the final newline is the block's clip chomping
      for (std::size_t start = 0;;) {
        std::size_t const nl = s.find('\n', start);
        std::string_view const line =
            s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        if (!line.empty()) indent(inner);
        out.append(line);
        out += '\n';
        if (nl == std::string_view::npos) break;
        start = nl + 1;
      }
    } else {
      out += "\n";
      if (v.is_object()) mapping(v, inner, false);
      else sequence(v, inner, false);
    }
  }

  // first_inline: the first entry continues a line already started ("- ").
  void mapping(Json const& m, int at, bool first_inline) {
    bool first = true;
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!(first && first_inline)) indent(at);
      first = false;
      std::string const key = scalar_text(Json(it.key()), false);
      if (key.size() > 1000) {  // simple keys are limited to 1024 characters: an explicit key
        out += "? " + key + "\n";
        indent(at);
      } else {
        out += key;
      }
      out += ":";
      value(it.value(), at + 2);
    }
  }

  void sequence(Json const& s, int at, bool first_inline) {
    bool first = true;
    for (auto const& item : s) {
      if (!(first && first_inline)) indent(at);
      first = false;
      out += "-";
      if ((item.is_object() || item.is_array()) && !one_line(item)) {
        out += " ";
        if (item.is_object()) mapping(item, at + 2, true);
        else sequence(item, at + 2, true);
      } else {
        value(item, at + 2);
      }
    }
  }
};

// nlohmann's message: "[json.exception.parse_error.101] parse error at line
// L, column C: syntax error while parsing value - <what>; last read: '<the
// text it stopped in>'". The text may be an env value or a token: only the
// place and the (constant) kind of error are kept.
std::string json_syntax_error(std::string_view what) {
  std::string place;
  if (auto at = what.find(" at line "); at != std::string_view::npos) {
    auto const end = what.find(": ", at);
    if (end != std::string_view::npos) {
      place = std::string(what.substr(at + 4, end - at - 4));  // "line L, column C"
      what.remove_prefix(end + 2);
    }
  }
  if (auto read = what.find("; last read:"); read != std::string_view::npos) what = what.substr(0, read);
  if (place.empty()) return ": invalid JSON: " + terminal_safe(what);
  if (auto comma = place.find(", "); comma != std::string::npos) place.replace(comma, 2, " ");
  return " " + place + ": invalid JSON: " + terminal_safe(what);
}

// The parser's callback: it sees every key of every object at any depth, and
// throws at the second of two equal keys of one object, naming its path.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(std::string_view origin) : origin_(origin) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        where_.push_back(pending_key_);
        pending_key_.clear();
        keys_.emplace_back();
        break;
      case E::object_end:
      case E::array_end:
        keys_.pop_back();
        where_.pop_back();
        pending_key_.clear();
        break;
      case E::key: key(parsed.get<std::string>()); break;
      case E::value: pending_key_.clear(); break;
    }
    return true;
  }

 private:
  void key(std::string const& key) {
    if (!keys_.back().insert(key).second) {
      std::string path;
      for (std::size_t i = 1; i < where_.size(); ++i)
        if (!where_[i].empty()) path += where_[i] + ".";
      throw HostErrorException(
          host_error(Errc::Spec, terminal_safe(origin_) + ": duplicate key '" + terminal_safe(path + key) + "'"));
    }
    pending_key_ = key;
  }

  std::string_view origin_;
  std::vector<std::set<std::string>> keys_;  // one set per open object or array (arrays: unused)
  std::vector<std::string> where_;           // the path to the open container, for the message
  std::string pending_key_;
};

// JSON text, strictly: nlohmann keeps the last of two equal keys; YAML
// refuses them, and so must JSON: {"memory": "1Gi", "memory": "512Gi"} is a
// mistake either way.
Result<Json> parse_json_document(std::string_view text, std::string_view origin) {
  try {
    DuplicateKeys no_duplicates{origin};
    Json value = Json::parse(text.begin(), text.end(), std::ref(no_duplicates));  // iterative: any depth parses
    if (deeper_than(value, kMaxDepth))
      return host_error(Errc::Spec,
                        terminal_safe(origin) + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return value;
  } catch (nlohmann::json::parse_error const& e) {
    return host_error(Errc::Spec, terminal_safe(origin) + json_syntax_error(e.what()));
  } catch (nlohmann::json::exception const&) {  // out_of_range: its message quotes the number
    return host_error(Errc::Spec,
                      terminal_safe(origin) + ": invalid JSON: number overflow (a number past a double's range)");
  } catch (HostErrorException const& e) {
    return e.error;
  }
}

Result<Json> parse_yaml_document(std::string_view text, std::string_view origin) {
  // yaml-cpp passes any bytes through; JSON (and so everything we render) needs UTF-8.
  if (!valid_utf8(text))
    return host_error(Errc::Spec, terminal_safe(origin) + ": not valid UTF-8 (YAML and JSON text must be)");
  try {
    std::string const owned(text);
    std::size_t const docs = count_documents(owned, 2);
    if (docs != 1)
      return host_error(Errc::Spec, terminal_safe(origin) + ": expected one YAML document, found " +
                                        (docs == 0 ? "none" : "more than one"));
    Converter c{std::string(origin)};
    return c.convert(YAML::Load(owned));  // the first document only
  } catch (YAML::Exception const& e) {
    // yaml-cpp appends what it stopped at after ": " ("unknown escape
    // character: X", "invalid unicode: ..."): the place is enough.
    std::string const what = e.msg.substr(0, e.msg.find(": "));
    return host_error(Errc::Spec, terminal_safe(origin) + " line " + std::to_string(e.mark.line + 1) + " column " +
                                      std::to_string(e.mark.column + 1) + ": invalid YAML: " + terminal_safe(what));
  } catch (HostErrorException const& e) {
    return e.error;
  }
}

}  // namespace

Result<Json> parse_yaml_or_json(std::string_view text, std::string_view origin) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  // JSON may be indented with tabs, which YAML forbids: read JSON as JSON.
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
    return parse_json_document(text, origin);
  return parse_yaml_document(text, origin);
}

std::string to_yaml(Json const& value) {
  Writer w;
  w.document(value);
  check_emitted(w.out);
  return w.out;
}

std::string to_yaml_stream(std::vector<Json> const& docs) {
  std::string s;
  for (auto const& d : docs) s += "---\n" + to_yaml(d);
  return s;
}

}  // namespace cosmicac::host
