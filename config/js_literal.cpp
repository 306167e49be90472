// Hand-written: nlohmann::json parses strict JSON only and re-formats numbers;
// the ENVS dialect needs bare keys/words and number text kept verbatim.
#include "config/js_literal.hpp"

#include "common/utf8.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <unordered_set>

namespace cosmicac::config {
namespace {

constexpr int kMaxDepth = 64;  // ample for configuration, bounded for the stack

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Characters that end a bare word. Inside a value a bare word may contain ':'
// (so `{url:http://h:8080/x}` works); a bare key ends at the first ':'.
bool ends_word(char c, bool key) {
  if (is_space(c)) return true;
  switch (c) {
    case ',':
    case '{':
    case '}':
    case '[':
    case ']': return true;
    case ':': return key;
    default: return false;
  }
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80U) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800U) {
    out += static_cast<char>(0xC0U | (cp >> 6U));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  } else if (cp < 0x10000U) {
    out += static_cast<char>(0xE0U | (cp >> 12U));
    out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  } else {
    out += static_cast<char>(0xF0U | (cp >> 18U));
    out += static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU));
    out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  }
}

class Parser {
 public:
  Parser(std::string_view s, std::size_t start) : s_(s), i_(start), start_(start) {}

  bool run() { return value(0); }
  std::size_t pos() const { return i_; }
  std::string& out() { return out_; }
  LiteralProblem const& problem() const { return *problem_; }

 private:
  bool fail(FixedText what) {
    problem_ = LiteralProblem{what, i_ - start_};
    return false;
  }
  bool at_end() const { return i_ >= s_.size(); }
  void skip_space() {
    while (!at_end() && is_space(s_[i_])) ++i_;
  }

  bool value(int depth) {
    skip_space();
    if (at_end()) return fail("unterminated literal");
    char const c = s_[i_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth) return fail("nesting too deep");
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c == '"' || c == '\'') {
      std::string str;
      return quoted(str) && emit_string(str);
    }
    if (ends_word(c, false)) return fail("expected a value");
    std::string_view const w = word(false);
    if (w == "true" || w == "false" || w == "null" || is_json_number(w)) {
      out_ += w;
      return true;
    }
    return emit_string(std::string(w));
  }

  bool object(int depth) {
    ++i_;
    out_ += '{';
    std::unordered_set<std::string> keys;  // not a linear search: 100k keys must stay cheap
    for (bool first = true;; first = false) {
      skip_space();
      if (at_end()) return fail("unterminated object");
      if (s_[i_] == '}') break;  // empty object, or after a trailing comma
      if (!first) out_ += ',';
      std::string key;
      if (s_[i_] == '"' || s_[i_] == '\'') {
        if (!quoted(key)) return false;
      } else if (ends_word(s_[i_], true)) {
        return fail("expected a key");
      } else {
        key = word(true);
      }
      if (!emit_string(key)) return false;
      if (!keys.insert(std::move(key)).second) return fail("duplicate key");
      skip_space();
      if (at_end() || s_[i_] != ':') return fail("expected ':' after a key");
      ++i_;
      out_ += ':';
      if (!value(depth)) return false;
      skip_space();
      if (at_end()) return fail("unterminated object");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] != '}') return fail("expected ',' or '}'");
      break;
    }
    ++i_;
    out_ += '}';
    return true;
  }

  bool array(int depth) {
    ++i_;
    out_ += '[';
    for (bool first = true;; first = false) {
      skip_space();
      if (at_end()) return fail("unterminated array");
      if (s_[i_] == ']') break;
      if (!first) out_ += ',';
      if (!value(depth)) return false;
      skip_space();
      if (at_end()) return fail("unterminated array");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] != ']') return fail("expected ',' or ']'");
      break;
    }
    ++i_;
    out_ += ']';
    return true;
  }

  std::string_view word(bool key) {
    std::size_t const b = i_;
    while (!at_end() && !ends_word(s_[i_], key)) ++i_;
    return s_.substr(b, i_ - b);
  }

  bool hex4(unsigned& v) {
    if (s_.size() - i_ < 4) return fail("truncated \\u escape");
    v = 0;
    for (int k = 0; k < 4; ++k) {
      char const h = s_[i_++];
      unsigned d = 0;
      if (h >= '0' && h <= '9') d = static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') d = static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') d = static_cast<unsigned>(h - 'A' + 10);
      else return fail("bad \\u escape");
      v = v * 16U + d;
    }
    return true;
  }

  bool quoted(std::string& str) {
    char const q = s_[i_++];
    for (;;) {
      if (at_end()) return fail("unterminated string");
      char const c = s_[i_++];
      if (c == q) break;
      if (c != '\\') {
        str += c;
        continue;
      }
      if (at_end()) return fail("unterminated string");
      char const e = s_[i_++];
      switch (e) {
        case '"':
        case '\'':
        case '\\':
        case '/': str += e; break;
        case 'b': str += '\b'; break;
        case 'f': str += '\f'; break;
        case 'n': str += '\n'; break;
        case 'r': str += '\r'; break;
        case 't': str += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xDC00U && cp <= 0xDFFFU) return fail("lone low surrogate");
          if (cp >= 0xD800U && cp <= 0xDBFFU) {
            unsigned lo = 0;
            if (s_.size() - i_ < 2 || s_[i_] != '\\' || s_[i_ + 1] != 'u') return fail("lone high surrogate");
            i_ += 2;
            if (!hex4(lo)) return false;
            if (lo < 0xDC00U || lo > 0xDFFFU) return fail("lone high surrogate");
            cp = 0x10000U + ((cp - 0xD800U) << 10U) + (lo - 0xDC00U);
          }
          append_utf8(str, cp);
          break;
        }
        default: return fail("invalid escape in string");
      }
    }
    return true;
  }

  bool emit_string(std::string const& str) {
    if (!valid_utf8(str)) return fail("string is not valid UTF-8");
    out_ += nlohmann::json(str).dump();  // nlohmann's escaping, so encode→parse is exact
    return true;
  }

  std::string_view s_;
  std::size_t i_;
  std::size_t start_;
  std::string out_;
  std::optional<LiteralProblem> problem_;
};

}  // namespace

bool is_json_number(std::string_view w) noexcept {
  std::size_t i = 0;
  auto const n = w.size();
  auto digit = [&](std::size_t k) { return k < n && w[k] >= '0' && w[k] <= '9'; };
  if (i < n && w[i] == '-') ++i;
  if (!digit(i)) return false;
  if (w[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < n && w[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < n && (w[i] == 'e' || w[i] == 'E')) {
    ++i;
    if (i < n && (w[i] == '+' || w[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == n;
}

std::string describe(LiteralProblem const& problem) {
  return fmt::format("{} at offset {} of the literal", problem.what.view(), problem.offset);
}

std::variant<std::string, LiteralProblem> js_literal_to_json(std::string_view text, std::size_t& pos) {
  if (pos >= text.size() || (text[pos] != '{' && text[pos] != '['))
    return LiteralProblem{"a literal must start with '{' or '['", 0};
  Parser p(text, pos);
  if (!p.run()) return p.problem();
  pos = p.pos();
  return std::move(p.out());
}

}  // namespace cosmicac::config
