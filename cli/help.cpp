#include "help.hpp"

#include <algorithm>
#include <sstream>

namespace cudadiag::cli {
namespace {

class HelpFormatter final : public CLI::Formatter {
public:
  explicit HelpFormatter(std::size_t width) : m_width(width) { column_width(30); }

  std::string make_option(const CLI::Option* option, bool is_positional) const override {
    return row(make_option_name(option, is_positional) + make_option_opts(option), make_option_desc(option));
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    return row(sub->get_display_name(true), sub->get_description());
  }

  std::string make_description(const CLI::App* app) const override {
    const auto description = app->get_description();
    return description.empty() ? std::string() : cli_support::wrap_text(description, m_width, "", "") + "\n";
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    auto out = CLI::Formatter::make_help(app, std::move(name), mode);
    const auto* parent = app->get_parent();
    if (mode != CLI::AppFormatMode::Normal || parent == nullptr) {
      return out;
    }
    out += "Global options (before or after `" + app->get_name() + "`):\n";
    for (const auto* option : parent->get_options()) {
      if (option->nonpositional() && option->get_name() != "--help") {
        out += make_option(option, false);
      }
    }
    return out;
  }

private:
  // "  NAME   description wrapped under itself", or NAME alone on its line when it is too long.
  std::string row(const std::string& left, const std::string& description) const {
    const auto column = get_column_width();
    std::string out = "  " + left;
    if (description.empty()) {
      return out + "\n";
    }
    const std::string indent(column, ' ');
    if (out.size() + 1 >= column) {
      return out + "\n" + cli_support::wrap_text(description, m_width, indent, indent);
    }
    out.append(column - out.size(), ' ');
    return cli_support::wrap_text(description, m_width, out, indent);
  }

  std::size_t m_width;
};

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) {
      names.push_back("--" + name);
    }
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The words CLI11 did not expect, from its message ("The following argument(s) was/were not expected: a b").
std::vector<std::string> unexpected_words(const std::string& message) {
  const auto colon = message.rfind(": ");
  std::vector<std::string> words;
  if (colon == std::string::npos) {
    return words;
  }
  std::istringstream in(message.substr(colon + 2));
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  return words;
}

// The subcommand the command line selected, else the top level.
const CLI::App& selected(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->parsed()) {
      return *sub;
    }
  }
  return app;
}

} // namespace

std::shared_ptr<CLI::Formatter> make_help_formatter(std::size_t width) {
  return std::make_shared<HelpFormatter>(std::max<std::size_t>(width, cli_support::k_min_width));
}

std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  std::string message = error.what();
  const auto& command = selected(app);
  const bool top = &command == &app;
  const auto see = " (see `cudadiag " + (top ? std::string() : command.get_name() + " ") + "--help`)";
  // Only words CLI11 did not expect get a "did you mean": in another error (a value out of range,
  // one that does not convert) the words after its colon are the value, not a misspelt name.
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) {
    return message + see;
  }
  auto options = long_option_names(app);
  if (!top) {
    const auto own = long_option_names(command);
    options.insert(options.end(), own.begin(), own.end());
  }
  const auto unexpected = unexpected_words(message);
  std::vector<std::string>
      typed; // the unexpected words in the order they were typed (CLI11 lists them reversed)
  for (int i = 1; i < argc; ++i) {
    if (std::find(unexpected.begin(), unexpected.end(), argv[i]) != unexpected.end() &&
        std::find(typed.begin(), typed.end(), argv[i]) == typed.end()) {
      typed.emplace_back(argv[i]);
    }
  }
  if (typed.empty()) {
    typed = unexpected;
  }
  std::string words;
  for (const auto& word : typed) {
    words += (words.empty() ? "" : " ") + word;
  }
  message = std::string(typed.size() == 1 ? "unexpected argument: " : "unexpected arguments: ") + words;
  std::string hint;
  for (const auto& word : typed) {
    const auto name = word.substr(0, word.find('='));
    if (name.starts_with("--")) {
      if (const auto guess = cli_support::closest_match(name, options)) {
        hint = "did you mean `" + *guess + "`?";
        break;
      }
    } else if (!name.starts_with("-") && top) {
      const auto commands = subcommand_names(app);
      std::string list;
      for (const auto& name_of : commands) {
        list += (list.empty() ? "" : ", ") + name_of;
      }
      const auto guess = cli_support::closest_match(name, commands);
      hint = (guess ? "did you mean `" + *guess + "`? " : std::string()) + "`" + name +
             "` is not a subcommand; the subcommands are " + list;
      break;
    }
  }
  if (!hint.empty()) {
    message += "; " + hint;
  }
  return message + see;
}

std::vector<cli_support::CompletionCommand>
completion_model(const CLI::App& app,
                 const std::function<std::vector<std::string>(const std::string&)>& words_for) {
  const auto options_of = [](const CLI::App& command) {
    std::vector<cli_support::CompletionOption> out;
    for (const auto* option : command.get_options()) {
      if (!option->nonpositional()) {
        continue;
      }
      cli_support::CompletionOption entry;
      for (const auto& name : option->get_snames()) {
        entry.names.push_back("-" + name);
      }
      for (const auto& name : option->get_lnames()) {
        entry.names.push_back("--" + name);
      }
      entry.help = option->get_description();
      entry.takes_value = option->get_type_size_max() > 0;
      out.push_back(std::move(entry));
    }
    return out;
  };
  std::vector<cli_support::CompletionCommand> commands;
  commands.push_back({"", app.get_description(), options_of(app), {}});
  for (const auto* sub : app.get_subcommands({})) {
    commands.push_back(
        {sub->get_name(), sub->get_description(), options_of(*sub), words_for(sub->get_name())});
  }
  return commands;
}

} // namespace cudadiag::cli
