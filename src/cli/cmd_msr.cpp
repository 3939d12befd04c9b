#include "cli/cmd_msr.h"

#include <algorithm>
#include <memory>

#include "cli/command.h"
#include "core/cpu_set.h"
#include "core/strings.h"
#include "msr/msr_register.h"
#include "output/json.h"
#include "output/table.h"

namespace vperf::cli {

namespace {

namespace json = boost::json;

struct RegisterRequest {
  uint32_t address = 0;
  const msr::MsrRegister* known = nullptr;  // nullptr: an address without a table entry
  std::string label() const { return known ? std::string(known->name) : hex(address); }
};

RegisterRequest resolve_register(const std::string& text) {
  if (starts_with_nocase(text, "0x")) {
    std::optional<uint64_t> address = parse_u64(text);
    if (!address || *address > 0xffffffffu)
      throw usage_error("bad MSR address '" + text + "'", "write a 32-bit hex address such as 0x1ad, or a register name");
    return {static_cast<uint32_t>(*address), msr::find_register(static_cast<uint32_t>(*address))};
  }
  if (const msr::MsrRegister* reg = msr::find_register(std::string_view(text))) return {reg->address, reg};
  std::vector<std::string> names;
  for (const msr::MsrRegister& reg : msr::known_registers()) names.emplace_back(reg.name);
  std::vector<std::string> close = closest_names(text, names);
  throw usage_error("unknown MSR '" + text + "'",
                    (close.empty() ? std::string() : "did you mean " + join_alternatives(close) + "? ") +
                        "known: " + join(names, ", ") + "; or give an address such as 0x1ad");
}

struct Reading {
  int cpu;
  RegisterRequest reg;
  Result<uint64_t> value;
};

// Device-level failures make every read fail the same way: say it once, as the error.
bool device_unusable(int errno_value) {
  return errno_value == ENOENT || errno_value == EACCES || errno_value == EPERM || errno_value == ENXIO;
}

void print_text(std::ostream& out, const std::vector<Reading>& readings) {
  for (const Reading& r : readings) {
    out << "CPU " << r.cpu << "  " << r.reg.label() << " (" << hex(r.reg.address) << ")  ";
    if (!r.value) {
      out << "unreadable: " << r.value.error().describe();
      std::string hint = msr::msr_error_hint(r.value.error().errno_value);
      if (!hint.empty()) out << " (hint: " << hint << ")";
      out << '\n';
      continue;
    }
    out << hex_padded(*r.value, 16) << '\n';
    if (!r.reg.known) continue;
    output::TextTable table({{"", output::Align::Left}, {"", output::Align::Left}, {"", output::Align::Right},
                             {"", output::Align::Left}});
    for (const msr::DecodedField& f : msr::decode_fields(*r.reg.known, *r.value)) {
      std::string bits = f.low == f.high ? "[" + std::to_string(f.low) + "]"
                                         : "[" + std::to_string(f.high) + ":" + std::to_string(f.low) + "]";
      table.add_row({std::string(f.name), bits, std::to_string(f.value), std::string(f.meaning)});
    }
    table.render(out, "    ");
  }
}

json::value to_json(const std::vector<Reading>& readings) {
  json::array arr;
  for (const Reading& r : readings) {
    json::object o;
    o["cpu"] = r.cpu;
    o["register"] = r.reg.label();
    o["address"] = hex(r.reg.address);
    if (r.value) {
      o["value"] = hex_padded(*r.value, 16);
      json::object fields;
      if (r.reg.known)
        for (const msr::DecodedField& f : msr::decode_fields(*r.reg.known, *r.value)) fields[f.name] = f.value;
      o["fields"] = std::move(fields);
      o["error"] = nullptr;
    } else {
      o["value"] = nullptr;
      o["fields"] = nullptr;
      o["error"] = r.value.error().describe();
    }
    arr.push_back(std::move(o));
  }
  return arr;
}

}  // namespace

int run_msr_read(const MsrReadOptions& options, const msr::MsrReader& reader, std::ostream& out) {
  std::vector<int> cpus{0};
  if (!options.cpus.empty()) {
    auto parsed = parse_cpu_list(options.cpus);
    if (!parsed) throw usage_error("-C " + options.cpus + ": " + parsed.error().message, "give CPUs as 0-3,8");
    cpus = std::move(parsed).value();
  }
  std::vector<RegisterRequest> registers;
  for (const std::string& text : options.registers) registers.push_back(resolve_register(text));

  std::vector<Reading> readings;
  bool all_failed_alike = true;
  for (int cpu : cpus)
    for (const RegisterRequest& reg : registers) {
      readings.push_back({cpu, reg, reader.read(cpu, reg.address)});
      const Result<uint64_t>& v = readings.back().value;
      all_failed_alike = all_failed_alike && !v && device_unusable(v.error().errno_value) &&
                         v.error().errno_value == readings.front().value.error().errno_value;
    }
  if (all_failed_alike) {
    const Error& e = readings.front().value.error();
    throw UserError("cannot read MSRs: " + e.describe(), msr::msr_error_hint(e.errno_value));
  }
  if (options.json)
    output::print_json(out, to_json(readings));
  else
    print_text(out, readings);
  bool any_failed = std::any_of(readings.begin(), readings.end(), [](const Reading& r) { return !r.value.ok(); });
  return any_failed ? 1 : 0;
}

void add_msr_command(CLI::App& app, Invocation& inv) {
  CLI::App* msr = app.add_subcommand("msr", "Model-specific registers: read and decode them");
  msr->require_subcommand(1);
  auto options = std::make_shared<MsrReadOptions>();
  CLI::App* read = msr->add_subcommand("read", "Read MSRs on CPUs and decode their fields");
  read->add_option("-C,--cpu", options->cpus, "CPUs to read on, e.g. 0-3,8 (default: 0)")->check(non_empty());
  add_json_flag(*read, options->json);
  read->add_option("registers", options->registers,
                   "Register names (IA32_APERF, MSR_PLATFORM_INFO, ...) or addresses (0x1ad)")
      ->required();
  read->callback([&inv, options] {
    inv.action = [&inv, options] { return run_msr_read(*options, msr::DevCpuMsrReader(), *inv.out); };
  });
}

}  // namespace vperf::cli
