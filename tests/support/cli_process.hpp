// The agentware program started as a user starts it, for the tests of its
// commands: in a folder, with no standard input, its standard output and
// error together in a file.
#ifndef AGENTWARE_TESTS_SUPPORT_CLI_PROCESS_HPP
#define AGENTWARE_TESTS_SUPPORT_CLI_PROCESS_HPP

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

namespace agentware::test {

/// In a forked child: runs `args` (the program first), or ends the child with 127.
[[noreturn]] inline void exec_or_exit(std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
}

/// Starts `program` with `args` in `dir`, its output into `out_file`; the
/// child's pid, or -1 when it could not be forked.
inline pid_t start_cli(const char* program, const std::filesystem::path& dir,
                       const std::filesystem::path& out_file, std::vector<std::string> args) {
    std::fflush(nullptr); // the child must not write out the test's own buffered output again
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    std::FILE* out = std::freopen(out_file.c_str(), "w", stdout);
    if (out == nullptr || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
    if (!std::freopen("/dev/null", "r", stdin)) ::_exit(126);
    args.insert(args.begin(), program);
    exec_or_exit(args);
}

} // namespace agentware::test

#endif
