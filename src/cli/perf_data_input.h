#pragma once
// The -i option every perf.data reader shares (report, script, annotate, flamegraph): a file,
// or "-" for perf's pipe format on standard input.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "data/perf_data_reader.h"
#include "guest/guest_symbols.h"
#include "symbols/machines.h"

namespace vperf::cli {

// Throws UserError (one line, with `record_command` as the way to make a recording) when the
// input cannot be opened or is not perf.data.
data::PerfDataReader open_perf_data(const std::string& input, std::string_view record_command);

// The UserError for an input whose records could not be read (the reader found it damaged
// past what a warning covers), saying what to do.
UserError unreadable_samples(const std::string& input, const Error& error);

// The symbol settings of a perf.data reader: `config` (its --symfs) with this user's cache of
// the running kernel's image symbols (symbols/kernel_image_cache.h), so a report reads
// /proc/kallsyms once per boot rather than once per run.
symbols::SymbolConfig reader_symbol_config(symbols::SymbolConfig config);

// The time perf's "# captured on" shows: when the file (or the pipe) last changed.
std::optional<int64_t> captured_on(const std::string& input);

// Adds the guest machines `guests` describes (vperf kvm's --guest* options; nothing when it is
// empty), and shows the samples of the machines `scope` names. Throws UserError naming the file
// and the fix when a guest's symbols are unusable.
void add_guests(symbols::Machines& machines, const guest::GuestSymbolSources& guests, symbols::SampleScope scope = {});

}  // namespace vperf::cli
