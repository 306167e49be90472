#include "host/render/revision.hpp"

#include <openssl/evp.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>

namespace cosmicac::host {
namespace {

// Erases the annotation at `metadata` and the annotations object when it is
// left empty: the object is then as it was rendered before it was annotated.
void drop_revision(Json& metadata) {
  if (!metadata.is_object() || !metadata.contains("annotations")) return;
  Json& annotations = metadata["annotations"];
  if (annotations.is_object()) annotations.erase(kRevisionAnnotation);
  if (annotations.is_object() && annotations.empty()) metadata.erase("annotations");
}

}  // namespace

std::string content_digest(std::string_view content) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate; a name from a
  // zeroed digest would then be a wrong name, so it stops here instead.
  if (EVP_Digest(content.data(), content.size(), md.data(), &len, EVP_sha256(), nullptr) != 1 || len < 32) std::abort();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; out.size() < kDigestHexLength; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xf];
  }
  return out;
}

std::string job_revision(std::vector<Json> const& rendered) {
  std::string canonical;
  for (Json o : rendered) {
    if (o.is_object() && o.contains("metadata")) drop_revision(o["metadata"]);
    if (o.is_object() && o.contains("spec") && o["spec"].is_object() && o["spec"].contains("template") &&
        o["spec"]["template"].is_object() && o["spec"]["template"].contains("metadata"))
      drop_revision(o["spec"]["template"]["metadata"]);
    // nlohmann::json (not ordered_json) keeps its keys sorted: the canonical
    // form does not depend on the order a renderer wrote them in.
    canonical += nlohmann::json::parse(o.dump()).dump();
    canonical += '\n';
  }
  return content_digest(canonical);
}

std::string revision_of(Json const& object) {
  if (!object.is_object()) return {};
  auto const meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto const annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return {};
  auto const value = annotations->find(kRevisionAnnotation);
  return value != annotations->end() && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace cosmicac::host
