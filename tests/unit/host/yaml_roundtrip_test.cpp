// Every YAML document cosmicac-vmi writes, read back by the real consumers:
// PyYAML's pure-Python SafeLoader and libyaml's CSafeLoader (what cloud-init
// uses; Debian's /usr/bin/python3 with python3-yaml), plus our own reader —
// and compared with the value we meant to write. Property tests over seeded
// random Unicode strings (the seed is printed on failure; COSMICAC_SEED=N
// repeats a run). Missing python3-yaml FAILS these tests.
#include "common/process.hpp"
#include "config/config_file.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/render/manifests.hpp"
#include "host/render/userdata.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"
#include "test_files.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <functional>
#include <random>
#include <set>

using namespace cosmicac;
using namespace cosmicac::host;
using nlohmann::json;

namespace {

// One python3 for a whole batch: reads [{"text", "all"}] as JSON on stdin,
// writes [{"safe": {"value"|"error"}, "csafe": ...}] to the file argv[1]
// (a file: stdout is capped). Values that are not JSON (dates, ...) come back
// as {"__not_json__": repr}, which never equals what we meant.
constexpr const char* kLoader = R"PY(
import json, sys, yaml
def load(text, loader, many):
    try:
        if many:
            return {"value": list(yaml.load_all(text, Loader=loader))}
        return {"value": yaml.load(text, Loader=loader)}
    except Exception as e:
        return {"error": type(e).__name__ + ": " + str(e)}
out = [{"safe": load(d["text"], yaml.SafeLoader, d["all"]),
        "csafe": load(d["text"], yaml.CSafeLoader, d["all"])} for d in json.load(sys.stdin)]
with open(sys.argv[1], "w") as f:
    json.dump(out, f, default=lambda o: {"__not_json__": repr(o)})
)PY";

struct PyYaml {
  struct Doc {
    std::string text;
    bool stream = false;  // load_all
    json expected;
    std::string what;  // for the failure message
  };
  std::vector<Doc> docs;

  void add(std::string text, json expected, std::string what, bool stream = false) {
    docs.push_back({std::move(text), stream, std::move(expected), std::move(what)});
  }

  // Loads every document with both loaders; every one must equal its expected value.
  void check_all(std::uint64_t seed) {
    test::TempDir dir;
    json in = json::array();
    for (auto const& d : docs) in.push_back(json{{"text", d.text}, {"all", d.stream}});
    test::write_text(dir.path + "/load.py", kLoader);
    Command c{.program = "/usr/bin/python3",
              .args = {dir.path + "/load.py", dir.path + "/out.json"},
              .description = "PyYAML round trip"};
    c.input = in.dump();
    c.timeout = std::chrono::seconds(120);
    c.log_output_on_failure = false;
    auto r = run_command(c);
    REQUIRE(r);
    INFO("python3 stderr: " << r->err);
    REQUIRE(r->exit_code == 0);  // no python3-yaml (or no libyaml's CSafeLoader): a failure, not a skip
    json out = json::parse(test::read_text(dir.path + "/out.json"));
    REQUIRE(out.size() == docs.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      for (auto loader : {"safe", "csafe"}) {
        json const& got = out[i][loader];
        if (got.contains("value") && got["value"] == docs[i].expected) continue;
        if (++bad > 3) continue;  // enough to see the pattern
        UNSCOPED_INFO("seed " << seed << ", " << docs[i].what << ", loader " << loader << "\n--- YAML:\n"
                              << docs[i].text << "\n--- expected: " << docs[i].expected.dump()
                              << "\n--- got: " << got.dump());
      }
    }
    INFO("seed " << seed << ": " << bad << " of " << 2 * docs.size() << " loads differ");
    CHECK(bad == 0);
  }
};

std::uint64_t seed_for_run() {
  if (char const* s = std::getenv("COSMICAC_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

void append_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Random valid UTF-8, weighted towards what breaks YAML: every C0 and C1
// control, DEL, NEL, LS, PS, BOM, quotes, comment and indicator characters,
// document markers, block indicators, blanks at either end, tabs, long lines.
struct Strings {
  std::mt19937_64 rng;
  explicit Strings(std::uint64_t seed) : rng(seed) {}

  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

  std::string piece() {
    static const std::vector<std::string> tokens = {"'",
                                                    "\"",
                                                    "#",
                                                    " #",
                                                    ": ",
                                                    ":",
                                                    "---",
                                                    "...",
                                                    "|",
                                                    ">",
                                                    "- ",
                                                    "? ",
                                                    "&a",
                                                    "*a",
                                                    "!t",
                                                    "!!str",
                                                    "%YAML",
                                                    "@",
                                                    "`",
                                                    "{",
                                                    "}",
                                                    "[",
                                                    "]",
                                                    ",",
                                                    "\\",
                                                    "\t",
                                                    "\n",
                                                    "\r\n",
                                                    " ",
                                                    "  ",
                                                    "\n\n",
                                                    "~",
                                                    "null",
                                                    "yes",
                                                    "no",
                                                    "on",
                                                    "true",
                                                    "0755",
                                                    "0b101",
                                                    "1e3",
                                                    "12:30",
                                                    "2001-12-14",
                                                    "=",
                                                    "<<",
                                                    ".inf",
                                                    "1_000",
                                                    "0x1F",
                                                    "\n---\n",
                                                    "\n...\n",
                                                    "bootcmd: [[touch, /root/pwned]]",
                                                    "\xc2\x85",
                                                    "\xe2\x80\xa8",
                                                    "\xe2\x80\xa9",
                                                    "\xef\xbb\xbf",
                                                    "\x7f",
                                                    "ü",
                                                    "日本",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xef\xbf\xbe"};
    switch (below(6)) {
      case 0: return tokens[below(tokens.size())];
      case 1: {  // any C0 or C1 control
        std::string s;
        char32_t c = static_cast<char32_t>(below(64));
        append_utf8(s, c < 32 ? c : 0x80 + (c - 32));
        return s;
      }
      case 2: {  // any code point (no surrogates)
        std::string s;
        char32_t c = static_cast<char32_t>(below(0x110000));
        if (c >= 0xD800 && c <= 0xDFFF) c = 0x2028;
        append_utf8(s, c);
        return s;
      }
      case 3: return std::string(1, static_cast<char>(0x20 + below(0x5F)));  // printable ASCII
      case 4: return below(40) == 0 ? std::string(3000 + below(2000), 'x') : "word";
      default: return std::string(1, "abcXYZ019_-./"[below(13)]);
    }
  }

  std::string any(std::size_t max_pieces = 12) {
    std::string s;
    std::size_t n = below(max_pieces + 1);
    for (std::size_t i = 0; i < n; ++i) s += piece();
    return s;
  }

  // A string that certainly holds a character outside every narrow grammar.
  std::string hostile() {
    // Not ':' or '/' (image references hold them), nor '.', '-', '_'.
    static const std::vector<std::string> bad = {"\xe2\x80\xa8", "\xc2\x85", "\x1b", " ",           "#",
                                                 "\"",           "'",        "\n",   "\t",          "\x7f",
                                                 "\xef\xbb\xbf", "|",        "*",    "\xef\xbf\xbe"};
    return any(3) + bad[below(bad.size())] + any(3);
  }
};

const json kBaseSpec = {{"name", "job-1"}, {"namespace", "ns"}, {"cpu", 4}, {"memory", "16Gi"}};

json plain(Json const& v) { return json::parse(v.dump()); }

// The user-data as the agent will see it: the config file's content,
// through the agent's own parser.
config::Settings guest_settings(json const& userdata) {
  for (auto const& f : userdata["write_files"])
    if (f["path"] == kGuestConfigPath) {
      auto loaded = config::parse_settings(f["content"].get<std::string>(), "docker-bootstrap");
      if (!loaded) FAIL("the agent refuses the written config: " + loaded.error().message);
      return loaded->settings;
    }
  FAIL("no " << kGuestConfigPath << " in the user-data");
  return {};
}

// Adds the user-data and the render -o yaml stream of a spec to the batch.
void add_rendered(PyYaml& py, JobSpec const& spec, std::string const& what) {
  std::string const ud = render_userdata(spec);
  auto ours = parse_yaml_or_json(ud, "user-data");
  REQUIRE(ours);
  py.add(ud, plain(*ours), what + " (user-data)");
  auto objects = render_manifests(spec);
  json expected = json::array();
  for (auto const& o : objects) expected.push_back(plain(o));
  py.add(to_yaml_stream(objects), expected, what + " (render -o yaml)", true);
}

// What each spec field becomes, to put a random value into it.
struct Field {
  std::string path;  // as errors name it
  bool narrow;       // a grammar no hostile string satisfies
  std::function<void(json&, std::string const&)> set;
  bool in_profile = false;  // the operator's: a key of the operator profile, not of the job spec
};

std::vector<Field> string_fields() {
  auto top = [](std::string k) { return [k](json& s, std::string const& v) { s[k] = v; }; };
  auto in = [](std::string o, std::string k, json base) {
    return [o, k, base](json& s, std::string const& v) {
      if (!s.contains(o)) s[o] = base;
      s[o][k] = v;
    };
  };
  json const disk = {{"size", "200Gi"}, {"mountPoint", "/data"}};
  return {
      {"name", true, top("name")},
      {"namespace", true, top("namespace")},
      {"memory", true, top("memory")},
      {"storageClass", true, top("storageClass"), true},
      {"pullSecret", true, top("pullSecret"), true},
      {"credentialSecret", true, top("credentialSecret"), true},
      {"bootstrapConfigMap", true, top("bootstrapConfigMap"), true},
      {"overlayNetwork", true, top("overlayNetwork"), true},
      {"rootImage", true, top("rootImage"), true},
      {"gpu.type", true, in("gpu", "type", json::object())},
      {"infiniband.name", true, in("infiniband", "name", json::object())},
      {"rootDisk.size", true, in("rootDisk", "size", json::object())},
      {"dataDisk.size", true, in("dataDisk", "size", disk)},
      {"dataDisk.mountPoint", false, in("dataDisk", "mountPoint", disk)},
      {"dataDisk.serial", true, in("dataDisk", "serial", disk)},
      {"container.image", true, in("container", "image", json::object())},
      {"container.name", true, in("container", "name", json::object())},
      {"container.jobType", true, in("container", "jobType", json::object())},
      {"container.env.PWN", false, [](json& s, std::string const& v) { s["container"]["env"]["PWN"] = v; }},
  };
}

}  // namespace

TEST_CASE("yaml round trip: the injection reproduced — an env value cannot inject cloud-config keys") {
  json spec = kBaseSpec;
  spec["container"]["env"]["PWN"] =
      "a\u2028bootcmd: [[touch, /root/pwned]]\u2028write_files:\u2028  - path: /tmp/x\u2028    content: |\u2028      #";
  auto parsed = parse_job_spec(spec.dump(), "spec.json");
  REQUIRE(parsed);
  std::string const ud = render_userdata(*parsed);
  for (char c : ud) REQUIRE((c == '\n' || (c >= 0x20 && c <= 0x7e)));  // no raw U+2028 (nor anything else)
  PyYaml py;
  py.add(ud, plain(parse_yaml_or_json(ud, "user-data").value()), "reproduction");
  py.check_all(0);
  json const doc = plain(parse_yaml_or_json(ud, "user-data").value());
  std::set<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.insert(it.key());
  CHECK(keys == std::set<std::string>{"write_files", "runcmd"});
  CHECK(guest_settings(doc).env ==
        std::vector<std::string>{"PWN=" + spec["container"]["env"]["PWN"].get<std::string>()});
}

TEST_CASE("yaml round trip: to_yaml of random documents reads back exactly in PyYAML and libyaml and ours") {
  auto const seed = seed_for_run();
  INFO("seed " << seed);
  Strings gen(seed);
  PyYaml py;
  for (int i = 0; i < 1500; ++i) {
    Json doc = Json::object();
    std::size_t n = 1 + gen.below(4);
    for (std::size_t k = 0; k < n; ++k) {
      Json value;
      switch (gen.below(4)) {
        case 0: value = gen.any(); break;
        case 1: value = Json::array({gen.any(), gen.any(4), static_cast<std::int64_t>(gen.below(100))}); break;
        case 2: value = Json{{gen.any(3), gen.any()}, {"n", Json::array({Json{{"deep", gen.any()}}})}}; break;
        default: value = Json::array({Json{{"content", gen.any(20) + "\n"}, {gen.any(2), gen.any()}}}); break;
      }
      doc[gen.any(3)] = value;
    }
    std::string text;
    REQUIRE_NOTHROW(text = to_yaml(doc));
    auto ours = parse_yaml_or_json(text, "emitted");
    INFO("seed " << seed << "\n" << text);
    REQUIRE(ours);
    REQUIRE(ours->dump() == doc.dump());
    py.add(text, plain(doc), "document " + std::to_string(i));
  }
  py.check_all(seed);
}

TEST_CASE("yaml round trip: random strings in every spec field — refused naming the field or read back exactly") {
  auto const seed = seed_for_run();
  INFO("seed " << seed);
  Strings gen(seed);
  PyYaml py;
  auto const fields = string_fields();
  int rendered = 0;
  for (int i = 0; i < 2000; ++i) {
    auto const& field = fields[gen.below(fields.size())];
    bool const hostile = field.narrow && gen.below(2) == 0;
    std::string const value = hostile ? gen.hostile() : gen.any();
    json doc = field.in_profile ? json::object() : kBaseSpec;
    field.set(doc, value);
    // Half as JSON, half as YAML written by our own encoder (itself under test).
    bool const as_yaml = gen.below(2) == 0;
    std::string const text = as_yaml ? to_yaml(Json::parse(doc.dump())) : doc.dump();
    INFO("seed " << seed << ", field " << field.path << ", value " << json(value).dump());
    host::Result<JobSpec> parsed = host_error(Errc::Spec, "profile: " + field.path + ": not parsed");
    if (field.in_profile) {
      if (auto profile = parse_operator_profile(text, "profile"))
        parsed = parse_job_spec(kBaseSpec.dump(), "spec", *profile);
      else parsed = profile.error();
    } else {
      parsed = parse_job_spec(text, "spec");
    }
    if (!parsed) {
      std::string const prefix =
          std::string(field.in_profile ? "profile: " : "spec: ") +
          field.path.substr(0, field.path.rfind(".PWN") == std::string::npos ? field.path.size()
                                                                             : field.path.rfind(".PWN"));
      CHECK(parsed.error().message.rfind(prefix, 0) == 0);
      continue;
    }
    CHECK_FALSE(hostile);  // a narrow grammar never takes a hostile character
    if (rendered++ < 700) add_rendered(py, *parsed, field.path + " = " + json(value).dump());
    if (field.path == "container.env.PWN") {
      auto settings = guest_settings(plain(parse_yaml_or_json(render_userdata(*parsed), "ud").value()));
      CHECK(settings.env == std::vector<std::string>{"PWN=" + value});
    }
  }
  CHECK(rendered > 100);
  py.check_all(seed);
}

TEST_CASE("yaml round trip: random valid specs → the agent's parser reads back exactly the spec's values") {
  auto const seed = seed_for_run();
  INFO("seed " << seed);
  Strings gen(seed);
  PyYaml py;
  auto word = [&](std::string const& alphabet, std::size_t max) {
    std::string s(1, alphabet[gen.below(alphabet.size())]);
    std::size_t n = gen.below(max);
    for (std::size_t i = 0; i < n; ++i) s += alphabet[gen.below(alphabet.size())];
    return s;
  };
  std::string const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < 300; ++i) {
    json spec = kBaseSpec;
    std::string const mnt = "/mnt/m" + word(alnum, 10) + (gen.below(2) ? word(alnum, 0) + word(alnum + "_.-", 12) : "");
    std::string const serial = word(alnum, 8) + (gen.below(2) ? "-" + word(alnum + "_.", 6) : "");
    std::string const cname = word(alnum, 5) + (gen.below(2) ? word(alnum + "_.-", 20) : "");
    std::string const image =
        "registry.example:5000/" + word("abcdefghij0123456789", 10) + ":" + word(alnum, 0) + word(alnum + "_.-", 10);
    bool const gpu = gen.below(2) == 0;
    spec["dataDisk"] = {{"size", std::to_string(100 + gen.below(900)) + "Gi"}, {"mountPoint", mnt}, {"serial", serial}};
    spec["container"] = {{"image", image}, {"name", cname}};
    if (gpu) spec["container"]["jobType"] = "GPU_CONTAINER";
    std::vector<std::string> env;
    std::size_t const nenv = gen.below(4);
    for (std::size_t k = 0; k < nenv; ++k) {
      std::string const name = "E" + std::to_string(k) + word("ABCXYZ_", 6);
      std::string const value = gen.any(8);
      spec["container"]["env"][name] = value;
      env.push_back(name + "=" + value);
    }
    auto parsed = parse_job_spec(spec.dump(), "spec.json");
    INFO("seed " << seed << ", spec " << spec.dump());
    if (!parsed && parsed.error().message.find("container.env") != std::string::npos) continue;  // ENVS's own limits
    REQUIRE(parsed);
    std::string const ud = render_userdata(*parsed);
    json const doc = plain(parse_yaml_or_json(ud, "user-data").value());
    py.add(ud, doc, "valid spec " + spec.dump());
    auto const s = guest_settings(doc);
    CHECK(s.mount_point == mnt);
    CHECK(s.data_disk_serial == serial);
    CHECK(s.container_name == cname);
    CHECK(s.image.str() == image);
    CHECK(s.job_type == (gpu ? "GPU_CONTAINER" : ""));
    CHECK(s.env == env);
    CHECK(s.cred_iso_label == kCredVolumeLabel);
  }
  py.check_all(seed);
}

TEST_CASE("yaml round trip: the test's own loader does catch what it claims to") {
  PyYaml py;
  py.add("a: 2001-12-14\n", json{{"a", "2001-12-14"}}, "a timestamp");  // PyYAML: a date
  py.add("a: 0b101\n", json{{"a", "0b101"}}, "a binary int");           // YAML 1.1: 5
  test::TempDir dir;  // check_all must report differences: run it and expect failures
  json in = json::array();
  for (auto const& d : py.docs) in.push_back(json{{"text", d.text}, {"all", false}});
  test::write_text(dir.path + "/load.py", kLoader);
  Command c{.program = "/usr/bin/python3",
            .args = {dir.path + "/load.py", dir.path + "/out.json"},
            .description = "PyYAML"};
  c.input = in.dump();
  c.log_output_on_failure = false;
  auto r = run_command(c);
  REQUIRE(r);
  REQUIRE(r->exit_code == 0);
  json out = json::parse(test::read_text(dir.path + "/out.json"));
  CHECK(out[0]["safe"]["value"] != py.docs[0].expected);
  CHECK(out[1]["csafe"]["value"] != py.docs[1].expected);
}
