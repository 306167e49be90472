// cosmicac-vmi: creates the KubeVirt VMIs that carry the agent (skeleton).
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--version") {
    std::printf("cosmicac-vmi %s\n", COSMICAC_VERSION);
    return 0;
  }
  std::fputs("usage: cosmicac-vmi render|apply|wait|delete ...\n", stderr);
  return 2;
}
