#include "cmd/cli.h"

#include <charconv>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

namespace kubesched::cmd {
namespace {

constexpr std::string_view kProgram = "kubesched";

std::string Quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

// "a, b or c".
std::string JoinOr(const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += values[i];
  }
  return out;
}

bool IsDecimal(std::string_view s) {
  if (s.starts_with('-') || s.starts_with('+')) s.remove_prefix(1);
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The deepest subcommand the command line selected (the app itself when none).
const CLI::App* SelectedCommand(const CLI::App& app) {
  const CLI::App* cmd = &app;
  while (true) {
    auto subs = cmd->get_subcommands();
    if (subs.empty()) return cmd;
    cmd = subs.front();
  }
}

// "kubesched simulate" for a subcommand, "kubesched" for the program.
std::string CommandPath(const CLI::App* command) {
  std::string path;
  for (const CLI::App* c = command; c != nullptr && c->get_parent() != nullptr; c = c->get_parent()) {
    path = path.empty() ? c->get_name() : c->get_name() + " " + path;
  }
  return path.empty() ? std::string(kProgram) : std::string(kProgram) + " " + path;
}

// An option's names as the user may have typed them: "-o/--output".
std::string OptionNames(const CLI::App* command, const std::string& name) {
  for (const CLI::App* c = command; c != nullptr; c = c->get_parent()) {
    if (const CLI::Option* opt = c->get_option_no_throw(name)) {
      std::string names = opt->get_name(false, true);
      for (char& ch : names) {
        if (ch == ',') ch = '/';
      }
      return names;
    }
  }
  return name;
}

const CLI::Option* FindOption(const CLI::App* command, const std::string& name) {
  for (const CLI::App* c = command; c != nullptr; c = c->get_parent()) {
    if (const CLI::Option* opt = c->get_option_no_throw(name)) return opt;
  }
  return nullptr;
}

// "<name>: <rest>" as CLI11 words ValidationError and ArgumentMismatch.
std::pair<std::string, std::string> SplitName(const std::string& what) {
  size_t colon = what.find(": ");
  if (colon == std::string::npos) return {"", what};
  return {what.substr(0, colon), what.substr(colon + 2)};
}

// What an option expects: the name of its first validator (the validators below are named by
// what they accept, which keeps --help as it was).
std::string Expected(const CLI::Option* opt) {
  if (opt != nullptr) {
    try {
      std::string expected = const_cast<CLI::Option*>(opt)->get_validator()->get_name();
      if (!expected.empty()) return expected;
    } catch (const CLI::OptionNotFound&) {
    }
  }
  return "a value";
}

std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* command = SelectedCommand(app);
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    auto [name, rest] = SplitName(what);
    constexpr std::string_view kNoFile = "File does not exist: ";  // CLI::ExistingFile
    if (rest.starts_with(kNoFile)) {
      rest = fmt::format("no such file {} (expected an existing file)", Quoted(rest.substr(kNoFile.size())));
    }
    return fmt::format("{}: {}", OptionNames(command, name), rest);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    auto [name, rest] = SplitName(what);
    return fmt::format("{}: missing value (expected {})", OptionNames(command, name),
                       Expected(FindOption(command, name)));
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    // "Could not convert: --v = abc"
    constexpr std::string_view kPrefix = "Could not convert: ";
    if (what.starts_with(kPrefix)) {
      std::string rest = what.substr(kPrefix.size());
      size_t eq = rest.find(" = ");
      if (eq != std::string::npos) {
        std::string name = rest.substr(0, eq);
        return fmt::format("{}: invalid value {} (expected {})", OptionNames(command, name),
                           Quoted(rest.substr(eq + 3)), Expected(FindOption(command, name)));
      }
    }
    return what;
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    // "--filename is required", or "A subcommand is required".
    constexpr std::string_view kSuffix = " is required";
    if (what.ends_with(kSuffix) && what.starts_with('-')) {
      return fmt::format("{}: required flag not set",
                         OptionNames(command, what.substr(0, what.size() - kSuffix.size())));
    }
    return what;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> extras = app.remaining(true);
    if (extras.empty()) return what;
    const std::string& first = extras.front();
    if (first.starts_with('-')) {
      std::vector<std::string> flags;
      for (const CLI::App* c = command; c != nullptr; c = c->get_parent()) {
        for (const CLI::Option* opt : c->get_options()) {
          if (opt == c->get_help_ptr() || opt->get_group().empty()) continue;
          flags.push_back(OptionNames(c, opt->get_name()));
        }
      }
      return fmt::format("{}: unknown flag (expected {})", first.substr(0, first.find('=')), JoinOr(flags));
    }
    if (command == &app) {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(sub->get_name());
      }
      return fmt::format("{}: unknown command (expected {})", first, JoinOr(names));
    }
    return fmt::format("{}: unexpected argument ({} takes no arguments)", first, CommandPath(command));
  }
  return what;
}

}  // namespace

CLI::Validator OneOf(std::vector<std::string> values, std::string help) {
  std::string expected = JoinOr(values);
  return CLI::Validator(
      [values = std::move(values), expected](std::string& input) -> std::string {
        for (const auto& v : values) {
          if (input == v) return {};
        }
        return fmt::format("unsupported value {} (expected {})", Quoted(input), expected);
      },
      std::move(help), expected);
}

CLI::Validator IntegerInRange(int64_t min, int64_t max, std::string expected, std::string help) {
  return CLI::Validator(
      [min, max, expected](std::string& input) -> std::string {
        int64_t v = 0;
        std::string_view digits = input;
        if (digits.starts_with('+')) digits.remove_prefix(1);
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        bool parsed = IsDecimal(input) && ec == std::errc() && ptr == digits.data() + digits.size();
        if (parsed && v >= min && v <= max) return {};
        return fmt::format("invalid value {} (expected {})", Quoted(input), expected);
      },
      std::move(help), expected);
}

CLI::Validator NonNegativeInteger() {
  const std::string expected = "a non-negative integer";
  return CLI::Validator(
      [expected](std::string& input) -> std::string {
        uint64_t v = 0;
        std::string_view digits = input;
        if (digits.starts_with('+')) digits.remove_prefix(1);
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (!input.starts_with('-') && IsDecimal(input) && ec == std::errc() && ptr == digits.data() + digits.size()) {
          return {};
        }
        return fmt::format("invalid value {} (expected {})", Quoted(input), expected);
      },
      "", expected);
}

std::string UsageHint(const CLI::App* command) {
  return fmt::format("Run '{} --help' for usage.", CommandPath(command));
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "error: " << UsageErrorMessage(app, e) << "\n" << UsageHint(SelectedCommand(app)) << "\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace kubesched::cmd
