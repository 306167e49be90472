#include "host/base/quantity.hpp"

#include <cmath>
#include <string>

namespace cosmicac::host {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// <suffix> ::= <binarySI> | <decimalExponent> | <decimalSI>
bool suffix_multiplier(std::string_view s, long double& mult) {
  struct Entry {
    std::string_view name;
    long double value;
  };
  static constexpr Entry table[] = {
      {"", 1.0L},
      {"m", 1e-3L},
      {"k", 1e3L},
      {"M", 1e6L},
      {"G", 1e9L},
      {"T", 1e12L},
      {"P", 1e15L},
      {"E", 1e18L},
      {"Ki", 1024.0L},
      {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L},
      {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L},
      {"Ei", 1152921504606846976.0L},
  };
  for (auto const& e : table) {
    if (e.name == s) {
      mult = e.value;
      return true;
    }
  }
  // <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber> (integer)
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view exp = s.substr(1);
    bool neg = false;
    if (exp[0] == '+' || exp[0] == '-') {
      neg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 3) return false;
    int n = 0;
    for (char c : exp) {
      if (!is_digit(c)) return false;
      n = n * 10 + (c - '0');
    }
    mult = std::pow(10.0L, static_cast<long double>(neg ? -n : n));
    return true;
  }
  return false;
}

}  // namespace

Result<long double> parse_quantity(std::string_view text) {
  std::string_view s = text;
  auto bad = [&](std::string const& why) {
    return host_error(Errc::Spec, "'" + std::string(text) + "' is not a quantity: " + why);
  };
  if (s.empty()) return bad("empty");
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // <number> ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
  long double value = 0;
  std::size_t i = 0;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) {
    value = value * 10 + (s[i] - '0');
    ++i;
    ++int_digits;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    long double scale = 0.1L;
    while (i < s.size() && is_digit(s[i])) {
      value += scale * (s[i] - '0');
      scale /= 10;
      ++i;
      ++frac_digits;
    }
  }
  if (int_digits + frac_digits == 0) return bad("no digits");
  long double mult = 1;
  if (!suffix_multiplier(s.substr(i), mult)) return bad("unknown suffix '" + std::string(s.substr(i)) + "'");
  value *= mult;
  return negative ? -value : value;
}

}  // namespace cosmicac::host
