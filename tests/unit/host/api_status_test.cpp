// A server's Status message as the user reads it: decoded from JSON, quotes
// as they are, a multi-line message (the field diff kube-apiserver appends to
// "is immutable") as indented continuation lines, every control character
// escaped, and a bound on what is shown.
#include "host/cluster/api_status.hpp"

#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace cosmicac::host;
using nlohmann::json;

namespace {

HttpResponse status_body(std::string const& message) {
  json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"status", "Failure"},
                 {"reason", "Invalid"}, {"message", message}, {"code", 422}};
  return HttpResponse{422, status.dump()};
}

std::vector<std::string> lines_of(std::string const& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    auto nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) return lines;
    start = nl + 1;
  }
}

// What kube-apiserver 1.32 answers when a bound claim's spec changes: the
// message carries quotes and a Go diff indented with tabs.
constexpr char const* kImmutableClaim =
    "PersistentVolumeClaim \"job-data\" is invalid: spec: Forbidden: spec is immutable after creation except "
    "resources.requests and volumeAttributesClassName for bound claims\n"
    "  core.PersistentVolumeClaimSpec{\n"
    "  \tAccessModes: {\"ReadWriteOnce\"},\n"
    "  \tSelector:    nil,\n"
    "- \tStorageClassName: &\"fast\",\n"
    "+ \tStorageClassName: &\"slow\",\n"
    "  }\n";

}  // namespace

TEST_CASE("api_status: a multi-line Status message is text: real quotes, indented continuation lines") {
  std::string const shown = status_message(status_body(kImmutableClaim));
  auto const lines = lines_of(shown);
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] ==
        "PersistentVolumeClaim \"job-data\" is invalid: spec: Forbidden: spec is immutable after creation except "
        "resources.requests and volumeAttributesClassName for bound claims");
  CHECK(lines[1] == "      core.PersistentVolumeClaimSpec{");
  CHECK(lines[2] == "        AccessModes: {\"ReadWriteOnce\"},");
  CHECK(lines[4] == "    -   StorageClassName: &\"fast\",");
  CHECK(lines[5] == "    +   StorageClassName: &\"slow\",");
  CHECK(lines[6] == "      }");
  CHECK(shown.find("\\\"") == std::string::npos);  // no JSON escapes
  CHECK(shown.find("\\n") == std::string::npos);
  CHECK(shown.find("\\t") == std::string::npos);
}

TEST_CASE("api_status: a message cannot forge a line or act on the terminal") {
  std::string const hostile =
      "denied\r\ncosmicac-vmi: applied job (forged)\x1b]0;owned\x07 \xc2\x9b"
      "2J \xe2\x80\xae"
      "evil\n\nerror: also forged\\\"";
  std::string const shown = server_text(hostile);
  auto const lines = lines_of(shown);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "denied");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK((lines[i].empty() || lines[i].rfind("    ", 0) == 0));
  }
  CHECK(lines[1] == "    cosmicac-vmi: applied job (forged)\\x1b]0;owned\\x07 \\u{009B}2J \\u{202E}evil");
  CHECK(lines[3] == "    error: also forged\\\\\"");  // a backslash stays escaped, so no escape can be faked
  for (char c : shown) {
    auto const u = static_cast<unsigned char>(c);
    CHECK((c == '\n' || (u >= 0x20 && u != 0x7f)));
  }
}

TEST_CASE("api_status: a long message is bounded, with a note saying how much was left out") {
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line " + std::to_string(i) + "\n";
  auto const lines = lines_of(server_text(many));
  REQUIRE(lines.size() == kMaxServerMessageLines + 1);
  CHECK(lines[kMaxServerMessageLines - 1] == "    line 29");
  CHECK(lines.back() == "    (70 more lines of the server's message not shown)");

  std::string wide;
  for (int i = 0; i < 1000; ++i) wide += "é";  // two bytes each: the cut must not split one
  std::string const shown = server_text(wide);
  CHECK(shown.size() <= kMaxServerLineBytes + 3);
  CHECK(shown.size() > kMaxServerLineBytes - 2);
  CHECK(shown.find("\\x") == std::string::npos);
  CHECK(shown.substr(shown.size() - 3) == "…");
}

TEST_CASE("api_status: no message when the body is no Status") {
  CHECK(status_message(HttpResponse{502, "<html>bad gateway</html>"}).empty());
  CHECK(status_message(HttpResponse{500, ""}).empty());
  CHECK(status_message(HttpResponse{500, "[\"message\"]"}).empty());
  CHECK(status_message(HttpResponse{500, R"({"message": 7})"}).empty());
  CHECK(status_message(HttpResponse{404, R"({"kind":"Status","message":"pods \"x\" not found"})"}) ==
        "pods \"x\" not found");
  CHECK(server_text("").empty());
  CHECK(server_text("\n\none\n\n") == "one");
}
