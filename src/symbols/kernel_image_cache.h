#pragma once
// This boot's kernel image symbols (the lines of /proc/kallsyms without a [module]), kept
// between runs: the kernel formats all 5 MB of /proc/kallsyms text on every read, about 50 ms
// of system time here, a third of a 100k-sample report. perf reads it every time.
//
// An entry is valid for one boot: the image's symbols do not change while it runs (modules,
// BPF programs and trampolines are the [module] lines, which are not cached and are read from
// /proc/kallsyms when a sample lands in one). It is used only when
//  - it was written in this boot (its boot id is /proc/sys/kernel/random/boot_id; one file,
//    which the next boot's entry replaces), and
//  - its relocation reference (_text) is the address /proc/kallsyms shows now (read from its
//    first page), so a reader who now sees hidden (zero) addresses misses, as does any mix-up.
// The directory and the file are this user's alone (core/private_files.h): nothing another
// user wrote is read.
//
// File layout (native byte order and sizes; the file never leaves the machine):
//   "VPERFKI1", the boot id (64 bytes, NUL-padded), u32 symbol count, u32 marker count, u64 name bytes
//   symbols: u64 start, u64 end, u32 name offset, u16 name length, u8 binding, u8 zero
//   markers: u64 address, u32 name offset, u16 name length, u16 zero
//   names:   the names' bytes, each symbol or marker naming a range of them
// The symbols are the finished table (sorted, sized, one per address); a decoder re-checks all.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/private_files.h"
#include "symbols/kallsyms.h"

namespace vperf::symbols {

// The file's bytes for the kernel image part of `kallsyms`, read in boot `boot_id`.
std::vector<uint8_t> encode_kernel_image(const Kallsyms& kallsyms, std::string_view boot_id);
// The kernel image part from a file's bytes (no modules) and the boot it was read in: an Error
// for anything malformed.
Result<Kallsyms> decode_kernel_image(std::span<const uint8_t> bytes, std::string& boot_id);
// The same from a mapped file, whose names the symbols then point into (kept mapped).
Result<Kallsyms> decode_kernel_image(FileMapping mapping, std::string& boot_id);

// This boot's id (/proc/sys/kernel/random/boot_id), or nullopt where it cannot be read.
std::optional<std::string> current_boot_id();

// The cached kernel image of boot `boot_id`, when there is one and its relocation reference is
// `reference`; nullopt otherwise (a miss needs no reason: the caller reads kallsyms).
std::optional<Kallsyms> read_cached_kernel_image(const CacheLocation& location, const std::string& boot_id,
                                                 const RelocationReference& reference);
// Stores the kernel image part of `kallsyms` (read from /proc/kallsyms in boot `boot_id`).
Result<void> write_cached_kernel_image(const CacheLocation& location, const std::string& boot_id,
                                       const Kallsyms& kallsyms);

}  // namespace vperf::symbols
