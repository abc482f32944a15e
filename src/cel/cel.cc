#include "cel/cel.h"

#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cel/ast.h"
#include "cel/checker.h"
#include "cel/evaluator.h"
#include "cel/parser.h"
#include "cel/value.h"

namespace kubesched::cel {

class Program {
 public:
  std::string expression;
  std::unique_ptr<Node> root;
  int slots = 0;
};

namespace {

// cel-go's ToDisplayString: "ERROR: <input>:<line>:<column>: <message>", then the line and a
// caret under the column (columns count code points, from 1).
std::string Display(std::string_view expression, std::string_view message, size_t offset) {
  offset = std::min(offset, expression.size());
  size_t line_start = 0;
  int line = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (expression[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  size_t line_end = expression.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = expression.size();
  const std::string_view before = expression.substr(line_start, offset - line_start);
  const int64_t column = CodePoints(before);
  std::string snippet(expression.substr(line_start, line_end - line_start));
  for (char& c : snippet) {
    if (c == '\t') c = ' ';
  }
  std::string text = "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(column + 1) + ": " +
                     std::string(message) + "\n | " + snippet + "\n | ";
  text.append(static_cast<size_t>(column), '.');
  text += '^';
  return text;
}

Error MakeError(std::string_view expression, std::string message, size_t offset) {
  Error e;
  e.text = Display(expression, message, offset);
  e.message = std::move(message);
  e.offset = offset;
  return e;
}

CompileResult Fail(Error error) {
  CompileResult r;
  r.error = std::move(error);
  return r;
}

}  // namespace

CompileResult CompileDeviceSelector(std::string_view expression) {
  if (expression.size() > api::kCELSelectorExpressionMaxLength) {
    // The API's validation of selectors[].cel.expression (field.TooLong).
    Error e;
    e.message = "Too long: may not be more than " + std::to_string(api::kCELSelectorExpressionMaxLength) + " bytes";
    e.text = e.message;
    return Fail(std::move(e));
  }
  ParseResult parsed = Parse(expression);
  if (parsed.error) return Fail(MakeError(expression, parsed.error->message, parsed.error->offset));
  CheckResult checked = Check(*parsed.root);
  if (checked.error) return Fail(MakeError(expression, checked.error->message, checked.error->offset));
  const Type& type = parsed.root->type;
  if (type.kind() != TypeKind::kBool && !type.IsDynLike()) {
    // Upstream's check of the output type, after cel-go compiled the expression.
    Error e;
    e.message = "must evaluate to bool or the unknown type, not " + type.String();
    e.text = e.message;
    return Fail(std::move(e));
  }
  auto program = std::make_shared<Program>();
  program->expression = std::string(expression);
  program->root = std::move(parsed.root);
  program->slots = checked.slots;
  CompileResult r;
  r.program = std::move(program);
  return r;
}

EvalResult Evaluate(const Program& program, const DeviceView& device, int64_t cost_limit) {
  EvalContext ctx(device, cost_limit);
  if (program.slots > 0) ctx.slots.resize(static_cast<size_t>(program.slots));
  const Value v = Eval(*program.root, ctx);
  EvalResult r;
  r.cost = ctx.cost();
  if (ctx.cancelled()) {
    Error e;
    e.message = "operation cancelled: actual cost limit exceeded";
    e.text = e.message;
    r.error = std::move(e);
  } else if (v.IsError()) {
    const Error& e = ctx.ErrorOf(v);
    r.error = MakeError(program.expression, e.message, e.offset);
  } else if (v.kind == ValueKind::kBool) {
    r.matches = v.b;
  } else {
    Error e;
    e.message = "CEL result of type " + std::string(TypeName(v)) + " could not be converted to bool";
    e.text = e.message;
    r.error = std::move(e);
  }
  return r;
}

// A least-recently-used cache, as upstream's cel.Cache (k8s.io/utils/lru).
struct Cache::State {
  std::mutex mutex;
  size_t max_entries;
  //! Most recently used first; guarded by mutex.
  std::list<std::pair<std::string, CompileResult>> entries;
  //! Keys view the strings in `entries`; guarded by mutex.
  std::unordered_map<std::string_view, std::list<std::pair<std::string, CompileResult>>::iterator> index;
};

Cache::Cache(size_t max_entries) : state_(std::make_unique<State>()) {
  state_->max_entries = std::max<size_t>(max_entries, 1);
}

Cache::~Cache() = default;

CompileResult Cache::Get(std::string_view expression) {
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->index.find(expression);
    if (it != state_->index.end()) {
      state_->entries.splice(state_->entries.begin(), state_->entries, it->second);
      return it->second->second;
    }
  }
  // Compiled outside the lock, so that one long expression does not hold up lookups of others;
  // two threads compiling the same expression at once both get a valid result.
  CompileResult result = CompileDeviceSelector(expression);
  std::lock_guard lock(state_->mutex);
  auto it = state_->index.find(expression);
  if (it != state_->index.end()) return it->second->second;
  state_->entries.emplace_front(std::string(expression), result);
  state_->index.emplace(state_->entries.front().first, state_->entries.begin());
  if (state_->entries.size() > state_->max_entries) {
    state_->index.erase(state_->entries.back().first);
    state_->entries.pop_back();
  }
  return result;
}

}  // namespace kubesched::cel
