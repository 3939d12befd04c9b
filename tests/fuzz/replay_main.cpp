// Runs a libFuzzer target over seed files without libFuzzer: every file (or every file in a
// directory) given on the command line is passed once to LLVMFuzzerTestOneInput. A crash or
// sanitizer report fails the CTest test that runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
void replay(const std::filesystem::path& file, size_t& count) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ++count;
}
}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) replay(entry.path(), count);
    } else {
      replay(arg, count);
    }
  }
  std::printf("replayed %zu inputs\n", count);
  // No seeds means the test proves nothing: fail rather than pass empty.
  return count > 0 ? 0 : 1;
}
