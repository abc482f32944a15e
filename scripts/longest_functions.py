#!/usr/bin/env python3
"""Report the longest function definitions in the project's non-test C++ code.

Scans every *.cc and *.h under src/ (skipping *_test.cc, *_test_util.h and src/testing/), or the files and
directories given as arguments, and prints one line per function definition, longest first:

    <lines>  <path>:<start line>  <name>

A function's length counts the lines from the one holding its name through its closing brace.
Lambdas and local classes count toward the function that contains them.

Usage:
    scripts/longest_functions.py [--top N] [--max-lines N] [--count] [PATH ...]

    --top N        how many functions to print (default 10; 0 prints all)
    --max-lines N  also report how many functions are longer than N lines, and exit 1 if any is
    --count        also print how many functions were found

The scanner is a small tokenizer plus a declaration-level parser, not a compiler: it skips
comments, string/character/raw-string literals and preprocessor lines (taking only the first
branch of #if/#else), and recognises definitions at namespace and class scope. It can be used as
a module: scan(text) returns [(name, start_line, end_line), ...] in source order.
"""

import argparse
import os
import sys

# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------

IDENT, NUMBER, STRING, CHAR, PUNCT = "ident", "number", "string", "char", "punct"

_PUNCTS = sorted(
    """<=> ... ->* <<= >>= :: -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= .* ##""".split(),
    key=len, reverse=True)
_RAW_PREFIXES = {"R", "LR", "uR", "UR", "u8R"}


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return f"Token({self.kind}, {self.text!r}, {self.line})"


def _is_ident_start(c):
    return c.isalpha() or c == "_" or c == "$"


def _is_ident_char(c):
    return c.isalnum() or c == "_" or c == "$"


class _Lexer:
    def __init__(self, text):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.line = 1
        self.tokens = []
        # #if stack: entries are [active, taken]; code is emitted only when all are active.
        self.cond = []

    # -- helpers ------------------------------------------------------------------------------

    def _active(self):
        return all(e[0] for e in self.cond)

    def _advance_to(self, j):
        """Moves to offset j, counting the newlines passed."""
        self.line += self.s.count("\n", self.i, j)
        self.i = j

    def _skip_block_comment(self):
        end = self.s.find("*/", self.i + 2)
        self._advance_to(self.n if end < 0 else end + 2)

    def _skip_line_comment(self):
        # A backslash at the end of a // comment splices the next line into the comment.
        j = self.i
        while True:
            end = self.s.find("\n", j)
            if end < 0:
                self._advance_to(self.n)
                return
            if self.s[j:end].rstrip("\r").endswith("\\"):
                j = end + 1
                continue
            self._advance_to(end)
            return

    def _skip_quoted(self, q):
        """Skips a "..." or '...' literal starting at self.i; stops at an unescaped newline."""
        j = self.i + 1
        s, n = self.s, self.n
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == q:
                j += 1
                break
            if c == "\n":  # unterminated: don't swallow the rest of the file
                break
            j += 1
        self._advance_to(min(j, n))

    def _skip_raw_string(self):
        """self.i is at the opening quote of R"delim( ... )delim"."""
        open_paren = self.s.find("(", self.i + 1, self.i + 20)
        if open_paren < 0:
            self._skip_quoted('"')
            return
        delim = self.s[self.i + 1:open_paren]
        end = self.s.find(")" + delim + '"', open_paren + 1)
        self._advance_to(self.n if end < 0 else end + len(delim) + 2)

    def _directive(self):
        """self.i is at '#' opening a preprocessor line: handles conditionals, skips the line."""
        s = self.s
        j = self.i + 1
        while j < self.n and s[j] in " \t":
            j += 1
        k = j
        while k < self.n and _is_ident_char(s[k]):
            k += 1
        name = s[j:k]
        # Find the end of the logical line (backslash continuations, block comments spanning lines).
        self.i = k
        text_parts = []
        seg_start = k
        while self.i < self.n:
            c = s[self.i]
            if c == "\n":
                if s[seg_start:self.i].rstrip("\r").endswith("\\"):
                    text_parts.append(s[seg_start:self.i].rstrip("\r")[:-1])
                    self.i += 1
                    self.line += 1
                    seg_start = self.i
                    continue
                break
            if c == "/" and s.startswith("/*", self.i):
                text_parts.append(s[seg_start:self.i])
                self._skip_block_comment()
                seg_start = self.i
                continue
            if c == "/" and s.startswith("//", self.i):
                text_parts.append(s[seg_start:self.i])
                self._skip_line_comment()
                seg_start = self.i
                continue
            if c in "\"'" and self._active():
                text_parts.append(s[seg_start:self.i])
                self._skip_quoted(c)
                seg_start = self.i
                continue
            self.i += 1
        text_parts.append(s[seg_start:self.i])
        cond = " ".join("".join(text_parts).split())
        if name in ("if", "ifdef", "ifndef"):
            taken = not (name == "if" and cond == "0")
            self.cond.append([taken, taken])
        elif name in ("elif", "elifdef", "elifndef") and self.cond:
            e = self.cond[-1]
            if e[1]:
                e[0] = False
            else:
                e[0] = e[1] = not (name == "elif" and cond == "0")
        elif name == "else" and self.cond:
            e = self.cond[-1]
            e[0] = not e[1]
            e[1] = True
        elif name == "endif" and self.cond:
            self.cond.pop()

    # -- main loop ----------------------------------------------------------------------------

    def run(self):
        s, n = self.s, self.n
        at_line_start = True
        while self.i < n:
            c = s[self.i]
            if c == "\n":
                self.line += 1
                self.i += 1
                at_line_start = True
                continue
            if c in " \t\r\f\v":
                self.i += 1
                continue
            if c == "\\" and self.i + 1 < n and s[self.i + 1] in "\r\n":  # line splice
                self.i += 1
                continue
            if c == "/" and s.startswith("/*", self.i):
                self._skip_block_comment()
                continue
            if c == "/" and s.startswith("//", self.i):
                self._skip_line_comment()
                continue
            if c == "#" and at_line_start:
                self._directive()
                continue
            at_line_start = False
            if not self._active():
                # Inactive #if branch: only comments and directives matter; skip the rest of the line.
                end = s.find("\n", self.i)
                j = self.i
                stop = n if end < 0 else end
                while j < stop:
                    if s.startswith("/*", j) or s.startswith("//", j):
                        break
                    j += 1
                self.i = j
                continue
            line = self.line
            if _is_ident_start(c):
                j = self.i + 1
                while j < n and _is_ident_char(s[j]):
                    j += 1
                word = s[self.i:j]
                if j < n and s[j] == '"' and word in _RAW_PREFIXES:
                    self.i = j
                    self._skip_raw_string()
                    self.tokens.append(Token(STRING, '""', line))
                    continue
                self.i = j
                self.tokens.append(Token(IDENT, word, line))
                continue
            if c.isdigit() or (c == "." and self.i + 1 < n and s[self.i + 1].isdigit()):
                j = self.i + 1
                while j < n:
                    d = s[j]
                    if d in "eEpP" and j + 1 < n and s[j + 1] in "+-":
                        j += 2
                    elif _is_ident_char(d) or d == ".":
                        j += 1
                    elif d == "'" and j + 1 < n and _is_ident_char(s[j + 1]):  # digit separator
                        j += 2
                    else:
                        break
                self.tokens.append(Token(NUMBER, s[self.i:j], line))
                self.i = j
                continue
            if c == '"':
                self._skip_quoted('"')
                self.tokens.append(Token(STRING, '""', line))
                continue
            if c == "'":
                self._skip_quoted("'")
                self.tokens.append(Token(CHAR, "''", line))
                continue
            for p in _PUNCTS:
                if s.startswith(p, self.i):
                    self.tokens.append(Token(PUNCT, p, line))
                    self.i += len(p)
                    break
            else:
                self.tokens.append(Token(PUNCT, c, line))
                self.i += 1
        return self.tokens


def _merge_operator_names(tokens):
    """Folds `operator` and the symbol or type after it into one IDENT token ("operator()",
    "operator<=>", "operator bool", ...), so the parser sees operator functions as plain names."""
    out = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t.kind != IDENT or t.text != "operator" or i + 1 >= n:
            out.append(t)
            i += 1
            continue
        nxt = tokens[i + 1]
        j = i + 1
        if nxt.text in ("(", "[") and i + 2 < n and tokens[i + 2].text == {"(": ")", "[": "]"}[nxt.text]:
            name, j = "operator" + nxt.text + tokens[i + 2].text, i + 3
        elif nxt.text in ("new", "delete"):
            name, j = "operator " + nxt.text, i + 2
            if j + 1 < n and tokens[j].text == "[" and tokens[j + 1].text == "]":
                name, j = name + "[]", j + 2
        elif nxt.kind == STRING:  # user-defined literal: operator""_suffix
            j = i + 2
            name = 'operator""'
            if j < n and tokens[j].kind == IDENT:
                name += tokens[j].text
                j += 1
        elif nxt.kind == PUNCT and nxt.text not in ("(", ";", "{", ")"):
            name, j = "operator" + nxt.text, i + 2
        else:  # conversion operator: the type up to the parameter list
            parts = []
            while j < n and tokens[j].text not in ("(", ";", "{", ")"):
                parts.append(tokens[j].text)
                j += 1
            name = "operator " + _join_tokens(parts)
        out.append(Token(IDENT, name, t.line))
        i = j
    return out


def _join_tokens(texts):
    out = ""
    for x in texts:
        if out and (_is_ident_char(out[-1]) and _is_ident_char(x[0])):
            out += " "
        out += x
    return out


def tokenize(text):
    return _merge_operator_names(_Lexer(text).run())


def _match_brackets(tokens):
    """match[i] is the index of the bracket closing tokens[i] (for openers), else None. Tolerant of
    mismatches: an unmatched opener is matched to the last token."""
    match = [None] * len(tokens)
    stack = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for i, t in enumerate(tokens):
        if t.kind != PUNCT:
            continue
        if t.text in "([{" and len(t.text) == 1:
            stack.append(i)
        elif t.text in pairs and len(t.text) == 1:
            want = pairs[t.text]
            if stack and tokens[stack[-1]].text == want:
                match[stack.pop()] = i
            elif any(tokens[k].text == want for k in stack):
                while tokens[stack[-1]].text != want:
                    match[stack.pop()] = i - 1
                match[stack.pop()] = i
    for k in stack:
        match[k] = len(tokens) - 1
    return match


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------

# Keywords that may precede a parenthesised group that is not a parameter list.
_NOT_NAMES = {
    "decltype", "noexcept", "requires", "alignas", "alignof", "sizeof", "typeid", "static_assert",
    "__attribute__", "__declspec", "explicit", "if", "while", "for", "switch", "return", "catch",
    "throw", "co_return", "co_await", "co_yield", "new", "delete", "void", "int", "char", "bool",
    "float", "double", "long", "short", "unsigned", "signed", "auto", "const", "volatile",
    "constexpr", "consteval", "constinit", "static", "inline", "virtual", "extern", "mutable",
    "thread_local", "typename", "template", "using", "typedef", "friend", "default", "case",
    "operator", "__declspec", "asm", "__asm__",
}
_CLASS_KEYS = {"class", "struct", "union"}
_ACCESS = {"public", "private", "protected"}
_LEADING_SPECIFIERS = {"inline", "export", "friend", "typedef", "static", "constexpr", "extern",
                       "virtual", "explicit", "consteval", "constinit"}


class _Scope:
    __slots__ = ("kind", "name")

    def __init__(self, kind, name=""):
        self.kind, self.name = kind, name  # kind: "ns" or "class"


def _strip_prefix(tokens, match, head):
    """Skips template<...> headers, attributes and leading specifiers; returns the remaining head."""
    k = 0
    while k < len(head):
        t = tokens[head[k]]
        if t.text == "template" and k + 1 < len(head) and tokens[head[k + 1]].text == "<":
            depth, k = 0, k + 1
            while k < len(head):
                x = tokens[head[k]].text
                if x == "<":
                    depth += 1
                elif x == ">":
                    depth -= 1
                elif x == ">>":
                    depth -= 2
                k += 1
                if depth <= 0:
                    break
            continue
        if t.text == "[" and match[head[k]] is not None and k + 1 < len(head) and \
                tokens[head[k]].text == "[" and tokens[match[head[k]] - 1].text == "]":
            k += 1  # [[attribute]] (grouped as one item)
            continue
        if t.text in ("__attribute__", "alignas", "__declspec") and k + 1 < len(head):
            k += 2
            continue
        if t.text in _LEADING_SPECIFIERS:
            k += 1
            continue
        if t.text == "requires" and k + 1 < len(head) and tokens[head[k + 1]].text == "(":
            k += 2
            continue
        break
    return head[k:]


def _find_params(tokens, match, head):
    """Index in head of the parameter list of a function declarator, or None. Stops at a
    top-level '=' (an initialiser: `auto f = [](int) {...}`, `Foo kTable[] = {...}`)."""
    angle = 0
    for k, idx in enumerate(head):
        t = tokens[idx]
        x = t.text
        if t.kind == PUNCT:
            if x == "<" and k > 0 and tokens[head[k - 1]].kind == IDENT and \
                    (tokens[head[k - 1]].text not in _NOT_NAMES or tokens[head[k - 1]].text == "template"):
                angle += 1
            elif x == ">" and angle > 0:
                angle -= 1
            elif x == ">>" and angle > 0:
                angle = max(0, angle - 2)
            elif x == "=" and angle == 0:
                return None
            elif x == "(" and angle == 0 and k > 0:
                prev = tokens[head[k - 1]]
                if prev.kind == IDENT and prev.text not in _NOT_NAMES:
                    return k
                if prev.text in (">", ">>"):  # F<int>(...): a template-id, if the '<' follows a name
                    j, depth = k - 1, 0
                    while j >= 0:
                        y = tokens[head[j]].text
                        if y in (">", ">>"):
                            depth += len(y)
                        elif y == "<":
                            depth -= 1
                            if depth == 0:
                                break
                        j -= 1
                    if j > 0 and tokens[head[j - 1]].kind == IDENT and tokens[head[j - 1]].text not in _NOT_NAMES:
                        return k
    return None


def _declarator_name(tokens, head, k):
    """The name before head[k], the parameter list; returns (text as written, index of its first
    token in tokens, whether it is qualified)."""
    parts = []
    j = k - 1
    first = head[j]
    while j >= 0:
        t = tokens[head[j]]
        if t.text in (">", ">>"):  # template arguments: Foo<T>::Bar, F<int>(...)
            depth, m = 0, j
            while m >= 0:
                y = tokens[head[m]].text
                if y in (">", ">>"):
                    depth += len(y)
                elif y == "<":
                    depth -= 1
                    if depth <= 0:
                        break
                m -= 1
            if m <= 0:
                break
            parts.append(_join_tokens([tokens[head[q]].text for q in range(m, j + 1)]))
            j = m - 1
            t = tokens[head[j]]
        if t.kind != IDENT:
            break
        parts.append(t.text)
        first = head[j]
        j -= 1
        if j >= 0 and tokens[head[j]].text == "~":
            parts[-1] = "~" + parts[-1]
            first = head[j]
            j -= 1
        if j >= 0 and tokens[head[j]].text == "::":
            parts.append("::")
            j -= 1
            continue
        break
    if parts and parts[-1] == "::":  # ::GlobalFunction
        parts.pop()
    return "".join(reversed(parts)), first, "::" in parts


def _class_name(tokens, head):
    """Name of the class whose head is given (first token is the class key)."""
    parts = []
    k = 1
    while k < len(head):
        t = tokens[head[k]]
        if t.text in ("__attribute__", "alignas", "__declspec"):
            k += 2
            continue
        if t.text == "[":
            k += 1
            continue
        break
    while k < len(head):
        t = tokens[head[k]]
        if t.kind == IDENT and t.text != "final":
            if parts and parts[-1] != "::":  # `class EXPORT_MACRO Name`
                parts = []
            parts.append(t.text)
        elif t.text == "::":
            parts.append("::")
        elif t.text == "<":
            depth = 0
            start = k
            while k < len(head):
                y = tokens[head[k]].text
                depth += {"<": 1, ">": -1, ">>": -2}.get(y, 0)
                if depth <= 0:
                    break
                k += 1
            parts.append(_join_tokens([tokens[head[q]].text for q in range(start, min(k, len(head) - 1) + 1)]))
        else:
            break
        k += 1
    return "".join(parts)


def scan_tokens(tokens):
    match = _match_brackets(tokens)
    results = []
    scopes = [_Scope("ns")]
    head = []  # token indices of the current declaration; bracket groups appear as their opener
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        x = t.text
        if t.kind != PUNCT:
            head.append(i)
            i += 1
            continue
        if x == ";":
            head = []
            i += 1
            continue
        if x == "}":
            if len(scopes) > 1:
                scopes.pop()
            head = []
            i += 1
            continue
        if x in (")", "]"):  # stray closer
            i += 1
            continue
        if x == ":" and scopes[-1].kind == "class" and len(head) == 1 and tokens[head[0]].text in _ACCESS:
            head = []
            i += 1
            continue
        if x in ("(", "["):
            head.append(i)
            i = match[i] + 1
            continue
        if x != "{":
            head.append(i)
            i += 1
            continue

        # An opening brace at namespace or class scope: what does it open?
        decl = _strip_prefix(tokens, match, head)
        first = tokens[decl[0]].text if decl else ""
        if first == "namespace" or \
                (len(head) == 2 and tokens[head[0]].text == "extern" and tokens[head[1]].kind == STRING):
            scopes.append(_Scope("ns"))
            head = []
            i += 1
            continue
        if first == "enum":
            head.append(i)
            i = match[i] + 1
            continue
        params = _find_params(tokens, match, decl)
        if first in _CLASS_KEYS and params is None:
            scopes.append(_Scope("class", _class_name(tokens, decl)))
            head = []
            i += 1
            continue
        if not decl or params is None:  # brace initialiser of a variable, or something unknown
            head.append(i)
            i = match[i] + 1
            continue
        after = [tokens[h].text for h in decl[params + 1:]]
        if ":" in after and decl:
            # Constructor initialiser list: `a_{x}` / `Base<T>{}` are initialisers; the body
            # follows a ')' or '}' (or '...').
            prev = tokens[decl[-1]]
            if (prev.kind == IDENT and prev.text != "try") or prev.text == ">":
                head.append(i)
                i = match[i] + 1
                continue
        name, name_tok, qualified = _declarator_name(tokens, decl, params)
        if not name:
            head.append(i)
            i = match[i] + 1
            continue
        if not qualified:
            prefix = "::".join(s.name for s in scopes if s.kind == "class" and s.name)
            if prefix:
                name = prefix + "::" + name
        end = match[i]
        if "try" in after:  # function-try-block: the handlers belong to the function
            while end + 2 < n and tokens[end + 1].text == "catch" and tokens[end + 2].text == "(":
                k = match[end + 2] + 1
                if k < n and tokens[k].text == "{":
                    end = match[k]
                else:
                    break
        results.append((name, tokens[name_tok].line, tokens[end].line))
        head = []
        i = end + 1
    return results


def scan(text):
    """Returns [(name, start_line, end_line), ...] for the function definitions in C++ source text."""
    return scan_tokens(tokenize(text))


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_test_path(rel):
    rel = rel.replace(os.sep, "/")
    return (rel.endswith(("_test.cc", "_test_util.h")) or rel.startswith("src/testing/")
            or "/src/testing/" in rel)


def collect_files(paths):
    """Files to scan: the given files, plus *.cc and *.h under the given directories (test code
    skipped there); by default everything under src/."""
    explicit = bool(paths)
    if not explicit:
        paths = [os.path.join(REPO_ROOT, "src")]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                for f in sorted(filenames):
                    if not f.endswith((".cc", ".h")):
                        continue
                    full = os.path.join(dirpath, f)
                    if _is_test_path(_relpath(full)):
                        continue
                    files.append(full)
        elif os.path.isfile(p):
            files.append(p)
        else:
            print(f"longest_functions: no such file or directory: {p}", file=sys.stderr)
            sys.exit(2)
    return files


def _relpath(path):
    full = os.path.abspath(path)
    rel = os.path.relpath(full, REPO_ROOT)
    return path if rel.startswith("..") else rel


def main(argv=None):
    ap = argparse.ArgumentParser(description="Report the longest C++ function definitions.")
    ap.add_argument("paths", nargs="*", help="files or directories to scan (default: src/)")
    ap.add_argument("--top", type=int, default=10, help="how many to print (0: all; default 10)")
    ap.add_argument("--max-lines", type=int, default=None,
                    help="count functions longer than this, and exit 1 if there are any")
    ap.add_argument("--count", action="store_true", help="also print how many functions were found")
    args = ap.parse_args(argv)

    found = []  # (lines, path, start, name)
    for path in collect_files(args.paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rel = _relpath(path)
        for name, start, end in scan(text):
            found.append((end - start + 1, rel, start, name))
    found.sort(key=lambda r: (-r[0], r[1], r[2]))

    shown = found if args.top <= 0 else found[:args.top]
    for lines, rel, start, name in shown:
        print(f"{lines}  {rel}:{start}  {name}")
    if args.count:
        print(f"{len(found)} functions found")
    if args.max_lines is not None:
        over = sum(1 for r in found if r[0] > args.max_lines)
        print(f"{over} function(s) longer than {args.max_lines} lines")
        return 1 if over else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
