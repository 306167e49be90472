#include "host/yaml_json.hpp"

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
  CHECK(badjson.error().message.rfind("x.json: invalid JSON", 0) == 0);
}

TEST_CASE("yaml_json: emitted YAML reads back to the same value, tricky strings included") {
  Json v = Json::object();
  std::vector<std::string> tricky = {"true", "yes", "No", "on", "null", "~", "", "0755", "1e3", "1_000", "12:30",
                                     ".5", "-1", "a: b", "#x", "- item", "multi\nline\n", "no final newline\nx",
                                     "two trailing\n\n", " leading space\n", "tab\there\n", "ünïcode", "[x]", "{y}",
                                     "100Gi", "*alias", "&anchor", "!tag", "%x", "'q'", "\"dq\""};
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
