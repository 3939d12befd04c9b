// The vperf binary given a libvirt URI whose ext transport would run a program as root:
// `vperf kvm list --connect 'qemu+ext:///system?command=SCRIPT'` runs nothing and ends with
// one usage-error line. Needs no libvirtd: the URI never reaches libvirt.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "support/fake_event_fs.h"
#include "support/marker_script.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

TEST(KvmConnectUri, ExtTransportScriptIsNotRun) {
  test::TempTree tree;
  const fs::path marker = tree.root() / "ran";
  const std::string uri = "qemu+ext:///system?command=" + test::marker_script(tree, "x", marker).string();
  test::ProgramResult list = test::run_vperf({"kvm", "list", "--connect", uri});
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_TRUE(list.out.empty()) << list.out;
  EXPECT_TRUE(list.err.starts_with("vperf: error: libvirt URI '" + uri + "' is refused: the ext transport")) << list.err;
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
  EXPECT_FALSE(fs::exists(marker)) << "vperf kvm list ran the URI's command";
}

}  // namespace
}  // namespace vperf
