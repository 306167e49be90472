#include "host/base/json_read.hpp"

#include <catch2/catch_test_macros.hpp>

using namespace cosmicac::host;

namespace {
Json const kVmi = Json::parse(R"({
  "metadata": {"name": "job", "uid": "u-1", "labels": {"app": "x"}, "finalizers": ["a", "b"],
               "deletionTimestamp": null, "generation": 3},
  "status": {"phase": "Running", "conditions": "not a list"},
  "spec": []
})");
}

TEST_CASE("json_read: a path of objects reaches the value") {
  CHECK(string_at(kVmi, {"metadata", "name"}) == "job");
  CHECK(string_at(kVmi, {"metadata", "labels", "app"}) == "x");
  CHECK(array_at(kVmi, {"metadata", "finalizers"}).size() == 2);
  CHECK(object_at(kVmi, {"metadata", "labels"}).size() == 1);
  REQUIRE(find_at(kVmi, {"metadata", "generation"}) != nullptr);
  CHECK(*find_at(kVmi, {"metadata", "generation"}) == 3);
  CHECK(value_at(kVmi, {"status", "phase"}) == "Running");
  CHECK(find_at(kVmi, {}) == &kVmi);
}

TEST_CASE("json_read: absent, null or another type reads as absent, never throws") {
  CHECK(string_at(kVmi, {"metadata", "namespace"}).empty());
  CHECK(string_at(kVmi, {"metadata", "namespace"}, "?") == "?");
  CHECK(string_at(kVmi, {"metadata", "generation"}, "?") == "?");      // a number, not a string
  CHECK(string_at(kVmi, {"metadata", "name", "deeper"}, "?") == "?");  // a string is no object
  CHECK(find_at(kVmi, {"metadata", "deletionTimestamp"}) == nullptr);  // null is absent
  CHECK(value_at(kVmi, {"metadata", "deletionTimestamp"}).is_null());
  CHECK(value_at(kVmi, {"nothing", "here"}).is_null());
  CHECK(array_at(kVmi, {"status", "conditions"}).empty());  // a string where a list belongs
  CHECK(array_at(kVmi, {"status", "conditions"}).is_array());
  CHECK(object_at(kVmi, {"spec"}).is_object());  // a list where an object belongs
  CHECK(object_at(kVmi, {"spec"}).empty());
  for (Json const& odd : {Json(), Json(7), Json("text"), Json::array({1})}) {
    CHECK(find_at(odd, {"metadata"}) == nullptr);
    CHECK(string_at(odd, {"metadata", "name"}).empty());
    CHECK(array_at(odd, {"items"}).empty());
  }
}

TEST_CASE("json_read: parse_json answers none for what is not JSON") {
  CHECK(parse_json(R"({"a": 1})").value()["a"] == 1);
  CHECK(parse_json("[1, 2]").value().size() == 2);
  CHECK(parse_json("\"s\"").value() == "s");
  for (auto bad : {"", "{", "not json", "{\"a\": 1} trailing", "<html>403</html>"}) {
    INFO(bad);
    CHECK_FALSE(parse_json(bad));
  }
}
