#!/usr/bin/env python3
"""Self-test for longest_functions.py: feeds the scanner C++ snippets and checks what it finds.

Run: python3 scripts/longest_functions_test.py
"""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import longest_functions as lf  # noqa: E402


def by_name(text):
    """{name: (start_line, length)}; fails on duplicate names."""
    out = {}
    for name, start, end in lf.scan(text):
        assert name not in out, f"duplicate {name}"
        out[name] = (start, end - start + 1)
    return out


class LiteralsAndComments(unittest.TestCase):
    def test_raw_string_with_braces_and_quotes(self):
        text = '''\
std::string_view Style() {
  return R"css(
  body { color: "red"; }
  }}} { " ' )" not the end
)css";
}
void After() {}
'''
        self.assertEqual(by_name(text), {"Style": (1, 6), "After": (7, 1)})

    def test_raw_string_at_namespace_scope(self):
        text = '''\
constexpr std::string_view kScript = R"js(
  function search() {
    index.forEach(function (e) {
  });
)js";
int F() { return 1; }
'''
        self.assertEqual(by_name(text), {"F": (6, 1)})

    def test_raw_string_with_prefix_and_format_braces(self):
        text = '''\
std::string Patch(int n) {
  return fmt::format(u8R"({{"spec":{{"replicas":{}}}}})", n) + LR"x(})x";
}
'''
        self.assertEqual(by_name(text), {"Patch": (1, 3)})

    def test_comments_with_braces(self):
        text = '''\
// void NotAFunction() {
/* int Nor() { return 0; }
   } } { */
int G(int x) {  // a { in a comment
  /* } */ return x;
}
'''
        self.assertEqual(by_name(text), {"G": (4, 3)})

    def test_strings_and_char_literals(self):
        text = '''\
char Open() { return '{'; }
char Close() {
  const char* s = "}\\" {";
  return '}' == s[0] ? '\\'' : '"';
}
'''
        self.assertEqual(by_name(text), {"Open": (1, 1), "Close": (2, 4)})

    def test_digit_separators_are_not_char_literals(self):
        text = '''\
long Big() {
  return 1'000'000 + 0x1'FF;
}
long Small() { return 3'600; }
'''
        self.assertEqual(by_name(text), {"Big": (1, 3), "Small": (4, 1)})

    def test_preprocessor_lines(self):
        text = '''\
#include <map>
#define BODY(x) void x() { \\
  }
#if defined(__x86_64__)
void Pause() {
  _mm_pause();
#else
void Pause() {
  yield();
#endif
}
#if 0
void Dead() {
#endif
int Live() { return 0; }
'''
        self.assertEqual(by_name(text), {"Pause": (5, 7), "Live": (15, 1)})


class Declarations(unittest.TestCase):
    def test_in_class_and_out_of_line_methods(self):
        text = '''\
namespace a {
class Foo : public Bar<int> {
 public:
  Foo() = default;
  ~Foo() override;
  int Get() const { return x_; }
  void Set(int x) noexcept {
    x_ = x;
  }
  Foo& operator=(const Foo&) = delete;
  bool operator()(int a) const { return a > 0; }
  auto operator<=>(const Foo&) const = default;
  explicit operator bool() const { return x_ != 0; }
  struct Inner {
    int operator[](int i) const { return i; }
  };

 private:
  int x_ = 0;
  std::vector<int> v_{1, 2, 3};
};
}  // namespace a
'''
        self.assertEqual(by_name(text), {
            "Foo::Get": (6, 1),
            "Foo::Set": (7, 3),
            "Foo::operator()": (11, 1),
            "Foo::operator bool": (13, 1),
            "Foo::Inner::operator[]": (15, 1),
        })

    def test_out_of_line_nested_qualified_method(self):
        text = '''\
namespace x::y {
std::map<int, std::string>
A::B::C(int a,
        int b) const {
  return {};
}
A::B::~B() {}
template <typename T>
T Box<T>::Get() const& {
  return t_;
}
}  // namespace x::y
'''
        self.assertEqual(by_name(text), {"A::B::C": (3, 4), "A::B::~B": (7, 1), "Box<T>::Get": (9, 3)})

    def test_constructor_with_initialiser_list(self):
        text = '''\
Foo::Foo(int a, std::string b)
    : Base{a},
      a_(a),
      b_{std::move(b)},
      c_([this] { return a_; }),
      d_(std::vector<int>{1, 2}) {
  Init();
}
Bar::Bar() : x_{0} {}
'''
        self.assertEqual(by_name(text), {"Foo::Foo": (1, 8), "Bar::Bar": (9, 1)})

    def test_lambdas_and_local_classes_count_toward_the_function(self):
        text = '''\
int Outer(std::vector<int>& v) {
  auto cmp = [](int a, int b) {
    return a < b;
  };
  struct Local {
    int F() { return 1; }
  };
  std::sort(v.begin(), v.end(), cmp);
  return Local{}.F();
}
'''
        self.assertEqual(by_name(text), {"Outer": (1, 10)})

    def test_brace_initialisers_are_not_functions(self):
        text = '''\
namespace {
struct Unit { std::string_view name; int64_t ns; };
constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1'000},
};
std::map<std::string, int> kMap{{"a", 1}, {"b", 2}};
const auto kLambda = [](int x) {
  return x + 1;
};
std::function<void(int)> kCallback{[](int) {}};
enum class Color : int { kRed, kGreen };
}  // namespace
int Used() { return kUnits[0].ns; }
'''
        self.assertEqual(by_name(text), {"Used": (14, 1)})

    def test_default_and_deleted_declarations(self):
        text = '''\
struct S {
  S() = default;
  S(const S&) = delete;
  virtual ~S() = default;
  virtual void Pure() = 0;
  void Declared(int x = 1);
  bool operator==(const S&) const = default;
};
'''
        self.assertEqual(by_name(text), {})

    def test_nested_namespaces(self):
        text = '''\
namespace kubesched::util {
namespace {
inline namespace v1 {
void Hidden() {}
}
}  // namespace
extern "C" {
int c_function(void) { return 0; }
}
void Visible() {
}
}  // namespace kubesched::util
'''
        self.assertEqual(by_name(text), {"Hidden": (4, 1), "c_function": (8, 1), "Visible": (10, 2)})

    def test_function_try_block(self):
        text = '''\
int Parse(const std::string& s) try {
  return std::stoi(s);
} catch (const std::invalid_argument&) {
  return -1;
} catch (...) {
  return -2;
}
Foo::Foo() try : a_(1) {
} catch (...) {
}
'''
        self.assertEqual(by_name(text), {"Parse": (1, 7), "Foo::Foo": (8, 3)})

    def test_trailing_return_requires_and_templates(self):
        text = '''\
template <typename F>
  requires(std::is_invocable_v<F&, int>)
LoopBody(F&& f) : object_(&f) {}
auto Name() -> std::string {
  return "x";
}
template <typename T, typename = std::enable_if_t<(sizeof(T) > 1)>>
decltype(auto) Forward(T&& t) noexcept(noexcept(T(t))) {
  return t;
}
template <typename T>
void Constrained(T t) requires std::integral<T> {
  (void)t;
}
template <>
void Special<int>(int) {}
[[nodiscard]] static inline int Attr() { return 0; }
'''
        self.assertEqual(by_name(text), {
            "LoopBody": (3, 1),
            "Name": (4, 3),
            "Forward": (8, 3),
            "Constrained": (12, 3),
            "Special<int>": (16, 1),
            "Attr": (17, 1),
        })

    def test_free_operators_and_friends(self):
        text = '''\
std::ostream& operator<<(std::ostream& out, const Foo& f) {
  return out << f.x;
}
class Foo {
  friend bool operator==(const Foo& a, const Foo& b) { return a.x == b.x; }
};
'''
        self.assertEqual(by_name(text), {"operator<<": (1, 3), "Foo::operator==": (5, 1)})


class CommandLine(unittest.TestCase):
    def test_output_and_max_lines(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.cc"), "w") as f:
                f.write("void Short() {}\n\nvoid Long() {\n  a();\n  b();\n}\n")
            with open(os.path.join(d, "a_test.cc"), "w") as f:
                f.write("void Skipped() {\n\n\n\n\n\n}\n")
            out = io.StringIO()
            with redirect_stdout(out):
                rc = lf.main([d, "--top", "0", "--max-lines", "3"])
            lines = out.getvalue().splitlines()
            self.assertEqual(rc, 1)
            self.assertEqual(len(lines), 3)
            self.assertRegex(lines[0], r"^4  .*a\.cc:3  Long$")
            self.assertRegex(lines[1], r"^1  .*a\.cc:1  Short$")
            self.assertEqual(lines[2], "1 function(s) longer than 3 lines")
            with redirect_stdout(io.StringIO()):
                self.assertEqual(lf.main([d, "--max-lines", "4"]), 0)
                self.assertEqual(lf.main([d]), 0)


if __name__ == "__main__":
    unittest.main()
