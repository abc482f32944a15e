#include "cel/parser.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

#include "cel/lexer.h"

namespace kubesched::cel {
namespace {

using NodePtr = std::unique_ptr<Node>;

// What ANTLR lists when a primary expression was expected.
constexpr std::string_view kPrimaryExpected =
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

// Identifiers CEL reserves for future use (cel-go's parser refuses them).
constexpr std::array<std::string_view, 17> kReserved = {"as",        "break",  "const",  "continue", "else", "for",
                                                        "function",  "if",     "import", "let",      "loop", "package",
                                                        "namespace", "return", "var",    "void",     "while"};

class Parser {
 public:
  explicit Parser(std::string_view input) : input_(input), lexer_(input) { Advance(); }

  ParseResult Run() {
    NodePtr root = Expr();
    if (!error_ && tok_.kind != TokenKind::kEof) {
      Fail(tok_.offset, "Syntax error: extraneous input '" + TokenDisplay(input_, tok_) + "' expecting <EOF>");
    }
    ParseResult result;
    if (error_) {
      result.error = std::move(error_);
    } else {
      result.root = std::move(root);
    }
    return result;
  }

 private:
  void Advance() {
    tok_ = lexer_.Next();
    if (tok_.kind == TokenKind::kError) Fail(tok_.offset, "Syntax error: " + tok_.text);
  }

  NodePtr Fail(size_t offset, std::string message) {
    if (!error_) error_ = SyntaxError{std::move(message), offset};
    return nullptr;
  }

  bool Expect(TokenKind kind, std::string_view display) {
    if (error_) return false;
    if (tok_.kind != kind) {
      Fail(tok_.offset,
           "Syntax error: mismatched input '" + TokenDisplay(input_, tok_) + "' expecting " + std::string(display));
      return false;
    }
    Advance();
    return !error_;
  }

  // Gives the node its height and enforces the recursion limit on it, so that whatever walks the
  // tree later (checker, evaluator) recurses at most kMaxRecursionDepth deep.
  NodePtr Finish(NodePtr node) {
    if (!node) return nullptr;
    int depth = 0;
    for (const auto& c : node->children) depth = std::max(depth, c->depth);
    node->depth = depth + 1;
    if (node->depth > kMaxRecursionDepth) return Fail(node->offset, "max recursion depth exceeded");
    return node;
  }

  NodePtr Make(NodeKind kind, size_t offset) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->offset = offset;
    return n;
  }

  NodePtr Call(std::string name, size_t offset, std::vector<NodePtr> args) {
    for (const auto& a : args) {
      if (!a) return nullptr;
    }
    auto n = Make(NodeKind::kCall, offset);
    n->name = std::move(name);
    n->children = std::move(args);
    return Finish(std::move(n));
  }

  template <typename... Args>
  std::vector<NodePtr> Vec(Args&&... args) {
    std::vector<NodePtr> v;
    (v.push_back(std::forward<Args>(args)), ...);
    return v;
  }

  NodePtr Expr() {
    if (error_) return nullptr;
    if (nesting_ >= kMaxRecursionDepth) return Fail(tok_.offset, "max recursion depth exceeded");
    ++nesting_;
    NodePtr cond = Logical(TokenKind::kOr);
    if (cond && tok_.kind == TokenKind::kQuestion) {
      const size_t offset = tok_.offset;
      Advance();
      NodePtr yes = Logical(TokenKind::kOr);
      if (!Expect(TokenKind::kColon, "':'")) {
        --nesting_;
        return nullptr;
      }
      NodePtr no = Expr();
      cond = Call("_?_:_", offset, Vec(std::move(cond), std::move(yes), std::move(no)));
    }
    --nesting_;
    return error_ ? nullptr : std::move(cond);
  }

  // A chain of || (or &&) terms, built as a balanced tree as cel-go does, so that long chains
  // of conditions do not count against the recursion limit.
  NodePtr Logical(TokenKind op) {
    std::vector<NodePtr> terms;
    std::vector<size_t> offsets;
    terms.push_back(op == TokenKind::kOr ? Logical(TokenKind::kAnd) : Relation());
    while (!error_ && terms.back() && tok_.kind == op) {
      offsets.push_back(tok_.offset);
      Advance();
      terms.push_back(op == TokenKind::kOr ? Logical(TokenKind::kAnd) : Relation());
    }
    if (error_) return nullptr;
    if (terms.size() == 1) return std::move(terms[0]);
    return Balance(op == TokenKind::kOr ? "_||_" : "_&&_", terms, offsets, 0, terms.size() - 1);
  }

  NodePtr Balance(const std::string& name, std::vector<NodePtr>& terms, const std::vector<size_t>& offsets, size_t lo,
                  size_t hi) {
    if (lo == hi) return std::move(terms[lo]);
    const size_t mid = (lo + hi + 1) / 2;
    NodePtr left = Balance(name, terms, offsets, lo, mid - 1);
    NodePtr right = Balance(name, terms, offsets, mid, hi);
    return Call(name, offsets[mid - 1], Vec(std::move(left), std::move(right)));
  }

  NodePtr Relation() {
    NodePtr lhs = Additive();
    while (lhs && !error_) {
      const char* name = nullptr;
      switch (tok_.kind) {
        case TokenKind::kLt:
          name = "_<_";
          break;
        case TokenKind::kLe:
          name = "_<=_";
          break;
        case TokenKind::kGt:
          name = "_>_";
          break;
        case TokenKind::kGe:
          name = "_>=_";
          break;
        case TokenKind::kEq:
          name = "_==_";
          break;
        case TokenKind::kNe:
          name = "_!=_";
          break;
        case TokenKind::kIn:
          name = "@in";
          break;
        default:
          break;
      }
      if (!name) break;
      const size_t offset = tok_.offset;
      Advance();
      NodePtr rhs = Additive();
      lhs = Call(name, offset, Vec(std::move(lhs), std::move(rhs)));
    }
    return lhs;
  }

  NodePtr Additive() {
    NodePtr lhs = Multiplicative();
    while (lhs && !error_ && (tok_.kind == TokenKind::kPlus || tok_.kind == TokenKind::kMinus)) {
      const char* name = tok_.kind == TokenKind::kPlus ? "_+_" : "_-_";
      const size_t offset = tok_.offset;
      Advance();
      NodePtr rhs = Multiplicative();
      lhs = Call(name, offset, Vec(std::move(lhs), std::move(rhs)));
    }
    return lhs;
  }

  NodePtr Multiplicative() {
    NodePtr lhs = Unary();
    while (lhs && !error_ &&
           (tok_.kind == TokenKind::kStar || tok_.kind == TokenKind::kSlash || tok_.kind == TokenKind::kPercent)) {
      const char* name = tok_.kind == TokenKind::kStar ? "_*_" : (tok_.kind == TokenKind::kSlash ? "_/_" : "_%_");
      const size_t offset = tok_.offset;
      Advance();
      NodePtr rhs = Unary();
      lhs = Call(name, offset, Vec(std::move(lhs), std::move(rhs)));
    }
    return lhs;
  }

  NodePtr Unary() {
    if (tok_.kind == TokenKind::kBang) {
      const size_t offset = tok_.offset;
      int count = 0;
      while (tok_.kind == TokenKind::kBang && !error_) {
        ++count;
        Advance();
      }
      NodePtr operand = Member(false, 0);
      // An even number of negations cancels out (cel-go drops them).
      if (count % 2 == 0) return operand;
      return Call("!_", offset, Vec(std::move(operand)));
    }
    if (tok_.kind == TokenKind::kMinus) {
      const size_t offset = tok_.offset;
      size_t last = offset;
      int count = 0;
      while (tok_.kind == TokenKind::kMinus && !error_) {
        ++count;
        last = tok_.offset;
        Advance();
      }
      // The last '-' before a number is the literal's sign (-9223372036854775808 is an int).
      const bool signed_literal = tok_.kind == TokenKind::kInt || tok_.kind == TokenKind::kDouble;
      if (signed_literal) --count;
      NodePtr operand = Member(signed_literal, last);
      if (count % 2 == 0) return operand;
      return Call("-_", offset, Vec(std::move(operand)));
    }
    return Member(false, 0);
  }

  NodePtr Member(bool negative, size_t sign_offset) {
    NodePtr node = Primary(negative, sign_offset);
    while (node && !error_) {
      if (tok_.kind == TokenKind::kDot) {
        const size_t offset = tok_.offset;
        Advance();
        if (tok_.kind == TokenKind::kQuestion) return Fail(tok_.offset, "unsupported syntax '.?'");
        if (tok_.kind != TokenKind::kIdent) {
          return Fail(tok_.offset,
                      "Syntax error: mismatched input '" + TokenDisplay(input_, tok_) + "' expecting IDENTIFIER");
        }
        std::string name = tok_.text;
        Advance();
        if (tok_.kind == TokenKind::kLParen) {
          const size_t open = tok_.offset;
          std::vector<NodePtr> args = Args();
          if (error_) return nullptr;
          node = MemberCall(std::move(node), name, open, std::move(args));
        } else {
          auto select = Make(NodeKind::kSelect, offset);
          select->name = std::move(name);
          select->children.push_back(std::move(node));
          node = Finish(std::move(select));
        }
      } else if (tok_.kind == TokenKind::kLBracket) {
        const size_t offset = tok_.offset;
        Advance();
        if (tok_.kind == TokenKind::kQuestion) return Fail(tok_.offset, "unsupported syntax '[?'");
        NodePtr key = Expr();
        if (!Expect(TokenKind::kRBracket, "']'")) return nullptr;
        auto index = Make(NodeKind::kIndex, offset);
        index->children.push_back(std::move(node));
        index->children.push_back(std::move(key));
        node = Finish(std::move(index));
      } else {
        break;
      }
    }
    return error_ ? nullptr : std::move(node);
  }

  std::vector<NodePtr> Args() {
    std::vector<NodePtr> args;
    Advance();  // '('
    if (tok_.kind == TokenKind::kRParen) {
      Advance();
      return args;
    }
    while (!error_) {
      args.push_back(Expr());
      if (error_) break;
      if (tok_.kind == TokenKind::kComma) {
        Advance();
        continue;
      }
      Expect(TokenKind::kRParen, "{')', ','}");
      break;
    }
    return args;
  }

  static bool IsSimpleName(const Node& n) { return n.kind == NodeKind::kIdent && n.name.front() != '.'; }

  NodePtr MemberCall(NodePtr target, const std::string& name, size_t open, std::vector<NodePtr> args) {
    // cel.bind(var, init, body) (ext.Bindings).
    if (name == "bind" && args.size() == 3 && target->kind == NodeKind::kIdent && target->name == "cel") {
      if (!IsSimpleName(*args[0])) return Fail(args[0]->offset, "cel.bind() variable name must be a simple identifier");
      auto bind = Make(NodeKind::kBind, open);
      bind->name = args[0]->name;
      bind->children.push_back(std::move(args[1]));
      bind->children.push_back(std::move(args[2]));
      return Finish(std::move(bind));
    }
    std::optional<ComprehensionKind> kind;
    if (args.size() == 2) {
      if (name == "all") kind = ComprehensionKind::kAll;
      if (name == "exists") kind = ComprehensionKind::kExists;
      if (name == "exists_one" || name == "existsOne") kind = ComprehensionKind::kExistsOne;
      if (name == "map") kind = ComprehensionKind::kMap;
      if (name == "filter") kind = ComprehensionKind::kFilter;
    } else if (args.size() == 3 && name == "map") {
      kind = ComprehensionKind::kMapFilter;
    }
    if (kind) {
      if (!IsSimpleName(*args[0])) return Fail(args[0]->offset, "argument must be a simple name");
      auto c = Make(NodeKind::kComprehension, open);
      c->comprehension = *kind;
      c->name = args[0]->name;
      c->children.push_back(std::move(target));
      for (size_t i = 1; i < args.size(); ++i) c->children.push_back(std::move(args[i]));
      return Finish(std::move(c));
    }
    auto call = Make(NodeKind::kCall, open);
    call->name = name;
    call->member = true;
    call->children.push_back(std::move(target));
    for (auto& a : args) call->children.push_back(std::move(a));
    return Finish(std::move(call));
  }

  NodePtr Primary(bool negative, size_t sign_offset) {
    if (error_) return nullptr;
    const Token tok = tok_;
    switch (tok.kind) {
      case TokenKind::kDot:
      case TokenKind::kIdent: {
        bool leading_dot = false;
        if (tok.kind == TokenKind::kDot) {
          leading_dot = true;
          Advance();
          if (tok_.kind != TokenKind::kIdent) {
            return Fail(tok_.offset,
                        "Syntax error: mismatched input '" + TokenDisplay(input_, tok_) + "' expecting IDENTIFIER");
          }
        }
        const Token ident = tok_;
        if (std::find(kReserved.begin(), kReserved.end(), ident.text) != kReserved.end()) {
          return Fail(ident.offset, "reserved identifier: " + ident.text);
        }
        Advance();
        if (tok_.kind == TokenKind::kLParen) {
          const size_t open = tok_.offset;
          std::vector<NodePtr> args = Args();
          if (error_) return nullptr;
          if (ident.text == "has" && !leading_dot && args.size() == 1) {
            if (args[0]->kind != NodeKind::kSelect) return Fail(args[0]->offset, "invalid argument to has() macro");
            args[0]->test_only = true;
            return std::move(args[0]);
          }
          auto call = Make(NodeKind::kCall, open);
          call->name = ident.text;
          call->children = std::move(args);
          return Finish(std::move(call));
        }
        auto node = Make(NodeKind::kIdent, ident.offset);
        node->name = leading_dot ? "." + ident.text : ident.text;
        return node;
      }
      case TokenKind::kLParen: {
        Advance();
        NodePtr e = Expr();
        if (!Expect(TokenKind::kRParen, "')'")) return nullptr;
        return e;
      }
      case TokenKind::kLBracket: {
        auto list = Make(NodeKind::kList, tok.offset);
        Advance();
        while (!error_ && tok_.kind != TokenKind::kRBracket) {
          if (tok_.kind == TokenKind::kQuestion) return Fail(tok_.offset, "unsupported syntax '?'");
          list->children.push_back(Expr());
          if (error_) return nullptr;
          if (tok_.kind == TokenKind::kComma) {
            Advance();
            continue;
          }
          if (!Expect(TokenKind::kRBracket, "{',', ']'}")) return nullptr;
          return Finish(std::move(list));
        }
        if (!Expect(TokenKind::kRBracket, "']'")) return nullptr;
        return Finish(std::move(list));
      }
      case TokenKind::kLBrace: {
        auto map = Make(NodeKind::kMap, tok.offset);
        Advance();
        while (!error_ && tok_.kind != TokenKind::kRBrace) {
          if (tok_.kind == TokenKind::kQuestion) return Fail(tok_.offset, "unsupported syntax '?'");
          map->children.push_back(Expr());
          if (!Expect(TokenKind::kColon, "':'")) return nullptr;
          map->children.push_back(Expr());
          if (error_) return nullptr;
          if (tok_.kind == TokenKind::kComma) {
            Advance();
            continue;
          }
          if (!Expect(TokenKind::kRBrace, "{',', '}'}")) return nullptr;
          return Finish(std::move(map));
        }
        if (!Expect(TokenKind::kRBrace, "'}'")) return nullptr;
        return Finish(std::move(map));
      }
      case TokenKind::kInt: {
        const size_t offset = negative ? sign_offset : tok.offset;
        auto node = Make(NodeKind::kConst, offset);
        constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        if (tok.overflow || tok.integer > kMaxPositive + (negative ? 1 : 0)) return Fail(offset, "invalid int literal");
        node->constant = negative ? static_cast<int64_t>(0 - tok.integer) : static_cast<int64_t>(tok.integer);
        Advance();
        return node;
      }
      case TokenKind::kUint: {
        if (tok.overflow) return Fail(tok.offset, "invalid uint literal");
        auto node = Make(NodeKind::kConst, tok.offset);
        node->constant = tok.integer;
        Advance();
        return node;
      }
      case TokenKind::kDouble: {
        const size_t offset = negative ? sign_offset : tok.offset;
        if (tok.overflow) return Fail(offset, "invalid double literal");
        auto node = Make(NodeKind::kConst, offset);
        node->constant = negative ? -tok.real : tok.real;
        Advance();
        return node;
      }
      case TokenKind::kString: {
        auto node = Make(NodeKind::kConst, tok.offset);
        node->constant = tok.text;
        Advance();
        return node;
      }
      case TokenKind::kBytes: {
        auto node = Make(NodeKind::kConst, tok.offset);
        node->constant = Bytes{tok.text};
        Advance();
        return node;
      }
      case TokenKind::kTrue:
      case TokenKind::kFalse: {
        auto node = Make(NodeKind::kConst, tok.offset);
        node->constant = tok.kind == TokenKind::kTrue;
        Advance();
        return node;
      }
      case TokenKind::kNull: {
        auto node = Make(NodeKind::kConst, tok.offset);
        node->constant = NullValue{};
        Advance();
        return node;
      }
      default:
        return Fail(tok.offset, "Syntax error: mismatched input '" + TokenDisplay(input_, tok) + "' expecting " +
                                    std::string(kPrimaryExpected));
    }
  }

  std::string_view input_;
  Lexer lexer_;
  Token tok_;
  std::optional<SyntaxError> error_;
  int nesting_ = 0;
};

}  // namespace

ParseResult Parse(std::string_view expression) { return Parser(expression).Run(); }

}  // namespace kubesched::cel
