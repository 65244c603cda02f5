// SPDX-License-Identifier: MIT
#include "launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "exit_codes.h"
#include "usage.h"

namespace qpconnect::tools {
namespace {

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// True when `word` is an option of `specs` that takes a value in the next
// word ("-o FILE", "--output FILE"; not "--output=FILE" or "-oFILE").
bool TakesNextWord(const std::string& word, std::span<const OptionSpec> specs) {
  for (const OptionSpec& s : specs) {
    if (!s.takes_value) continue;
    if (word.size() == 2 && word[0] == '-' &&
        ((s.short_name != 0 && word[1] == s.short_name) ||
         s.also_short.find(word[1]) != std::string_view::npos ||
         s.deprecated_short.find(word[1]) != std::string_view::npos))
      return true;
    if (word.size() > 2 && word.compare(0, 2, "--") == 0 && word.substr(2) == s.long_name)
      return true;
  }
  return false;
}

}  // namespace

void SplitProgram(const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                  std::vector<std::string>& options, std::vector<std::string>& program) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    options.push_back(a);
    if (TakesNextWord(a, specs) && i + 1 < args.size()) options.push_back(args[++i]);
  }
  program.assign(args.begin() + static_cast<long>(i), args.end());
}

Result<std::string> FindLibrary(const std::string& library, const std::string& override_name,
                                const std::string& override_path, const std::string& self_dir,
                                const std::vector<std::string>& candidates) {
  if (!override_path.empty()) {
    if (!IsFile(override_path))
      return Error{ErrorCode::kNotFound, 0, override_name, "", override_path + " is not a file"};
    return std::filesystem::absolute(override_path).lexically_normal().string();
  }
  const std::filesystem::path self(self_dir);
  std::string tried;
  for (const std::string& c : candidates) {
    std::filesystem::path p =
        std::filesystem::path(c).is_absolute() ? std::filesystem::path(c) : self / c;
    p = p.lexically_normal();
    if (IsFile(p.string())) return p.string();
    tried += (tried.empty() ? "" : " nor at ") + p.string();
  }
  return Error{ErrorCode::kNotFound, 0, library, "",
               library + " is neither at " + tried + " (set " + override_name + ")"};
}

std::string SelfDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string PrependPath(const std::string& added, const char* existing) {
  if (existing == nullptr || *existing == '\0') return added;
  return added + ":" + existing;
}

int ExecProgram(const std::string& tool, std::vector<std::string> argv,
                const std::vector<std::pair<std::string, std::string>>& env, std::ostream& out,
                std::ostream& err) {
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  out.flush();
  execvp(cargv[0], cargv.data());
  const int e = errno;
  err << tool << ": " << argv[0] << ": " << std::strerror(e) << "\n";
  return e == ENOENT ? kExitNotFound : kExitCannotRun;
}

Result<ParsedArgs> ParseLauncherArgs(const std::vector<std::string>& args,
                                     std::span<const OptionSpec> specs, std::string_view verb,
                                     Launch& launch) {
  std::vector<std::string> options;
  SplitProgram(args, specs, options, launch.argv);
  Result<ParsedArgs> parsed = ParseArgs(options, specs);
  if (!parsed) return parsed.error();
  if (!parsed->positionals.empty()) return Usage("unexpected '" + parsed->positionals[0] + "'");
  if (launch.argv.empty()) return Usage("missing the PROGRAM to " + std::string(verb));
  return parsed;
}

int RunLauncher(const std::string& tool, const std::vector<std::string>& args,
                std::span<const OptionSpec> specs, const std::function<std::string()>& help,
                const std::function<Result<Launch>(const std::vector<std::string>&)>& prepare,
                std::ostream& out, std::ostream& err) {
  std::vector<std::string> options, program;
  SplitProgram(args, specs, options, program);
  Result<ParsedArgs> parsed = ParseArgs(options, specs);
  if (parsed) {
    if (auto answered = AnswerHelpOrVersion(*parsed, tool, help, out)) return *answered;
  }
  Result<Launch> launch = prepare(args);
  if (!launch) {
    const Error& e = launch.error();
    err << tool << ": " << (e.operation == "command line" ? "" : e.operation + ": ") << e.detail
        << "\n";
    if (e.code == ErrorCode::kInvalidArgument) err << "Try '" << tool << " --help'.\n";
    return kExitUsage;
  }
  PrintNotes(tool, launch->notes, err);
  return ExecProgram(tool, launch->argv, launch->env, out, err);
}

}  // namespace qpconnect::tools
