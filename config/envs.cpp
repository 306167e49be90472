// The ENVS grammar (docs/configuration.md, "ENVS"): a hand-written scanner,
// because the format is this project's own (inherited from the shell script).
#include "config/envs.hpp"

#include "common/utf8.hpp"
#include "config/fixed_text.hpp"
#include "config/js_literal.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace cosmicac::config {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// How parse_envs builds every error: the entry's position, its key only when
// that is a valid name (a mangled entry's "key" may be a piece of a value, as
// in `URL=postgres://u:pw;Secret@db/x?a=b`), and a reason made of a literal
// and numbers (entry_message is called by the three typed builders only).
// Nothing else of the input can reach the message.
Error entry_message(int entry, std::string_view key, std::string_view reason) {
  if (!is_env_name(key)) return make_error(Reason::ConfigInvalid, fmt::format("ENVS entry {}: {}", entry, reason));
  return make_error(Reason::ConfigInvalid, fmt::format("ENVS entry {} ({}): {}", entry, key, reason));
}
Error entry_error(int entry, std::string_view key, FixedText what) { return entry_message(entry, key, what.view()); }
Error entry_error(int entry, std::string_view key, LiteralProblem const& problem) {
  return entry_message(entry, key, describe(problem));
}
Error duplicate_error(int entry, std::string_view key, int first) {
  return entry_message(entry, key, fmt::format("duplicate key, first set in entry {}", first));
}

// A quoted value: '…' is literal, "…" honours \" and \\ (other backslashes are data).
bool unquote(std::string_view s, std::size_t& i, std::string& out) {
  char const q = s[i++];
  while (i < s.size()) {
    char const c = s[i++];
    if (c == q) return true;
    if (q == '"' && c == '\\' && i < s.size() && (s[i] == '"' || s[i] == '\\')) {
      out += s[i++];
    } else {
      out += c;
    }
  }
  return false;
}

}  // namespace

bool is_env_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (std::size_t k = 0; k < name.size(); ++k) {
    char const c = name[k];
    bool const alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(k > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<std::vector<std::string>> parse_envs(std::string_view s) {
  std::vector<std::string> env;
  std::unordered_map<std::string_view, int> first_entry;  // key → entry that set it (hashed: linear)
  std::size_t i = 0;
  int entry = 0;
  auto const n = s.size();
  for (;;) {
    while (i < n && (is_space(s[i]) || s[i] == ';')) ++i;  // trim; skip empty entries
    if (i >= n) break;
    ++entry;
    std::size_t const key_begin = i;
    while (i < n && s[i] != '=' && s[i] != ';') ++i;
    if (i >= n || s[i] == ';') return entry_error(entry, {}, "expected KEY=VALUE, found no '='");
    std::string_view const key = s.substr(key_begin, i - key_begin);
    if (!is_env_name(key)) return entry_error(entry, {}, "invalid variable name (must match [A-Za-z_][A-Za-z0-9_]*)");
    // Docker would silently keep one of the two: refuse, and say which entries.
    if (auto const [it, fresh] = first_entry.try_emplace(key, entry); !fresh)
      return duplicate_error(entry, key, it->second);
    ++i;  // '='

    std::string value;
    if (i < n && (s[i] == '{' || s[i] == '[')) {
      auto json = js_literal_to_json(s, i);
      if (auto const* problem = std::get_if<LiteralProblem>(&json)) return entry_error(entry, key, *problem);
      value = std::move(std::get<std::string>(json));
      while (i < n && is_space(s[i])) ++i;
      if (i < n && s[i] != ';') return entry_error(entry, key, "unexpected text after the literal (missing ';'?)");
    } else if (i < n && (s[i] == '"' || s[i] == '\'')) {
      if (!unquote(s, i, value)) return entry_error(entry, key, "unterminated quote");
      while (i < n && is_space(s[i])) ++i;
      if (i < n && s[i] != ';') return entry_error(entry, key, "text after the closing quote (quote the whole value)");
    } else {
      std::size_t const b = i;
      while (i < n && s[i] != ';') ++i;
      std::size_t e = i;
      while (e > b && is_space(s[e - 1])) --e;  // an entry's trailing whitespace is not data
      value.assign(s.substr(b, e - b));
    }
    if (value.find('\0') != std::string::npos) return entry_error(entry, key, "value contains a NUL byte");
    if (!valid_utf8(value)) return entry_error(entry, key, "value is not valid UTF-8");
    env.push_back(fmt::format("{}={}", key, value));
  }
  return env;
}

namespace {

// Whether parse_envs would read `v` back unchanged without quotes.
bool plain_is_exact(std::string_view v) {
  if (v.empty()) return true;
  char const first = v.front();
  if (first == '{' || first == '[' || first == '"' || first == '\'') return false;
  if (is_space(first) || is_space(v.back())) return false;
  return v.find(';') == std::string_view::npos;
}

std::string double_quote(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

Result<std::string> encode_envs(std::vector<std::pair<std::string, EnvValue>> const& vars) {
  std::string out;
  std::unordered_map<std::string_view, int> first_position;
  int position = 0;
  for (auto const& [key, val] : vars) {
    ++position;
    // Named only once it is known to be a name, as in parse_envs.
    if (!is_env_name(key))
      return make_error(Reason::ConfigInvalid, fmt::format("ENVS variable {}: invalid name", position));
    if (auto const [it, fresh] = first_position.try_emplace(key, position); !fresh)
      return make_error(Reason::ConfigInvalid, fmt::format("ENVS variable {} ({}): duplicate name, also variable {}",
                                                           position, key, it->second));
    std::string text;
    bool literal = false;
    if (auto const* j = std::get_if<nlohmann::json>(&val)) {
      try {
        text = j->dump();
      } catch (nlohmann::json::exception const&) {
        return make_error(Reason::ConfigInvalid, fmt::format("ENVS variable {} ({}): not valid UTF-8", position, key));
      }
      literal = j->is_object() || j->is_array();  // parse_envs re-emits their compact dump() exactly
    } else {
      text = std::get<std::string>(val);
    }
    if (!literal) {
      if (text.find('\0') != std::string::npos)
        return make_error(Reason::ConfigInvalid,
                          fmt::format("ENVS variable {} ({}): contains a NUL byte", position, key));
      if (!valid_utf8(text))
        return make_error(Reason::ConfigInvalid, fmt::format("ENVS variable {} ({}): not valid UTF-8", position, key));
      if (!plain_is_exact(text)) text = double_quote(text);
    }
    if (!out.empty()) out += ';';
    out += key;
    out += '=';
    out += text;
  }
  return out;
}

std::string envs_to_json_array(std::vector<std::string> const& env) {
  return nlohmann::json(env).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cosmicac::config
