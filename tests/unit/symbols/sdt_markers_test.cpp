#include "symbols/sdt_markers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>

#include "core/byte_writer.h"
#include "support/capability.h"
#include "support/run_program.h"

namespace vperf::symbols {
namespace {

// A 64-bit descriptor as <sys/sdt.h> lays it out: pc, base, semaphore, three strings.
std::vector<uint8_t> descriptor(uint64_t pc, uint64_t base, uint64_t semaphore, std::string_view strings) {
  ByteWriter w;
  w.u64(pc);
  w.u64(base);
  w.u64(semaphore);
  w.bytes(std::span(reinterpret_cast<const uint8_t*>(strings.data()), strings.size()));
  return w.take();
}

TEST(SdtMarkers, ADescriptorsFieldsAndStrings) {
  using namespace std::string_view_literals;
  Result<SdtMarker> m = parse_sdt_descriptor(descriptor(0x42512a, 0x8cc5a0, 0xa84276, "python\0audit\08@%rbx 8@%r15\0"sv), true);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  EXPECT_EQ(m->provider, "python");
  EXPECT_EQ(m->name, "audit");
  EXPECT_EQ(m->address, 0x42512au);
  EXPECT_EQ(m->base, 0x8cc5a0u);
  EXPECT_EQ(m->semaphore, 0xa84276u);
  EXPECT_EQ(m->arguments, "8@%rbx 8@%r15");
  EXPECT_EQ(sdt_event_name(*m), "sdt_python:audit");
  // Cut anywhere, or without a name: an Error, not a marker.
  std::vector<uint8_t> whole = descriptor(1, 2, 3, "p\0n\0\0"sv);
  for (size_t cut = 0; cut < whole.size(); ++cut)
    EXPECT_FALSE(parse_sdt_descriptor(std::span(whole.data(), cut), true).ok()) << cut;
  EXPECT_FALSE(parse_sdt_descriptor(descriptor(1, 2, 3, "p\0\0\0"sv), true).ok());
}

TEST(SdtMarkers, ArgumentWordsAreSizeSignAndOperand) {
  Result<std::vector<SdtArgument>> args = parse_sdt_arguments("8@%r14 -4@112(%rsp) 2@$5  1@foo(%rip)");
  ASSERT_TRUE(args.ok()) << args.error().describe();
  ASSERT_EQ(args->size(), 4u);
  EXPECT_EQ((*args)[0].size, 8);
  EXPECT_FALSE((*args)[0].is_signed);
  EXPECT_EQ((*args)[0].operand, "%r14");
  EXPECT_EQ((*args)[1].size, 4);
  EXPECT_TRUE((*args)[1].is_signed);
  EXPECT_EQ((*args)[1].operand, "112(%rsp)");
  EXPECT_EQ((*args)[2].operand, "$5");
  EXPECT_EQ((*args)[3].operand, "foo(%rip)");
  EXPECT_TRUE(parse_sdt_arguments("")->empty());
  for (const char* bad : {"%rax", "3@%rax", "8@", "x@%rax", "16@%xmm0"}) EXPECT_FALSE(parse_sdt_arguments(bad).ok()) << bad;
}

// What `readelf -n` (binutils, not libelf) says of a file's stapsdt notes, one line a marker:
// "provider name location base semaphore arguments".
std::vector<std::string> readelf_markers(const std::string& path) {
  test::ProgramResult r = test::run_program({"readelf", "-n", path});
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string provider, name, location;
  const std::regex where(R"(Location: 0x([0-9a-f]+), Base: 0x([0-9a-f]+), Semaphore: 0x([0-9a-f]+))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.find("Provider: ") != std::string::npos) provider = line.substr(line.find(": ") + 2);
    else if (line.find("Name: ") != std::string::npos) name = line.substr(line.find(": ") + 2);
    else if (std::regex_search(line, m, where))
      location = std::to_string(std::stoull(m[1], nullptr, 16)) + " " + std::to_string(std::stoull(m[2], nullptr, 16)) + " " +
                 std::to_string(std::stoull(m[3], nullptr, 16));
    else if (line.find("Arguments: ") != std::string::npos)
      out.push_back(provider + " " + name + " " + location + " " + line.substr(line.find(": ") + 2));
  }
  return out;
}

// Real markers no one here wrote: Debian's python3.11 (9) and libstdc++ (throw, rethrow,
// catch), each compared with readelf's reading of the same notes.
TEST(SdtMarkers, DebiansPythonAndLibstdcxxAgreeWithReadelf) {
  VPERF_REQUIRE(!test::find_program("readelf").empty(), "readelf (binutils) on PATH");
  int files = 0;
  for (const char* path : {"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    if (!std::filesystem::exists(path)) continue;
    ++files;
    std::vector<std::string> expected = readelf_markers(path);
    ASSERT_FALSE(expected.empty()) << path << " has no stapsdt notes per readelf";
    Result<std::vector<SdtMarker>> markers = read_sdt_markers(path);
    ASSERT_TRUE(markers.ok()) << markers.error().describe();
    std::vector<std::string> got;
    for (const SdtMarker& m : *markers) {
      got.push_back(m.provider + " " + m.name + " " + std::to_string(m.address) + " " + std::to_string(m.base) + " " +
                    std::to_string(m.semaphore) + " " + m.arguments);
      // Every argument word parses; the probe point and the semaphore lie in the file.
      EXPECT_TRUE(parse_sdt_arguments(m.arguments).ok()) << m.arguments;
      EXPECT_TRUE(m.file_offset.has_value()) << sdt_event_name(m);
      EXPECT_EQ(m.semaphore != 0, m.semaphore_offset.has_value()) << sdt_event_name(m);
    }
    EXPECT_EQ(got, expected) << path;
  }
  VPERF_REQUIRE(files > 0, "Debian's python3.11 or libstdc++ (files with USDT markers)");
}

TEST(SdtMarkers, AFileWithoutMarkersHasNone) {
  Result<std::vector<SdtMarker>> none = read_sdt_markers("/bin/true");
  ASSERT_TRUE(none.ok()) << none.error().describe();
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(read_sdt_markers("/proc/self/status").ok());
}

}  // namespace
}  // namespace vperf::symbols
