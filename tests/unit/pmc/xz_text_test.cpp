// pmc/xz_text.h on real xz output (a bundled table) and on damaged and hostile input.
#include <gtest/gtest.h>

#include "core/files.h"
#include "pmc/perfmon_bundle.h"
#include "pmc/xz_text.h"

namespace vperf::events {
namespace {

std::string bundled_ivb_core() {
  Result<std::string> packed = read_file(bundled_perfmon_dir() / "IVB/events/ivybridge_core.json.xz");
  EXPECT_TRUE(packed.ok());
  return packed ? *packed : std::string();
}

TEST(XzText, DecompressesABundledTable) {
  std::string packed = bundled_ivb_core();
  ASSERT_TRUE(has_xz_magic(packed));
  Result<std::string> text = decompress_xz(packed, kMaxWholeFileBytes, "ivb");
  ASSERT_TRUE(text.ok()) << text.error().message;
  Result<std::string> reference = read_file(std::filesystem::path(VPERF_TESTDATA) / "perfmon/IVB/events/ivybridge_core.json");
  ASSERT_TRUE(reference.ok());
  EXPECT_TRUE(*text == *reference);
}

TEST(XzText, OutputPastTheBoundIsAnErrorNotAnAllocation) {
  Result<std::string> text = decompress_xz(bundled_ivb_core(), 1000, "ivb");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("more than 1000 bytes"), std::string::npos) << text.error().message;
}

TEST(XzText, DamagedInputIsAnErrorNamingTheSource) {
  std::string packed = bundled_ivb_core();
  Result<std::string> truncated = decompress_xz(packed.substr(0, packed.size() / 2), kMaxWholeFileBytes, "cut.xz");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().message, "cut.xz: truncated xz data");
  std::string flipped = packed;
  flipped[flipped.size() / 2] ^= 0x55;
  Result<std::string> corrupt = decompress_xz(flipped, kMaxWholeFileBytes, "bad.xz");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().message.rfind("bad.xz: ", 0), 0u) << corrupt.error().message;
  Result<std::string> plain = decompress_xz("{\"Events\": []}", kMaxWholeFileBytes, "plain.json.xz");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().message, "plain.json.xz: not xz data (no xz header)");
  Result<std::string> trailing = decompress_xz(packed + "garbage", kMaxWholeFileBytes, "trail.xz");
  EXPECT_FALSE(trailing.ok());
}

}  // namespace
}  // namespace vperf::events
