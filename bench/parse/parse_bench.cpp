// Parse times of adversarial configuration inputs of 1 MiB each: the
// settings file (parse_settings, as at boot) and ENVS (parse_envs), median of
// N runs against a target of 100 ms of CPU time each. For reading, not a
// test: it prints a table and exits 1 when an input misses the target
// (bench/README.md, "Parsing").
//
//   parse_bench [--size BYTES] [--runs N] [--only SUBSTRING] [--target-ms MS] [--dump DIR]
//
// --dump writes each selected input to DIR/<n>.cfg or DIR/<n>.envs instead of
// timing it (to time other tools on the same bytes).
#include "config/envs.hpp"
#include "config/settings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

using cosmicac::config::parse_envs;
using cosmicac::config::parse_settings;

enum class Parser { Settings, Envs };

struct Input {
  std::string name;
  Parser parser;
  std::function<std::string()> make;  // generated only when selected
};

// Repeats `unit(k)` until the text reaches `size` bytes, between prefix and suffix.
std::string fill(std::size_t size, std::string_view prefix, std::string_view suffix,
                 std::function<std::string(std::size_t)> const& unit) {
  std::string s(prefix);
  for (std::size_t k = 0; s.size() + suffix.size() < size; ++k) s += unit(k);
  s += suffix;
  return s;
}

std::vector<Input> make_inputs(std::size_t size) {
  std::vector<Input> in;
  auto num = [](std::size_t k) { return std::to_string(k); };
  // Settings file.
  in.push_back({"cfg: one key repeated", Parser::Settings,
                [=] { return fill(size, "", "", [](std::size_t) { return std::string("MNT=/data\n"); }); }});
  in.push_back({"cfg: distinct unknown keys", Parser::Settings,
                [=] { return fill(size, "", "", [&](std::size_t k) { return "UNKNOWN_" + num(k) + "=x\n"; }); }});
  in.push_back({"cfg: one huge double-quoted value", Parser::Settings, [=] {
                  return fill(size, "BIG=\"", "\"\n", [](std::size_t) { return std::string(R"(ab\"c\\d\$e\`f\ng )"); });
                }});
  in.push_back({"cfg: comments and continuations", Parser::Settings, [=] {
                  return fill(size, "", "\n", [](std::size_t k) {
                    return k % 2 == 0 ? std::string("# a comment line of some length\n")
                                      : std::string("JOB_TYPE=a\\\nb\\\nc\\\nd   # and a trailing comment\n");
                  });
                }});
  in.push_back({"cfg: ENVS literal of many keys", Parser::Settings, [=] {
                  return fill(size, "ENVS='CFG={", "}'\n",
                              [&](std::size_t k) { return "k" + num(k) + ":" + num(k) + ","; });
                }});
  // ENVS.
  in.push_back({"envs: many entries", Parser::Envs, [=] {
                  return fill(size, "", "", [&](std::size_t k) { return "K" + num(k) + "=value" + num(k) + ";"; });
                }});
  in.push_back({"envs: many entries, duplicate last", Parser::Envs,
                [=] { return fill(size, "", "K0=again", [&](std::size_t k) { return "K" + num(k) + "=v;"; }); }});
  in.push_back({"envs: literal of many keys", Parser::Envs, [=] {
                  return fill(size, "CFG={", "}", [&](std::size_t k) { return "k" + num(k) + ":" + num(k) + ","; });
                }});
  in.push_back({"envs: literal, duplicate key last", Parser::Envs,
                [=] { return fill(size, "CFG={", "k0:1}", [&](std::size_t k) { return "k" + num(k) + ":1,"; }); }});
  in.push_back({"envs: nesting to the limit, repeated", Parser::Envs, [=] {
                  return fill(size, "CFG=[", "]",
                              [](std::size_t) { return std::string(62, '[') + "{a:1}" + std::string(62, ']') + ","; });
                }});
  in.push_back({"envs: long escaped string in a literal", Parser::Envs, [=] {
                  return fill(size, "CFG={s:\"", "\"}",
                              [](std::size_t) { return std::string(R"(\u00e9\n\"\\x\ud83d\ude00 )"); });
                }});
  in.push_back({"envs: long double-quoted value", Parser::Envs,
                [=] { return fill(size, "A=\"", "\"", [](std::size_t) { return std::string(R"(x\"y\\z;w )"); }); }});
  return in;
}

// One parse; returns "accepted", "rejected" or "out of memory".
char const* run_once(Parser parser, std::string const& text) {
  try {
    if (parser == Parser::Settings) return parse_settings(text, "bench") ? "accepted" : "rejected";
    return parse_envs(text) ? "accepted" : "rejected";
  } catch (std::bad_alloc const&) {
    return "out of memory";
  }
}

// CPU time of this process: what the parse cost, whatever else the machine runs.
double cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int dump_inputs(std::vector<Input> const& inputs, std::string const& only, std::string const& dir) {
  int n = 0;
  for (auto const& input : inputs) {
    ++n;
    if (!only.empty() && input.name.find(only) == std::string::npos) continue;
    std::string const path = dir + "/" + std::to_string(n) + (input.parser == Parser::Settings ? ".cfg" : ".envs");
    std::string const text = input.make();
    std::FILE* f = std::fopen(path.c_str(), "wbx");
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "parse_bench: cannot write %s\n", path.c_str());
      return 1;
    }
    std::printf("%s\t%s\n", path.c_str(), input.name.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t size = 1 << 20;
  int runs = 5;
  double target_ms = 100;
  std::string only;
  std::string dump;
  for (int k = 1; k < argc; ++k) {
    std::string_view const a = argv[k];
    bool const has_value = k + 1 < argc;
    if (a == "--size" && has_value) size = std::strtoull(argv[++k], nullptr, 10);
    else if (a == "--runs" && has_value) runs = std::max(1, std::atoi(argv[++k]));
    else if (a == "--only" && has_value) only = argv[++k];
    else if (a == "--target-ms" && has_value) target_ms = std::strtod(argv[++k], nullptr);
    else if (a == "--dump" && has_value) dump = argv[++k];
    else {
      std::fprintf(stderr,
                   "usage: parse_bench [--size BYTES] [--runs N] [--only SUBSTRING] [--target-ms MS] [--dump DIR]\n");
      return 2;
    }
  }
  if (!dump.empty()) return dump_inputs(make_inputs(size), only, dump);
  double load[1] = {0};
  if (::getloadavg(load, 1) != 1) load[0] = -1;
  std::printf("parse_bench: %zu-byte inputs, median of %d runs, target %.0f ms of CPU time (load average %.2f)\n", size,
              runs, target_ms, load[0]);
  std::printf("%-40s %9s %8s %8s %8s  %-13s %s\n", "input", "bytes", "cpu ms", "wall ms", "max wall", "result",
              "target");
  bool all_met = true;
  for (auto const& input : make_inputs(size)) {
    if (!only.empty() && input.name.find(only) == std::string::npos) continue;
    std::string const text = input.make();
    std::vector<double> cpu;
    std::vector<double> wall;
    char const* result = "";
    for (int r = 0; r < runs; ++r) {
      double const c0 = cpu_ms();
      auto const t0 = std::chrono::steady_clock::now();
      result = run_once(input.parser, text);
      auto const t1 = std::chrono::steady_clock::now();
      cpu.push_back(cpu_ms() - c0);
      wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    bool const met = median(cpu) <= target_ms;
    all_met = all_met && met;
    std::printf("%-40s %9zu %8.1f %8.1f %8.1f  %-13s %s\n", input.name.c_str(), text.size(), median(cpu), median(wall),
                *std::max_element(wall.begin(), wall.end()), result, met ? "pass" : "FAIL");
    std::fflush(stdout);
  }
  return all_met ? 0 : 1;
}
