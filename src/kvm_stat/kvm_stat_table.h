#pragma once
// kvm stat's table of exits (KvmExitTable) as text, with perf kvm stat report's columns and
// arithmetic (print_result in perf 6.1's builtin-kvm.c) under a line that says which analysis
// made it, and as JSON.
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "kvm_stat/kvm_exit_analysis.h"

namespace vperf::kvm {

// What the table was asked for, for its header, and the events the kernel dropped meanwhile.
struct KvmTableContext {
  std::string pids;  // -p as given; empty: all VMs
  std::optional<uint32_t> vcpu;
  uint64_t lost = 0;
};

void print_kvm_table(const KvmExitTable& table, const KvmTableContext& context, std::ostream& out);
boost::json::value kvm_table_json(const KvmExitTable& table, const KvmTableContext& context);

}  // namespace vperf::kvm
