#include "symbols/kernel_modules.h"

#include <algorithm>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {

Result<std::vector<KernelModule>> parse_kernel_modules(std::string_view text, std::string_view source) {
  std::vector<KernelModule> out;
  size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (trim(line).empty()) continue;
    std::vector<std::string_view> fields;
    for (std::string_view f : split(trim(line), ' '))
      if (!f.empty()) fields.push_back(f);
    auto bad = [&](const char* what) {
      return Error{std::string(source) + ":" + std::to_string(line_no) + ": " + what + ": '" + std::string(line) + "'"};
    };
    if (fields.size() < 6) return bad("expected NAME SIZE REFS DEPS STATE ADDRESS");
    auto size = parse_u64(fields[1]);
    auto base = parse_u64(fields[5]);
    if (!size) return bad("bad size");
    if (!base) return bad("bad address");
    out.push_back(KernelModule{std::string(fields[0]), *base, *size});
  }
  if (!out.empty() && std::all_of(out.begin(), out.end(), [](const KernelModule& m) { return m.base == 0; }))
    return Error{std::string(source) + ": every module address is 0 (hidden by kernel.kptr_restrict); run as root, or "
                 "'sysctl kernel.kptr_restrict=0'", EACCES};
  return out;
}

Result<std::vector<KernelModule>> load_kernel_modules(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_kernel_modules(text.value(), path.string());
}

std::string module_dso_name(std::string_view path_or_name) {
  std::string_view base = path_or_name;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos) base = base.substr(slash + 1);
  if (base.size() >= 2 && base.front() == '[' && base.back() == ']') base = base.substr(1, base.size() - 2);
  if (size_t dot = base.find('.'); dot != std::string_view::npos) base = base.substr(0, dot);
  std::string name(base);
  std::replace(name.begin(), name.end(), '-', '_');
  return "[" + name + "]";
}

}  // namespace vperf::symbols
