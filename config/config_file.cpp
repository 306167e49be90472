// The KEY=VALUE file format, scanned by hand: it is a small, safe subset of
// shell assignment syntax, read as data (no library parses "shell without
// the shell"). Anything the shell would have expanded or executed ($, `,
// unquoted operators or spaces) is an error rather than a silent difference.
#include "config/config_file.hpp"

#include "config/envs.hpp"
#include "config/fixed_text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cosmicac::config {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

class Scanner {
 public:
  Scanner(std::string_view text, std::string_view origin) : s_(text), origin_(origin) {}

  Result<std::vector<ConfigEntry>> run() {
    if (auto const nul = s_.find('\0'); nul != std::string_view::npos) {
      auto const before = s_.substr(0, nul);
      return fail(1 + static_cast<int>(std::count(before.begin(), before.end(), '\n')), {}, "contains a NUL byte");
    }
    std::vector<ConfigEntry> entries;
    // Every entry has a '=' and a line of its own: reserving that bound once
    // saves the vector's regrowth, most of the time of a 1 MiB file of short
    // entries (bench/parse). Untouched reserved pages cost nothing.
    auto const bound = std::min(std::count(s_.begin(), s_.end(), '\n'), std::count(s_.begin(), s_.end(), '='));
    entries.reserve(static_cast<std::size_t>(bound) + 1);
    while (i_ < s_.size()) {
      skip_blanks();
      if (at_end()) break;
      if (s_[i_] == '\n') {
        next_line();
        continue;
      }
      if (s_[i_] == '#') {
        skip_comment();
        continue;
      }
      if (s_.substr(i_).starts_with("export") && i_ + 6 < s_.size() && is_blank(s_[i_ + 6]) && s_[i_ + 6] != '\r') {
        i_ += 6;
        skip_blanks();
      }
      ConfigEntry e;
      e.line = line_;
      if (at_end() || !is_name_start(s_[i_])) return fail(e.line, "", "expected KEY=VALUE");
      while (!at_end() && is_name_char(s_[i_])) e.key += s_[i_++];
      // Not followed by '=', the word is no key and may be a stray piece of a
      // value (an unquoted multi-line secret): not named.
      if (at_end() || s_[i_] != '=')
        return fail(e.line, {}, "expected KEY=VALUE with '=' right after the key (no spaces around '=')");
      ++i_;
      if (auto st = value(e); !st) return st.error();
      entries.push_back(std::move(e));
    }
    return entries;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  void skip_blanks() {
    while (!at_end() && is_blank(s_[i_])) ++i_;
  }
  void skip_comment() {
    while (!at_end() && s_[i_] != '\n') ++i_;
  }
  void next_line() {
    ++i_;
    ++line_;
  }

  // Every error: origin, line, the key only when it is a name, a fixed reason.
  // Nothing else of the text can reach the message.
  Error fail(int line, std::string_view key, FixedText what) const {
    if (!is_env_name(key))
      return make_error(Reason::ConfigInvalid, fmt::format("{} line {}: {}", origin_, line, what.view()));
    return make_error(Reason::ConfigInvalid, fmt::format("{} line {}: {}: {}", origin_, line, key, what.view()));
  }

  // One shell word made of unquoted, '…' and "…" parts, then optional blanks
  // and a comment up to the end of the line.
  Status value(ConfigEntry& e) {
    std::string& v = e.value;
    for (;;) {
      if (at_end() || s_[i_] == '\n') return ok();
      char const c = s_[i_];
      if (is_blank(c)) {
        skip_blanks();
        if (at_end() || s_[i_] == '\n') return ok();
        if (s_[i_] == '#') {
          skip_comment();
          return ok();
        }
        return fail(e.line, e.key, "unquoted whitespace in the value (quote the value)");
      }
      ++i_;
      switch (c) {
        case '\'': {
          std::size_t const end = s_.find('\'', i_);
          if (end == std::string_view::npos) return fail(e.line, e.key, "unterminated single quote");
          for (; i_ < end; ++i_) {
            if (s_[i_] == '\n') ++line_;
            v += s_[i_];
          }
          ++i_;
          break;
        }
        case '"':
          if (auto st = double_quoted(e); !st) return st;
          break;
        case '\\':
          if (at_end()) return fail(e.line, e.key, "backslash at the end of the file");
          if (s_[i_] == '\n') {
            ++line_;  // line continuation
          } else {
            v += s_[i_];
          }
          ++i_;
          break;
        case '$':
        case '`':
          return fail(e.line, e.key, "shell expansion ($ or `) is not supported (use single quotes or escape it)");
        case ';':
        case '&':
        case '|':
        case '<':
        case '>':
        case '(':
        case ')': return fail(e.line, e.key, "unquoted shell operator in the value (quote the value)");
        default: v += c;
      }
    }
  }

  Status double_quoted(ConfigEntry& e) {
    std::string& v = e.value;
    for (;;) {
      if (at_end()) return fail(e.line, e.key, "unterminated double quote");
      char const c = s_[i_++];
      if (c == '"') return ok();
      if (c == '\n') ++line_;
      if (c == '$' || c == '`')
        return fail(e.line, e.key, "shell expansion ($ or `) is not supported (use single quotes or escape it)");
      if (c != '\\') {
        v += c;
        continue;
      }
      if (at_end()) return fail(e.line, e.key, "unterminated double quote");
      char const x = s_[i_++];
      switch (x) {
        case '"':
        case '\\':
        case '$':
        case '`': v += x; break;
        case 'n': v += '\n'; break;
        case '\n': ++line_; break;  // line continuation, as in the shell
        default:                    // the shell keeps other backslashes
          v += '\\';
          v += x;
      }
    }
  }

  std::string_view s_;
  std::string_view origin_;
  std::size_t i_ = 0;
  int line_ = 1;
};

bool is_bare_safe(char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_':
    case '-':
    case '.':
    case '/':
    case ':':
    case '@':
    case '%':
    case '+':
    case ',':
    case '=': return true;
    default: return false;
  }
}

std::string quote_value(std::string_view v) {
  bool bare = !v.empty();
  bool single_ok = true;
  for (char c : v) {
    if (!is_bare_safe(c)) bare = false;
    auto const u = static_cast<unsigned char>(c);
    if (c == '\'' || u < 0x20 || u == 0x7F) single_ok = false;
  }
  if (bare) return std::string(v);
  if (single_ok) return fmt::format("'{}'", v);
  std::string out = "\"";
  for (char c : v) {
    switch (c) {
      case '"':
      case '\\':
      case '$':
      case '`':
        out += '\\';
        out += c;
        break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

Result<std::vector<ConfigEntry>> parse_config_file(std::string_view text, std::string_view origin) {
  return Scanner(text, origin).run();
}

std::string encode_config_file(std::vector<std::pair<std::string, std::string>> const& entries,
                               std::string_view header_comment) {
  std::string out;
  std::size_t b = 0;
  while (b < header_comment.size()) {
    std::size_t e = header_comment.find('\n', b);
    if (e == std::string_view::npos) e = header_comment.size();
    std::string_view const line = header_comment.substr(b, e - b);
    out += line.empty() ? "#\n" : fmt::format("# {}\n", line);
    b = e + 1;
  }
  for (auto const& [key, value] : entries) out += fmt::format("{}={}\n", key, quote_value(value));
  return out;
}

}  // namespace cosmicac::config
