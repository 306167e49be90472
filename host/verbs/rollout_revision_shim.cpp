// TEMPORARY (see rollout_revision_shim.hpp): a stand-in for H1's revisions,
// enough for the rollout to be built and tested before the merge.
#include "host/verbs/rollout_revision_shim.hpp"

#include "host/base/json_read.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/render/job_objects.hpp"
#include "host/verbs/apply.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace cosmicac::host {
namespace {

std::string sha256_hex(std::string const& data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) return {};
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    std::array<char, 3> b{};
    std::snprintf(b.data(), b.size(), "%02x", md.at(i));
    hex += b.data();
  }
  return hex;
}

void erase_annotation(Json& metadata) {
  if (!metadata.is_object() || !metadata.contains("annotations")) return;
  Json& a = metadata["annotations"];
  if (!a.is_object()) return;
  a.erase(kRevisionAnnotation);
  if (a.empty()) metadata.erase("annotations");
}

}  // namespace

std::string job_revision(std::vector<Json> const& rendered) {
  // Canonical: keys sorted (nlohmann::json's std::map), no whitespace.
  nlohmann::json all = nlohmann::json::array();
  for (auto const& o : rendered) {
    Json copy = o;
    if (copy.contains("metadata")) erase_annotation(copy["metadata"]);
    if (copy.contains("spec") && copy["spec"].is_object() && copy["spec"].contains("template") &&
        copy["spec"]["template"].contains("metadata"))
      erase_annotation(copy["spec"]["template"]["metadata"]);
    all.push_back(nlohmann::json::parse(copy.dump()));
  }
  return sha256_hex(all.dump()).substr(0, 12);
}

Result<std::vector<KeptRevision>> kept_revisions(KubeClient& client, std::string const& ns, std::string const& job) {
  auto path = api_path(api::kSecrets, ns, {}, {},
                       {{"labelSelector", managed_by_selector() + "," + kJobLabel + "=" + job + "," +
                                              std::string(kRevisionAnnotation)}});
  if (!path) return path.error();
  auto resp = client.request("GET", *path);
  if (!resp) return resp.error();
  if (resp->status != 200) return api_error("listing the kept revisions of " + job, *resp);
  std::vector<KeptRevision> kept;
  for (auto const& s : array_at(parse_body(*resp), {"items"})) {
    auto text = base64_decode(string_at(s, {"data", "vm.json"}));
    if (!text) continue;
    auto vm = parse_json(*text);
    if (!vm) continue;
    kept.push_back({string_at(s, {"metadata", "labels", kRevisionAnnotation}),
                    string_at(s, {"metadata", "annotations", "cosmicac.io/kept-at"}), std::move(*vm)});
  }
  std::ranges::sort(kept, [](auto const& a, auto const& b) { return a.kept_at > b.kept_at; });
  return kept;
}

Result<std::vector<ApplyResult>> restore_revision(KubeClient& client, ApplyOptions const& options, Say const& say,
                                                  KeptRevision const& kept) {
  ApplyOptions o = options;
  o.restart = true;
  return apply_objects(client, {kept.vm}, o, say);
}

}  // namespace cosmicac::host
