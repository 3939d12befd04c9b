#include "report/report_stdio.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "core/rbtree_order.h"

namespace vperf::report {

namespace {

constexpr size_t kOverheadWidth = 8;
constexpr size_t kMaxColumnHeader = 1023;
constexpr size_t kSamplesWidth = 12;
constexpr size_t kUnresolvedWidth = 16;  // perf: BITS_PER_LONG / 4

// One column of the table, as perf's hpp formats.
struct ColumnSpec {
  OutputField field;
  size_t width = 0;
  std::string_view header;
};

// The number a numeric column shows (a percentage of the total for the overhead ones).
uint64_t field_value(FieldKind kind, const HistEntry& e) {
  switch (kind) {
    case FieldKind::Overhead: return e.self_period;
    case FieldKind::OverheadSys: return e.kernel_period;
    case FieldKind::OverheadUs: return e.user_period;
    case FieldKind::OverheadGuestSys: return e.guest_kernel_period;
    case FieldKind::OverheadGuestUs: return e.guest_user_period;
    case FieldKind::Children: return e.children_period;
    case FieldKind::Samples: return e.self_samples;
    case FieldKind::Period: return e.self_period;
    case FieldKind::Key: return 0;
  }
  return 0;
}

// perf's strcmp-style comparisons of two entries by a key: <0 when a sorts first.
int compare_key(const ReportData& report, SortKey key, const HistEntry& a, const HistEntry& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (key) {
    case SortKey::Comm:
      return report.hists->comms().text(a.key.comm).compare(report.hists->comms().text(b.key.comm));
    case SortKey::Pid:
    case SortKey::Tid:
      return cmp(a.key.tid, b.key.tid);
    case SortKey::Cpu:
      return cmp(a.key.cpu, b.key.cpu);
    case SortKey::Trace:
      return report.hists->traces().text(a.key.trace).compare(report.hists->traces().text(b.key.trace));
    case SortKey::Srcline:
      return report.hists->srclines().text(a.key.srcline).compare(report.hists->srclines().text(b.key.srcline));
    case SortKey::Dso: {
      if (!a.dso || !b.dso) return cmp(a.dso == nullptr, b.dso == nullptr);  // unknown last
      return a.dso->short_name().compare(b.dso->short_name());
    }
    case SortKey::Sym: {
      if (!a.symbol && !b.symbol) return cmp(a.address, b.address);
      if (!a.symbol || !b.symbol) return cmp(a.symbol == nullptr, b.symbol == nullptr);
      if (a.inlined_name.empty() && b.inlined_name.empty()) return a.symbol->name.compare(b.symbol->name);
      return entry_symbol_name(a).compare(entry_symbol_name(b));
    }
  }
  return 0;
}

std::string percent_text(uint64_t period, uint64_t total, size_t width) {
  char buf[32];
  double pct = total ? static_cast<double>(period) * 100.0 / static_cast<double>(total) : 0.0;
  std::snprintf(buf, sizeof buf, "%*.2f%%", static_cast<int>(width - 1), pct);
  return buf;
}

void pad_to(std::string& s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
}

// The keys perf prints with "%-.*s" (cut to the column, never padded): a last column of them
// has no trailing spaces.
bool printed_unpadded(SortKey key) { return key == SortKey::Sym || key == SortKey::Trace || key == SortKey::Srcline; }

// The list of a filter that has exactly one value elides its column, as perf does.
bool elided(const ReportOptions& o, SortKey key) {
  switch (key) {
    case SortKey::Comm: return o.filters.comms.size() == 1;
    case SortKey::Dso: return o.filters.dsos.size() == 1;
    case SortKey::Sym: return o.filters.symbols.size() == 1;
    default: return false;
  }
}

std::string key_text(const ReportData& report, SortKey key, const HistEntry& e, size_t width) {
  char buf[64];
  std::string text;
  switch (key) {
    case SortKey::Comm:
      // Cut to the column, which the entries' threads' last names size (key_width).
      text = report.hists->comms().text(e.key.comm).substr(0, width);
      break;
    case SortKey::Pid:
    case SortKey::Tid:
      std::snprintf(buf, sizeof buf, "%7d:", e.tid);
      text = buf;
      text += report.hists->comms().text(e.comm);
      break;
    case SortKey::Cpu:
      std::snprintf(buf, sizeof buf, "%*.*d", static_cast<int>(width), static_cast<int>(width), e.cpu);
      text = buf;
      break;
    case SortKey::Dso:
      text = dso_text(e);
      break;
    case SortKey::Sym:
      text = symbol_text(e);
      break;
    case SortKey::Trace:
      // Cut to the column, which can be narrower than the text (see columns_for).
      text = report.hists->traces().text(e.key.trace).substr(0, width);
      break;
    case SortKey::Srcline:
      // Cut to the column, as Trace (key_width).
      text = report.hists->srclines().text(e.key.srcline).substr(0, width);
      break;
  }
  return text;
}

// The widest text of `key` among `entries`, as perf sizes a sort key's column.
size_t key_width(const ReportData& report, const ReportOptions& options, const EventHists& hists, SortKey key,
                 const std::vector<const HistEntry*>& entries) {
  size_t width = 0;
  for (const HistEntry* e : entries) {
    size_t len = 0;
    switch (key) {
      // Sized by the entry's thread's last name, as perf (thread__comm_len): a comm the
      // thread had when sampled but changed later is cut to it.
      case SortKey::Comm: len = report.hists->comms().text(e->comm).size(); break;
      case SortKey::Pid:
      case SortKey::Tid: len = report.hists->comms().text(e->comm).size() + 8; break;
      case SortKey::Cpu: len = 0; break;
      case SortKey::Dso:
        len = dso_text(*e).size();
        // perf widens the column for unresolved addresses (unless --dsos is given).
        if (!e->symbol && options.filters.dsos.empty()) len = std::max(len, kUnresolvedWidth);
        break;
      case SortKey::Sym:
        // perf measures an inlined function by its name alone (the symbol's namelen), without
        // the " (inlined)" it prints after it.
        if (!e->symbol) len = kUnresolvedWidth + 6;
        else len = (e->inlined_name.empty() ? e->symbol->name.size() : e->inlined_name.size()) + 4;
        break;
      case SortKey::Trace:
        // perf formats an entry's trace text when it first compares it with another; an
        // event with one sample and no children never does, and its column keeps the
        // header's width (the text is cut to it).
        if (!report.layout.children && hists.samples == 1) break;
        len = report.hists->traces().text(e->key.trace).size();
        break;
      case SortKey::Srcline:
        if (report.hists->srcline_compared(e->key)) len = report.hists->srclines().text(e->key.srcline).size();
        break;
    }
    width = std::max(width, len);
  }
  return width;
}

// perf's default columns: Children and Self (or Overhead), -n's Samples, Period, the sort keys.
std::vector<OutputField> default_columns(const ReportData& report, const ReportOptions& options) {
  std::vector<OutputField> fields;
  if (report.layout.children) fields.push_back({FieldKind::Children});
  fields.push_back({FieldKind::Overhead});
  if (options.show_samples) fields.push_back({FieldKind::Samples});
  // perf's Period is the entry's own period, in children mode too.
  if (options.show_total_period) fields.push_back({FieldKind::Period});
  for (SortKey key : report.layout.sort_keys) fields.push_back({FieldKind::Key, key});
  return fields;
}

std::vector<ColumnSpec> columns_for(const ReportData& report, const ReportOptions& options, const EventHists& hists,
                                    const std::vector<const HistEntry*>& all) {
  std::vector<ColumnSpec> columns;
  const bool defaults = report.layout.columns.empty();
  for (const OutputField& field : defaults ? default_columns(report, options) : report.layout.columns) {
    std::string_view header = field_header(field);
    if (defaults && field.kind == FieldKind::Overhead && report.layout.children) header = "Self";
    if (field.kind != FieldKind::Key) {
      size_t min_width = field.kind == FieldKind::Samples || field.kind == FieldKind::Period ? kSamplesWidth : kOverheadWidth;
      columns.push_back({field, std::max(min_width, header.size()), header});
      continue;
    }
    SortKey key = field.key;
    if (elided(options, key)) continue;
    columns.push_back({field, std::max(header.size(), key_width(report, options, hists, key, all)), header});
  }
  return columns;
}

// One cell of an entry's row, at most as wide as its column (a key's text can be wider).
std::string cell_text(const ReportData& report, const ColumnSpec& col, const HistEntry& e, uint64_t total) {
  switch (col.field.kind) {
    case FieldKind::Samples:
    case FieldKind::Period: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%*" PRIu64, static_cast<int>(col.width), field_value(col.field.kind, e));
      return buf;
    }
    case FieldKind::Key: return key_text(report, col.field.key, e, col.width);
    case FieldKind::Children:
      // Without children mode perf has no Children to show.
      if (!report.layout.children) return std::string(col.width > 3 ? col.width - 3 : 0, ' ') + "N/A";
      [[fallthrough]];
    default: return percent_text(field_value(col.field.kind, e), total, col.width);
  }
}

}  // namespace

std::string entry_symbol_name(const HistEntry& entry) {
  if (!entry.inlined_name.empty()) return entry.inlined_name + " (inlined)";
  return entry.symbol ? std::string(entry.symbol->name) : std::string();
}

std::string symbol_text(const HistEntry& entry) {
  std::string text = "[";
  text += entry.level;
  text += "] ";
  if (entry.symbol && entry.dso) {
    text += entry_symbol_name(entry);
    if (entry.symbol->object) {  // perf names an address in data by its object and the offset in it
      char offset[24];
      std::snprintf(offset, sizeof offset, "+0x%" PRIx64, entry.symbol_offset);
      text += offset;
    }
  } else {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%-#.*" PRIx64, static_cast<int>(kUnresolvedWidth), entry.address);
    text += buf;
  }
  return text;
}

std::string dso_text(const HistEntry& entry) { return entry.dso ? entry.dso->short_name() : "[unknown]"; }

std::string samples_with_unit(uint64_t samples) {
  char unit = ' ';
  for (char next : {'K', 'M', 'G'}) {
    if (samples <= 1000) break;
    samples /= 1000;
    unit = next;
  }
  return std::to_string(samples) + unit;
}

namespace {

// perf's Children order: larger first. perf puts a caller above its callee when their Children
// tie (same thread, sorted by symbol): the caller's graph is the deeper one in caller order.
// perf's comparison is not transitive across threads; grouping ties by thread first makes it
// an order. <0 when a sorts first.
int compare_children(const ReportData& report, const HistEntry& a, const HistEntry& b, bool by_symbol) {
  if (a.children_period != b.children_period) return a.children_period > b.children_period ? -1 : 1;
  if (!by_symbol || !report.layout.children) return 0;
  if (a.tid != b.tid) return a.tid < b.tid ? -1 : 1;
  if (a.max_depth == b.max_depth) return 0;
  bool deeper_first = report.layout.order == CallGraphOrder::Caller;
  return (a.max_depth > b.max_depth) == deeper_first ? -1 : 1;
}

}  // namespace

void sort_entries(const ReportData& report, std::vector<const HistEntry*>& entries) {
  const std::vector<SortKey>& keys = report.hists->settings().sort_keys;
  const bool by_symbol = std::find(keys.begin(), keys.end(), SortKey::Sym) != keys.end();
  if (!report.layout.order_by.empty()) {
    // -F: field by field, numbers largest first.
    std::stable_sort(entries.begin(), entries.end(), [&](const HistEntry* a, const HistEntry* b) {
      for (const OutputField& field : report.layout.order_by) {
        if (field.kind == FieldKind::Key) {
          // perf orders symbols by name here: two unresolved ones tie.
          if (field.key == SortKey::Sym && !a->symbol && !b->symbol) continue;
          if (int c = compare_key(report, field.key, *a, *b)) return c < 0;
        } else if (field.kind == FieldKind::Children) {
          if (int c = compare_children(report, *a, *b, by_symbol)) return c < 0;
        } else if (uint64_t x = field_value(field.kind, *a), y = field_value(field.kind, *b); x != y) {
          return x > y;
        }
      }
      // Entries tied on every field stay in the order perf groups them in: by key, addresses
      // for unresolved symbols.
      for (SortKey key : keys)
        if (int c = compare_key(report, key, *a, *b)) return c < 0;
      return false;
    });
    return;
  }
  // Without -F and with Children, shown_entries orders as perf's trees do (PerfOrder).
  std::stable_sort(entries.begin(), entries.end(), [&](const HistEntry* a, const HistEntry* b) {
    if (a->self_period != b->self_period) return a->self_period > b->self_period;
    // perf's output order compares two unresolved symbols as equal (by name) and goes on to
    // the next key; entries tied on every key stay in its collapsed order, unresolved symbols
    // by address.
    for (SortKey key : keys) {
      if (key == SortKey::Sym && !a->symbol && !b->symbol) continue;
      if (int c = compare_key(report, key, *a, *b)) return c < 0;
    }
    for (SortKey key : keys)
      if (int c = compare_key(report, key, *a, *b)) return c < 0;
    return false;
  });
}

namespace {

// perf's order of a histogram's entries with Children (shown_entries).
class PerfOrder {
 public:
  PerfOrder(const ReportData& report, const EventHists& hists)
      : report_(report), hists_(hists), depth_rule_(report.hists->settings().callchains && hists.has_callchains) {}

  // Every entry (filtered ones too: perf's trees hold them) in perf's order: inserted as perf
  // creates them (by the sample that first reached each) into its collapse tree, then in that
  // tree's order into its output tree.
  std::vector<const HistEntry*> order() const {
    std::vector<const HistEntry*> created;
    created.reserve(hists_.entries.size());
    for (const HistEntry& e : hists_.entries) created.push_back(&e);
    std::stable_sort(created.begin(), created.end(), [](const HistEntry* a, const HistEntry* b) {
      return a->first_sample != b->first_sample ? a->first_sample < b->first_sample : a->first_depth < b->first_depth;
    });
    std::vector<const HistEntry*> collapsed;
    collapsed.reserve(created.size());
    for (uint32_t i : core::rbtree_insertion_order(static_cast<uint32_t>(created.size()),
                                                   [&](uint32_t a, uint32_t b) { return collapse_before(*created[a], *created[b]); }))
      collapsed.push_back(created[i]);
    std::vector<const HistEntry*> out;
    out.reserve(collapsed.size());
    for (uint32_t i : core::rbtree_insertion_order(static_cast<uint32_t>(collapsed.size()),
                                                   [&](uint32_t a, uint32_t b) { return output_before(*collapsed[a], *collapsed[b]); }))
      out.push_back(collapsed[i]);
    return out;
  }

 private:
  // perf's collapse comparison (hist_entry__collapse < 0, `a` the entry inserted): whether `a`
  // goes before (left of) `b` in the tree perf collapses a histogram into, whose order is the
  // order it inserts the entries into its output tree. By the sort keys, each ascending, a
  // symbol's DSO first, an unresolved address after every symbol; addresses (unresolved ones,
  // symbol starts and ends) compare by their difference as a signed 64-bit number, as perf
  // compares them, which is not an order across the address space (junk return addresses of a
  // frame-pointer walk): the tree's shape decides there, hence the tree.
  bool collapse_before(const HistEntry& a, const HistEntry& b) const {
    auto wrapped = [](uint64_t x, uint64_t y) {  // perf's (int64_t)(right - left), right the inserted
      const auto d = static_cast<int64_t>(x - y);
      return d < 0 ? -1 : (d > 0 ? 1 : 0);
    };
    for (SortKey key : report_.hists->settings().sort_keys) {
      int c = 0;
      if (key == SortKey::Sym) {
        if (!a.symbol && !b.symbol) c = wrapped(a.address, b.address);
        else if ((c = compare_key(report_, SortKey::Dso, a, b)) != 0) {
        } else if (!a.symbol || !b.symbol) c = a.symbol ? -1 : 1;
        else if (a.symbol != b.symbol || a.inlined_name != b.inlined_name) {
          // Inlined functions by name, the one inserted last first (perf's strcmp(left, right)).
          if (!a.inlined_name.empty() || !b.inlined_name.empty()) c = entry_symbol_name(b).compare(entry_symbol_name(a));
          if (c == 0) c = wrapped(a.symbol->start, b.symbol->start);
          if (c == 0) c = wrapped(a.symbol->end, b.symbol->end);
        }
      } else {
        c = compare_key(report_, key, a, b);
      }
      if (c != 0) return c < 0;
    }
    return false;
  }

  // perf's output comparison (hist_entry__sort > 0): whether `a` goes before (left of) `b`.
  // Children larger first and, tied within one thread with call graphs shown, the deeper graph
  // first in caller order (the shallower in callee order); then Self; then the sort keys (two
  // unresolved symbols tie). Not a strict weak order across threads: the order is the tree's.
  bool output_before(const HistEntry& a, const HistEntry& b) const {
    auto sign = [](uint64_t x, uint64_t y) { return x > y ? 1 : (x < y ? -1 : 0); };
    if (report_.layout.children) {
      if (int c = sign(a.children_period, b.children_period)) return c > 0;
      if (depth_rule_ && a.tid == b.tid && a.max_depth != b.max_depth)
        return (a.max_depth > b.max_depth) == (report_.layout.order == CallGraphOrder::Caller);
    }
    if (int c = sign(a.self_period, b.self_period)) return c > 0;
    for (SortKey key : report_.hists->settings().sort_keys) {
      if (key == SortKey::Sym && !a.symbol && !b.symbol) continue;
      if (int c = compare_key(report_, key, a, b)) return c < 0;
    }
    return false;
  }

  const ReportData& report_;
  const EventHists& hists_;
  bool depth_rule_;
};

}  // namespace

std::vector<const HistEntry*> shown_entries(const ReportData& report, const EventHists& hists, const ReportOptions& options) {
  uint64_t total = options.relative_percentage ? hists.shown_period : hists.total_period;
  // With Children, perf's order of entries that tie is its tree's (output_before): built here
  // as perf builds it. Otherwise a stable sort gives the same order.
  const bool as_perfs_tree = report.layout.children && report.layout.order_by.empty();
  std::vector<const HistEntry*> candidates;
  if (as_perfs_tree) {
    candidates = PerfOrder(report, hists).order();
  } else {
    for (const HistEntry& e : hists.entries) candidates.push_back(&e);
  }
  std::vector<const HistEntry*> shown;
  for (const HistEntry* e : candidates) {
    if (e->filtered) continue;
    uint64_t period = report.layout.children ? e->children_period : e->self_period;
    double pct = total ? static_cast<double>(period) * 100.0 / static_cast<double>(total) : 0.0;
    if (options.percent_limit > 0 && pct < options.percent_limit) continue;
    shown.push_back(e);
  }
  if (!as_perfs_tree) sort_entries(report, shown);
  return shown;
}

namespace {

std::vector<const HistEntry*> unfiltered_entries(const EventHists& hists) {
  std::vector<const HistEntry*> entries;
  for (const HistEntry& e : hists.entries)
    if (!e.filtered) entries.push_back(&e);
  return entries;
}

// The entry's call graph, if it has one to print.
void print_entry_graph(std::string& out, const ReportData& report, const EventHists& hists, const HistEntry& e,
                       const CallGraphPrint& graph) {
  if (report.layout.call_graph && e.chain_tree != CallchainForest::kNone)
    print_call_graph(out, hists.chains, e.chain_tree, report.layout.children ? e.children_period : e.self_period,
                     *report.profile, graph);
}

// perf's table: one row per entry, a column per field.
// The column header line and its dots line, then perf's "#" line.
void append_column_header(std::string& out, const std::vector<ColumnSpec>& columns) {
  std::string header = "#", dots = "#";
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnSpec& col = columns[c];
    header += c == 0 ? " " : "  ";
    dots += c == 0 ? " " : "  ";
    std::string h(col.header);
    // Numbers are right-aligned, and so are their headers.
    if (col.field.kind != FieldKind::Key) h.insert(0, col.width > h.size() ? col.width - h.size() : 0, ' ');
    pad_to(h, col.width);
    // perf formats each column's header into a 1024-byte buffer: a wider column's header
    // (a symbol of over 1000 characters) is cut to 1023, its dots are not.
    if (h.size() > kMaxColumnHeader) h.resize(kMaxColumnHeader);
    header += h;
    dots.append(col.width, '.');
  }
  out += header + "\n" + dots + "\n#\n";
}

void render_table(std::string& out, const ReportData& report, const ReportOptions& options, const EventHists& hists,
                  uint64_t total, const CallGraphPrint& graph) {
  std::vector<ColumnSpec> columns = columns_for(report, options, hists, unfiltered_entries(hists));
  append_column_header(out, columns);

  for (const HistEntry* e : shown_entries(report, hists, options)) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnSpec& col = columns[c];
      out += "  ";
      std::string cell = cell_text(report, col, *e, total);
      bool unpadded_last = c + 1 == columns.size() && col.field.kind == FieldKind::Key &&
                           printed_unpadded(col.field.key);
      if (!unpadded_last) pad_to(cell, col.width);
      out += cell;
    }
    out += "\n";
    print_entry_graph(out, report, hists, *e, graph);
  }
}

// perf's event group view (hists__link, __hpp__sort's member fields): one row per key any
// member has, its overhead columns one percent per member (each of that member's total), rows
// ordered by the leader's share, then each member's in turn, then by key; a call graph under a
// row the leader has.
void render_group_table(std::string& out, const ReportData& report, const ReportOptions& options,
                        const std::vector<const EventHists*>& members, const CallGraphPrint& graph) {
  struct Row {
    const HistEntry* shown = nullptr;     // the first member's entry of the key: its key texts
    std::vector<const HistEntry*> of;     // by member; nullptr where the member has none
  };
  std::vector<Row> rows;
  std::unordered_map<EntryKey, size_t, EntryKeyHash> index;
  for (size_t m = 0; m < members.size(); ++m)
    for (const HistEntry& e : members[m]->entries) {
      if (e.filtered) continue;
      auto [it, added] = index.try_emplace(e.key, rows.size());
      if (added) rows.push_back(Row{&e, std::vector<const HistEntry*>(members.size(), nullptr)});
      rows[it->second].of[m] = &e;
    }
  auto value = [&](const Row& row, size_t m, FieldKind kind) -> uint64_t {
    return row.of[m] ? field_value(kind, *row.of[m]) : 0;
  };
  // Key columns are as wide as every row's text, shown or not, as perf sizes them.
  std::vector<const HistEntry*> every;
  for (const Row& row : rows) every.push_back(row.shown);
  // --percent-limit holds the leader's share, as perf's hist_entry__filter does.
  if (options.percent_limit > 0) {
    const uint64_t total = options.relative_percentage ? members.front()->shown_period : members.front()->total_period;
    const FieldKind share = report.layout.children ? FieldKind::Children : FieldKind::Overhead;
    std::erase_if(rows, [&](const Row& row) {
      return !total || static_cast<double>(value(row, 0, share)) * 100.0 / static_cast<double>(total) < options.percent_limit;
    });
  }
  // perf sorts by the leader's Children (its __hpp__sort_acc: no member fields, callers above
  // callees), then by Self, the leader's and each member's in turn, then by the keys.
  const std::vector<SortKey>& keys = report.hists->settings().sort_keys;
  const bool by_symbol = std::find(keys.begin(), keys.end(), SortKey::Sym) != keys.end();
  static const HistEntry kNone{};
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (report.layout.children)
      if (int c = compare_children(report, a.of.front() ? *a.of.front() : kNone, b.of.front() ? *b.of.front() : kNone, by_symbol))
        return c < 0;
    for (size_t m = 0; m < members.size(); ++m)
      if (uint64_t x = value(a, m, FieldKind::Overhead), y = value(b, m, FieldKind::Overhead); x != y) return x > y;
    for (SortKey key : keys)
      if (int c = compare_key(report, key, *a.shown, *b.shown)) return c < 0;
    return false;
  });

  std::vector<ColumnSpec> columns = columns_for(report, options, *members.front(), every);
  // A number column is one member-wide column per member.
  for (ColumnSpec& col : columns)
    if (col.field.kind != FieldKind::Key) col.width *= members.size();
  append_column_header(out, columns);

  for (const Row& row : rows) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnSpec& col = columns[c];
      out += "  ";
      std::string cell;
      if (col.field.kind == FieldKind::Key) {
        cell = key_text(report, col.field.key, *row.shown, col.width);
      } else {
        const size_t member_width = col.width / members.size();
        for (size_t m = 0; m < members.size(); ++m) {
          const uint64_t total = options.relative_percentage ? members[m]->shown_period : members[m]->total_period;
          if (col.field.kind == FieldKind::Samples || col.field.kind == FieldKind::Period) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%*" PRIu64, static_cast<int>(member_width), value(row, m, col.field.kind));
            cell += buf;
          } else {
            cell += percent_text(value(row, m, col.field.kind), total, member_width);
          }
        }
      }
      const bool unpadded_last = c + 1 == columns.size() && col.field.kind == FieldKind::Key &&
                                 printed_unpadded(col.field.key);
      if (!unpadded_last) pad_to(cell, col.width);
      out += cell;
    }
    out += "\n";
    if (row.of.front()) print_entry_graph(out, report, *members.front(), *row.of.front(), graph);
  }
}

// perf --hierarchy: the entries of the first sort key, each with the entries of the next key
// under it, indented, down to the last key's, which carry the call graphs. perf's layout: the
// number columns indented by depth, then the key's text (left-aligned, sym and trace unpadded).
constexpr size_t kHierarchyIndent = 3;

struct HierarchyNode {
  HistEntry sum;  // the first leaf's fields, with the periods of every leaf below
  size_t depth = 0;
  const HistEntry* leaf = nullptr;  // the last level's: the histogram entry itself
  std::vector<uint32_t> children;
  std::unordered_map<EntryKey, uint32_t, EntryKeyHash> child_index;
};

// The part of an entry's key that one level groups by.
EntryKey level_key(SortKey key, const EntryKey& full) {
  EntryKey k;
  copy_key_fields(key, full, k);
  return k;
}

// The levels' entries: nodes[0] is the root above the first level; each node sums the leaves
// below it.
std::vector<HierarchyNode> build_hierarchy(const std::vector<SortKey>& levels, const std::vector<const HistEntry*>& leaves) {
  std::vector<HierarchyNode> nodes(1);  // nodes[0]: the root, above the first level
  for (const HistEntry* e : leaves) {
    uint32_t at = 0;
    for (size_t depth = 0; depth < levels.size(); ++depth) {
      auto [it, added] = nodes[at].child_index.try_emplace(level_key(levels[depth], e->key), nodes.size());
      const uint32_t child = it->second;
      if (added) {
        nodes[at].children.push_back(child);
        HierarchyNode node;
        node.sum = *e;
        node.sum.self_period = node.sum.self_samples = 0;
        node.depth = depth;
        if (depth + 1 == levels.size()) node.leaf = e;
        nodes.push_back(std::move(node));
      }
      HistEntry& sum = nodes[child].sum;
      sum.self_period += e->self_period;
      sum.self_samples += e->self_samples;
      at = child;
    }
  }
  return nodes;
}

// perf's line for a hierarchy entry whose every child --percent-limit hid.
void append_no_entry_line(std::string& out, size_t column, double percent_limit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "no entry >= %.2f%%\n", percent_limit);
  out += std::string(column, ' ') + buf;
}

void render_hierarchy(std::string& out, const ReportData& report, const ReportOptions& options, const EventHists& hists,
                      uint64_t total, const CallGraphPrint& graph) {
  // A key a one-value filter names keeps its level (perf elides only the flat table's column).
  const std::vector<SortKey>& levels = report.layout.sort_keys;
  const std::vector<HierarchyNode> nodes = build_hierarchy(levels, unfiltered_entries(hists));

  // Columns: the numbers, then one text column whose width is the widest level's (with its
  // indentation), headed by the keys' names joined by " / ".
  std::vector<ColumnSpec> numbers;
  for (const OutputField& field : default_columns(report, options))
    if (field.kind != FieldKind::Key)
      numbers.push_back({field, field.kind == FieldKind::Overhead ? kOverheadWidth : kSamplesWidth, field_header(field)});
  const size_t indent = (levels.size() > 0 ? levels.size() - 1 : 0) * kHierarchyIndent;
  std::vector<size_t> key_widths(levels.size());
  std::string key_header;
  size_t text_width = 0;
  for (size_t depth = 0; depth < levels.size(); ++depth) {
    std::vector<const HistEntry*> at_depth;
    for (const HierarchyNode& node : nodes)
      if (&node != &nodes[0] && node.depth == depth) at_depth.push_back(&node.sum);
    std::string_view name = sort_key_header(levels[depth]);
    key_widths[depth] = std::max(name.size(), key_width(report, options, hists, levels[depth], at_depth));
    key_header += (depth ? " / " : "") + std::string(name.substr(name.find_first_not_of(' ')));
    text_width = std::max(text_width, depth * kHierarchyIndent + key_widths[depth]);
  }
  text_width = std::max(text_width, key_header.size());
  std::string header = "# " + std::string(indent, ' '), dots = "# " + std::string(indent, '.');
  for (size_t c = 0; c < numbers.size(); ++c) {
    std::string h(numbers[c].header);
    h.insert(0, numbers[c].width > h.size() ? numbers[c].width - h.size() : 0, ' ');
    header += h + "  ";
    dots += (c ? ".." : "") + std::string(numbers[c].width, '.');
  }
  out += header + key_header + "\n" + dots + "  " + std::string(text_width, '.') + "\n#\n";

  // Depth first, each level's entries heaviest first; an entry below --percent-limit hides the
  // levels under it.
  auto shown = [&](const HierarchyNode& node) {
    double pct = total ? static_cast<double>(node.sum.self_period) * 100.0 / static_cast<double>(total) : 0.0;
    return options.percent_limit <= 0 || pct >= options.percent_limit;
  };
  size_t numbers_width = 0;
  for (const ColumnSpec& col : numbers) numbers_width += 2 + col.width;
  auto print = [&](auto& self, const HierarchyNode& parent) -> void {
    std::vector<uint32_t> order = parent.children;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const HistEntry &x = nodes[a].sum, &y = nodes[b].sum;
      if (x.self_period != y.self_period) return x.self_period > y.self_period;
      return compare_key(report, levels[nodes[a].depth], x, y) < 0;
    });
    for (uint32_t id : order) {
      const HierarchyNode& node = nodes[id];
      if (!shown(node)) continue;
      out += std::string(node.depth * kHierarchyIndent, ' ');
      for (size_t c = 0; c < numbers.size(); ++c) out += "  " + cell_text(report, numbers[c], node.sum, total);
      const SortKey key = levels[node.depth];
      std::string text = key_text(report, key, node.sum, key_widths[node.depth]);
      if (!printed_unpadded(key)) pad_to(text, key_widths[node.depth]);
      out += std::string(indent, ' ') + "  " + text.substr(std::min(text.find_first_not_of(' '), text.size())) + "\n";
      if (node.leaf) print_entry_graph(out, report, hists, *node.leaf, graph);
      self(self, node);
      // perf says so where --percent-limit hid every entry under a shown one, at the column
      // their text would start in.
      if (!node.leaf && std::none_of(node.children.begin(), node.children.end(), [&](uint32_t c) { return shown(nodes[c]); }))
        append_no_entry_line(out, (node.depth + 1) * kHierarchyIndent + numbers_width + indent + 2, options.percent_limit);
    }
  };
  print(print, nodes[0]);
}

}  // namespace

std::string task_counts_table(const ReportData& report) {
  const TaskCounts& counts = report.task_counts;
  auto width_of = [](uint64_t n) { return std::to_string(n).size(); };
  size_t pid_width = 3, tid_width = 3;
  std::vector<size_t> widths;
  for (size_t event : counts.events) widths.push_back(event < report.events.size() ? report.events[event].name.size() : 0);
  for (const TaskCounts::Row& row : counts.rows) {
    pid_width = std::max(pid_width, width_of(row.pid));
    tid_width = std::max(tid_width, width_of(row.tid));
    for (size_t j = 0; j < row.values.size(); ++j) widths[j] = std::max(widths[j], width_of(row.values[j]));
  }
  auto right = [](std::string text, size_t width) { return std::string(width > text.size() ? width - text.size() : 0, ' ') + text; };
  std::string out = "# " + right("PID", pid_width) + "  " + right("TID", tid_width);
  for (size_t j = 0; j < counts.events.size(); ++j)
    out += "  " + right(counts.events[j] < report.events.size() ? report.events[counts.events[j]].name : "", widths[j]);
  out += '\n';
  for (const TaskCounts::Row& row : counts.rows) {
    out += "  " + right(std::to_string(row.pid), pid_width) + "  " + right(std::to_string(row.tid), tid_width);
    for (size_t j = 0; j < row.values.size(); ++j) out += "  " + right(std::to_string(row.values[j]), widths[j]);
    out += '\n';
  }
  return out;
}

std::string render_stdio(const ReportData& report, const ReportOptions& options, bool after_header) {
  std::string out = after_header ? "" : "# To display the perf.data header info, please use --header/--header-only options.\n#\n";
  for (SortKey key : report.layout.sort_keys) {
    if (!elided(options, key)) continue;
    const auto& list = key == SortKey::Comm ? options.filters.comms
                                        : key == SortKey::Dso ? options.filters.dsos
                                                              : options.filters.symbols;
    out += "# " + std::string(key == SortKey::Sym ? "symbol" : sort_key_name(key)) + ": " + *list.begin() + "\n";
  }
  out += "#\n# Total Lost Samples: " + std::to_string(report.lost_samples) + "\n#\n";

  // The event group view (perf's default for a file with groups): a member's section is its
  // leader's, columns beside the leader's.
  std::vector<const data::EventGroupDesc*> group_of(report.events.size(), nullptr);
  if (options.event_group && !options.hierarchy)
    for (const data::EventGroupDesc& group : report.groups)
      for (uint32_t m = group.leader; m < group.leader + group.members && m < report.events.size(); ++m) group_of[m] = &group;

  for (size_t ev = 0; ev < report.events.size(); ++ev) {
    const EventHists* hists = report.event_hists(ev);
    const data::EventGroupDesc* group = group_of[ev];
    if (group && group->leader != ev) continue;  // shown in its leader's section
    std::vector<const EventHists*> members;
    if (group) {
      for (uint32_t m = group->leader; m < group->leader + group->members; ++m) members.push_back(report.event_hists(m));
      if (std::any_of(members.begin(), members.end(), [](const EventHists* h) { return h == nullptr; })) members.clear();
    }
    uint64_t nr_samples = 0, nr_period = 0;
    for (const EventHists* h : members.empty() ? std::vector<const EventHists*>{hists} : members) {
      if (!h) continue;
      nr_samples += options.relative_percentage ? h->shown_samples : h->samples;
      nr_period += options.relative_percentage ? h->shown_period : h->total_period;
    }
    if (!hists || nr_samples == 0) continue;  // perf's --skip-empty default
    if (!members.empty()) {
      // perf's evsel__group_desc: "anon group { a, b }", or the group's own name.
      std::string names = group->name == "{anon_group}" ? "anon group" : group->name;
      for (uint32_t m = group->leader; m < group->leader + group->members; ++m) names += (m == group->leader ? " { " : ", ") + report.events[m].name;
      out += "# Samples: " + samples_with_unit(nr_samples) + " of events '" + names + " }'\n";
    } else {
      // perf says "events" for a group's leader even when it shows it alone (--no-group).
      const bool leads = std::any_of(report.groups.begin(), report.groups.end(), [&](const data::EventGroupDesc& g) { return g.leader == ev; });
      out += "# Samples: " + samples_with_unit(nr_samples) + (leads ? " of events '" : " of event '") + report.events[ev].name + "'\n";
    }
    out += "# Event count (approx.): " + std::to_string(nr_period) + "\n#\n";

    uint64_t total = options.relative_percentage ? hists->shown_period : hists->total_period;
    CallGraphPrint graph;
    graph.mode = options.call_graph.mode;
    graph.min_percent = options.percent_limit > 0 ? options.percent_limit : options.call_graph.min_percent;
    graph.total_period = hists->total_period;
    graph.threshold_total = total;
    graph.skip_entry_symbol = options.sort_starts_with_sym;
    if (options.hierarchy)
      render_hierarchy(out, report, options, *hists, total, graph);
    else if (!members.empty())
      render_group_table(out, report, options, members, graph);
    else
      render_table(out, report, options, *hists, total, graph);
    out += "\n\n";
  }
  if (options.quiet) {
    // perf report -q: the same output without its '#' comment lines.
    std::string rows;
    for (size_t at = 0; at < out.size();) {
      size_t end = out.find('\n', at);
      end = end == std::string::npos ? out.size() : end + 1;
      if (out[at] != '#') rows.append(out, at, end - at);
      at = end;
    }
    return rows;
  }
  return out;
}

}  // namespace vperf::report
