#include "core/name_filter.h"

#include "core/strings.h"

namespace vperf {

struct NameFilter::Node {
  enum class Kind { Glob, Not, And, Or } kind = Kind::Glob;
  std::string glob;
  std::shared_ptr<const Node> left, right;
};

namespace {

using Node = NameFilter::Node;

// Recursive descent over: or := and ('|' and)* ; and := unary ('&' unary)* ;
// unary := '!' unary | '(' or ')' | glob. Depth is bounded so hostile input cannot exhaust the stack.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::shared_ptr<const Node>> parse() {
    VPERF_TRY(std::shared_ptr<const Node> root, parse_or(0));
    skip_spaces();
    if (at_ < text_.size()) return error("'" + std::string(1, text_[at_]) + "' where an operator or the end was expected");
    return root;
  }

 private:
  static constexpr int kMaxDepth = 200;

  Error error(const std::string& what) const {
    return Error{"filter '" + std::string(text_) + "': " + what + " (at character " + std::to_string(at_ + 1) + ")", 0,
                 "write globs joined by & and |, negated by !, grouped by ( ): '!_* & !*@plt'"};
  }
  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  // A left-associative chain of `next` joined by `op`: or := and ('|' and)*, and := unary ('&' unary)*.
  Result<std::shared_ptr<const Node>> parse_chain(char op, Node::Kind kind, int depth,
                                                  Result<std::shared_ptr<const Node>> (Parser::*next)(int)) {
    VPERF_TRY(std::shared_ptr<const Node> left, (this->*next)(depth));
    while (take(op)) {
      VPERF_TRY(std::shared_ptr<const Node> right, (this->*next)(depth));
      auto node = std::make_shared<Node>();
      node->kind = kind;
      node->left = std::move(left);
      node->right = std::move(right);
      left = std::move(node);
    }
    return left;
  }
  Result<std::shared_ptr<const Node>> parse_or(int depth) { return parse_chain('|', Node::Kind::Or, depth, &Parser::parse_and); }
  Result<std::shared_ptr<const Node>> parse_and(int depth) { return parse_chain('&', Node::Kind::And, depth, &Parser::parse_unary); }
  Result<std::shared_ptr<const Node>> parse_unary(int depth) {
    if (depth > kMaxDepth) return error("too deeply nested");
    if (take('!')) {
      VPERF_TRY(std::shared_ptr<const Node> inner, parse_unary(depth + 1));
      auto node = std::make_shared<Node>();
      node->kind = Node::Kind::Not;
      node->left = std::move(inner);
      return std::shared_ptr<const Node>(std::move(node));
    }
    if (take('(')) {
      VPERF_TRY(std::shared_ptr<const Node> inner, parse_or(depth + 1));
      if (!take(')')) return error("a missing ')'");
      return inner;
    }
    skip_spaces();
    const size_t start = at_;
    while (at_ < text_.size() && std::string_view("&|!()").find(text_[at_]) == std::string_view::npos) ++at_;
    std::string_view glob = trim(text_.substr(start, at_ - start));
    if (glob.empty()) return error("an empty name where a glob was expected");
    auto node = std::make_shared<Node>();
    node->glob = std::string(glob);
    return std::shared_ptr<const Node>(std::move(node));
  }

  std::string_view text_;
  size_t at_ = 0;
};

bool evaluate(const Node& node, std::string_view name) {
  switch (node.kind) {
    case Node::Kind::Glob: return glob_match(node.glob, name);
    case Node::Kind::Not: return !evaluate(*node.left, name);
    case Node::Kind::And: return evaluate(*node.left, name) && evaluate(*node.right, name);
    case Node::Kind::Or: return evaluate(*node.left, name) || evaluate(*node.right, name);
  }
  return false;
}

}  // namespace

Result<NameFilter> NameFilter::parse(std::string_view text) {
  VPERF_TRY(std::shared_ptr<const Node> root, Parser(text).parse());
  return NameFilter(std::move(root));
}

bool NameFilter::matches(std::string_view name) const { return evaluate(*root_, name); }

}  // namespace vperf
