#include "cli/cmd_kvm_list.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <sstream>

#include "core/error.h"

namespace vperf::cli {
namespace {

// libvirt's in-process test driver: one running domain "test", whose driver has no QEMU
// monitor or agent, so those columns say so instead of inventing values.
TEST(KvmList, LibvirtTestDriverDomain) {
  std::ostringstream out;
  EXPECT_EQ(run_kvm_list(KvmListOptions{"test:///default", false}, out), 0);
  EXPECT_EQ(out.str(),
            "NAME  STATE    VMM PID  VCPU THREADS  AGENT\n"
            "test  running        -  -             no\n");

  std::ostringstream json;
  EXPECT_EQ(run_kvm_list(KvmListOptions{"test:///default", true}, json), 0);
  boost::json::object o = boost::json::parse(json.str()).as_object();
  EXPECT_EQ(o["uri"].as_string(), "test:///default");
  const boost::json::object& domain = o["domains"].as_array().at(0).as_object();
  EXPECT_EQ(domain.at("name").as_string(), "test");
  EXPECT_EQ(domain.at("state").as_string(), "running");
  EXPECT_TRUE(domain.at("vmm_pid").is_null());
  EXPECT_FALSE(domain.at("agent").as_bool());
  EXPECT_NE(std::string(domain.at("monitor_error").as_string()).find("not supported"), std::string::npos);
}

TEST(KvmList, UnreachableLibvirtIsAUserError) {
  std::ostringstream out;
  try {
    // socket= is refused unless vouched for (--allow-unsafe-uri): KvmListOptions' third field.
    run_kvm_list(KvmListOptions{"qemu+unix:///system?socket=/nonexistent/libvirt-sock", false, true}, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to libvirt"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("libvirtd -d"), std::string::npos);
  }
  EXPECT_TRUE(out.str().empty());
}

TEST(KvmList, UriThatPicksTheSocketIsAUsageError) {
  std::ostringstream out;
  try {
    run_kvm_list(KvmListOptions{"qemu+unix:///system?socket=/nonexistent/libvirt-sock", false}, out);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_STREQ(e.what(),
                 "libvirt URI 'qemu+unix:///system?socket=/nonexistent/libvirt-sock' is refused: its socket= parameter names "
                 "the socket libvirt talks to");
    EXPECT_NE(e.hint().find("--allow-unsafe-uri"), std::string::npos) << e.hint();
  }
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace vperf::cli
