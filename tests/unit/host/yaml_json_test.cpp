#include "host/base/yaml_json.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;

TEST_CASE("yaml_json: plain scalars are typed, quoted scalars stay strings") {
  auto j = parse_yaml_or_json("a: 8\nb: '8'\nc: true\nd: \"true\"\ne: ~\nf: 1.5\ng: 100Gi\nh: 0x10\n", "t").value();
  CHECK(j["a"] == 8);
  CHECK(j["b"] == "8");
  CHECK(j["c"] == true);
  CHECK(j["d"] == "true");
  CHECK(j["e"].is_null());
  CHECK(j["f"] == 1.5);
  CHECK(j["g"] == "100Gi");
  CHECK(j["h"] == 16);
}

TEST_CASE("yaml_json: mapping order is kept") {
  auto j = parse_yaml_or_json("z: 1\na: 2\nm: 3\n", "t").value();
  std::string keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys += it.key();
  CHECK(keys == "zam");
}

TEST_CASE("yaml_json: JSON text (with tabs) is read as JSON") {
  auto j = parse_yaml_or_json("{\n\t\"a\": [1, {\"b\": null}]\n}", "t").value();
  CHECK(j["a"][1]["b"].is_null());
}

TEST_CASE("yaml_json: errors name the origin and line") {
  auto dup = parse_yaml_or_json("a: 1\nb: 2\na: 3\n", "spec.yaml");
  REQUIRE_FALSE(dup);
  CHECK(dup.error().message == "spec.yaml line 3: duplicate key 'a'");
  auto broken = parse_yaml_or_json("a: [1, 2\nb: 3\n", "spec.yaml");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message.rfind("spec.yaml line ", 0) == 0);
  auto badjson = parse_yaml_or_json("{\"a\": }", "x.json");
  REQUIRE_FALSE(badjson);
  CHECK(badjson.error().message ==
        "x.json line 1 column 7: invalid JSON: syntax error while parsing value - unexpected '}'; expected '[', '{', "
        "or a literal");
}

TEST_CASE("yaml_json: emitted YAML reads back to the same value, tricky strings included") {
  Json v = Json::object();
  std::vector<std::string> tricky = {"true",
                                     "yes",
                                     "No",
                                     "on",
                                     "null",
                                     "~",
                                     "",
                                     "0755",
                                     "1e3",
                                     "1_000",
                                     "12:30",
                                     ".5",
                                     "-1",
                                     "a: b",
                                     "#x",
                                     "- item",
                                     "multi\nline\n",
                                     "no final newline\nx",
                                     "two trailing\n\n",
                                     " leading space\n",
                                     "tab\there\n",
                                     "ünïcode",
                                     "[x]",
                                     "{y}",
                                     "100Gi",
                                     "*alias",
                                     "&anchor",
                                     "!tag",
                                     "%x",
                                     "'q'",
                                     "\"dq\""};
  for (std::size_t i = 0; i < tricky.size(); ++i) v["k" + std::to_string(i)] = tricky[i];
  v["list"] = Json::array({"a", 1, true, nullptr, "yes", Json::object(), Json::array()});
  v["nested"] = Json{{"x", Json::array({Json{{"y", "z"}}})}};
  v["num"] = 2.5;
  std::string yaml = to_yaml(v);
  INFO(yaml);
  auto back = parse_yaml_or_json(yaml, "emitted");
  REQUIRE(back);
  CHECK(*back == v);
}

TEST_CASE("yaml_json: a stream has one document per object") {
  std::string s = to_yaml_stream({Json{{"a", 1}}, Json{{"b", 2}}});
  CHECK(s == "---\na: 1\n---\nb: 2\n");
}

TEST_CASE("yaml_json: multi-line text becomes a literal block") {
  std::string s = to_yaml(Json{{"t", "line one\nline two\n"}});
  CHECK(s.find("t: |\n  line one\n  line two\n") == 0);
}

TEST_CASE("yaml_json: aliases that expand without bound are refused, not expanded") {
  // "Billion laughs": ten levels of ten aliases each would be 10^10 values.
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    std::string const prev = "*l" + std::to_string(i - 1);
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  auto r = parse_yaml_or_json(text, "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("spec.yaml") != std::string::npos);
  CHECK(r.error().message.find("aliases expanding") != std::string::npos);
  // A few aliases are fine.
  auto ok = parse_yaml_or_json("base: &b {cpu: 4}\njob: *b\n", "t");
  REQUIRE(ok);
  CHECK((*ok)["job"]["cpu"] == 4);
}

TEST_CASE("yaml_json: nesting deeper than 64 levels is refused in YAML and in JSON") {
  auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']');
  };
  CHECK(parse_yaml_or_json(nested(64), "t"));
  auto json = parse_yaml_or_json(nested(100000), "deep.json");
  REQUIRE_FALSE(json);
  CHECK(json.error().message.find("nested deeper than 64 levels") != std::string::npos);
  auto yaml = parse_yaml_or_json("a: " + nested(200), "deep.yaml");
  REQUIRE_FALSE(yaml);
  CHECK(yaml.error().message.find("deep.yaml") != std::string::npos);
}

TEST_CASE("yaml_json: text that is not UTF-8 is an error, not a crash later when it is rendered") {
  // Found by job_spec_fuzz: a 0xFF byte in a YAML string reached nlohmann's dump() and threw.
  auto r = parse_yaml_or_json("name: \xff\xfe\n", "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "spec.yaml: not valid UTF-8 (YAML and JSON text must be)");
  auto j = parse_yaml_or_json("{\"name\": \"\xc3\x28\"}", "spec.json");  // JSON: nlohmann's own check
  REQUIRE_FALSE(j);
  CHECK(j.error().message.find("spec.json line 1 column ") == 0);
  CHECK(j.error().message.find(": invalid JSON: ") != std::string::npos);
}

TEST_CASE("yaml_json: an alias of a long string repeated is refused by its expanded size") {
  // Found by job_spec_fuzz: few values, but each a copy of the same long text.
  std::string text = "s: &s " + std::string(4000, 'x') + "\nl1: &l1 [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n";
  text += "l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\n";
  text += "l3: [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n";  // 1000 copies: 4 MB
  auto r = parse_yaml_or_json(text, "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("MiB of text (aliases expanding?)") != std::string::npos);
}

TEST_CASE("yaml_json: one document exactly; a stream yaml-cpp cannot end is refused, not loaded forever") {
  CHECK(parse_yaml_or_json("a: 1\n---\nb: 2\n", "two.yaml").error().message ==
        "two.yaml: expected one YAML document, found more than one");
  CHECK(parse_yaml_or_json("# only a comment\n", "none.yaml").error().message ==
        "none.yaml: expected one YAML document, found none");
  // Found by job_spec_fuzz: yaml-cpp 0.7's LoadAll returns documents without end here.
  auto r = parse_yaml_or_json("\"namee-0\",\n0b", "spec.yaml");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("spec.yaml") == 0);
}

TEST_CASE("yaml_json: control characters are escaped on the way out and read back exactly") {
  // Found by job_spec_fuzz: an env value with \x04 went out raw in a literal block.
  Json v = Json::object();
  v["multi"] = std::string("line one\x04\nline two\n");
  v["ctl"] = std::string(
      "a\x1c"
      "b\x7f"
      "c\td\re");
  v[std::string("key\x01")] = "x";
  auto const text = to_yaml(v);
  for (char c : text) {
    auto const u = static_cast<unsigned char>(c);
    CHECK(((u >= 0x20 && u != 0x7f) || u == '\n'));  // nothing raw but line breaks
  }
  auto back = parse_yaml_or_json(text, "t");
  REQUIRE(back);
  CHECK(*back == v);
}

TEST_CASE("yaml_json: a JSON number past a double's range is an error naming the file") {
  // Found by job_spec_fuzz: nlohmann throws out_of_range (not parse_error) for it.
  auto r = parse_yaml_or_json("{\"cpu\": 1e999999}", "spec.json");
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "spec.json: invalid JSON: number overflow (a number past a double's range)");  // not the number
}

// job_spec_fuzz found it: yaml-cpp 0.7 reads a NUL byte followed by 'N' as the
// lone byte 0x85 (not UTF-8), though the text it was given was valid UTF-8.
// Our YAML writer then refused that string with an internal error (an
// uncaught exception) instead of the reader refusing the spec.
TEST_CASE("yaml_json: strings yaml-cpp decodes to invalid UTF-8 are spec errors in values and keys") {
  using namespace std::string_literals;
  for (std::string const& text : {"k: a \0NG\n"s, "SETTI\t\0NG: 1\n"s, "k: [x, a \0NG]\n"s}) {
    INFO(text);
    auto r = parse_yaml_or_json(text, "spec.yaml");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("spec.yaml line 1") != std::string::npos);
    CHECK(r.error().message.find("not valid UTF-8") != std::string::npos);
  }
}
