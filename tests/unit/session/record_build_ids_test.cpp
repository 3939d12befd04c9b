#include "session/record_build_ids.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace vperf::session {
namespace {

// One ELF note: namesz, descsz, type, name (4-aligned), desc (4-aligned).
void add_note(std::vector<uint8_t>& out, const std::string& name, uint32_t type, const std::vector<uint8_t>& desc) {
  auto u32 = [&](uint32_t v) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    out.insert(out.end(), b, b + 4);
  };
  u32(static_cast<uint32_t>(name.size() + 1));
  u32(static_cast<uint32_t>(desc.size()));
  u32(type);
  out.insert(out.end(), name.begin(), name.end());
  out.push_back(0);
  while (out.size() % 4) out.push_back(0);
  out.insert(out.end(), desc.begin(), desc.end());
  while (out.size() % 4) out.push_back(0);
}

TEST(BuildIdFromNotes, FindsTheGnuBuildIdAmongOtherNotes) {
  // /sys/kernel/notes holds several notes (Xen, Linux ...) around the GNU build-id.
  std::vector<uint8_t> notes;
  add_note(notes, "Xen", 3, {1, 2, 3, 4, 5});  // type 3 but not GNU's
  add_note(notes, "GNU", 1, {9, 9, 9, 9});     // GNU ABI tag, not a build-id
  std::vector<uint8_t> id = {0x6e, 0xcd, 0x6e, 0xc2, 0x1e, 0xc6, 0x94, 0x16, 0xe5, 0x0a,
                             0x8a, 0xa6, 0x73, 0x7e, 0x50, 0x09, 0x01, 0xdd, 0xb4, 0x7a};
  add_note(notes, "GNU", 3, id);
  add_note(notes, "Linux", 1, {0, 0, 0, 0});
  std::optional<symbols::BuildId> found = build_id_from_notes(notes);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->hex(), "6ecd6ec21ec69416e50a8aa6737e500901ddb47a");
}

TEST(BuildIdFromNotes, MalformedOrMissingIsNothing) {
  std::vector<uint8_t> notes;
  add_note(notes, "GNU", 1, {1, 2, 3, 4});
  EXPECT_FALSE(build_id_from_notes(notes).has_value());
  std::vector<uint8_t> cut;
  add_note(cut, "GNU", 3, std::vector<uint8_t>(20, 7));
  cut.resize(cut.size() - 8);  // the descriptor runs past the end
  EXPECT_FALSE(build_id_from_notes(cut).has_value());
  EXPECT_FALSE(build_id_from_notes({}).has_value());
  std::vector<uint8_t> huge = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 'G', 'N', 'U', 0};
  EXPECT_FALSE(build_id_from_notes(huge).has_value());
}

}  // namespace
}  // namespace vperf::session
