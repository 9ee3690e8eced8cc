#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_AUDIT_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_AUDIT_HPP

// sandbox_audit: every `bash` command is screened before it runs and logged
// (DeerFlow's SandboxAuditMiddleware). High-risk commands (wiping the file
// system, writing to system files, piping downloads into a shell, fork
// bombs, ...) are not run: the model gets "Command blocked: ...". Medium-risk
// ones (installing packages, sudo, chmod 777, changing PATH) run, and a
// warning is appended to their result. Each call writes one JSON line
// {timestamp, thread_id, command, verdict} to the audit log.
//
// DeerFlow matches a list of regular expressions. Here the command is read
// once by a small shell lexer (quotes, pipes, separators, redirections,
// command substitutions) into simple commands, and the classes are checked on
// those: one pass over the text, and `"rm" -rf /`, `rm -r -f /` or
// `x=$(curl ...)` are recognised whatever the spacing and quoting.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct sandbox_audit_options {
    std::size_t max_command_chars = 10000;  ///< longer commands are blocked ("command too long")
    std::string audit_log;                  ///< a file the JSON lines are appended to; empty: none
    bool warn_medium_risk = true;           ///< append the warning to medium-risk results
    std::vector<std::string> tools{"bash"}; ///< the tools whose `command` argument is screened

    static constexpr std::string_view config_section = "sandbox_audit";
    friend bool operator==(const sandbox_audit_options&, const sandbox_audit_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const sandbox_audit_options& o) {
    boost::json::array tools;
    for (const auto& t : o.tools)
        tools.emplace_back(t);
    jv = boost::json::object{{"max_command_chars", o.max_command_chars},
                             {"audit_log", o.audit_log},
                             {"warn_medium_risk", o.warn_medium_risk},
                             {"tools", std::move(tools)}};
}
inline sandbox_audit_options tag_invoke(boost::json::value_to_tag<sandbox_audit_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(sandbox_audit_options::config_section));
    sandbox_audit_options o;
    r.read("max_command_chars", o.max_command_chars)
        .read("audit_log", o.audit_log)
        .read("warn_medium_risk", o.warn_medium_risk)
        .read("tools", o.tools)
        .reject_unknown_keys();
    return o;
}

/// How a command was judged.
enum class command_risk { pass, warn, block };

struct command_verdict {
    command_risk risk = command_risk::pass;
    std::string reason; ///< the reason in the block text (DeerFlow's words)
    std::string rule;   ///< which class matched (ours, for the log and tests), empty on pass
};

namespace detail {

/// One simple command of a shell command line.
struct shell_segment {
    std::vector<std::string> words;         ///< unquoted words, assignments and redirections excluded
    std::vector<std::string> assignments;   ///< NAME=value words before the command
    std::vector<std::string> write_targets; ///< targets of > and >> redirections
    bool piped_from = false;                ///< its input is the previous segment's output (`a | b`)
    int parent = -1;                        ///< the segment a $(...) or `...` is part of
    bool command_position = false;          ///< the substitution is the parent's command word
};

inline bool is_shell_special(char c) noexcept {
    static constexpr auto table = [] {
        std::array<bool, 256> t{};
        for (unsigned char k : std::string_view(" \t\n\r'\"\\;&|<>$`(){}#"))
            t[k] = true;
        return t;
    }();
    return table[static_cast<unsigned char>(c)];
}

/// Splits a command line into simple commands, one pass. Not a full shell
/// parser: enough structure for the risk classes (quotes, escapes, ; & | &&
/// || newlines, $( ) and backticks, redirections).
inline std::vector<shell_segment> lex_shell(std::string_view s) {
    std::vector<shell_segment> segs(1);
    std::vector<int> stack{0};      // open segments: the innermost is current
    std::vector<bool> in_dq{false}; // inside double quotes, per nesting level
    std::vector<bool> backtick{false};
    std::string word;
    bool have_word = false;
    int redirect_pending = 0; // 1: the next word is a write target
    auto cur = [&]() -> shell_segment& { return segs[static_cast<std::size_t>(stack.back())]; };
    auto end_word = [&] {
        if (!have_word) return;
        shell_segment& sg = cur();
        if (redirect_pending) {
            sg.write_targets.push_back(word);
            redirect_pending = 0;
        } else if (sg.words.empty() && word.find('=') != std::string::npos && word[0] != '=' &&
                   std::all_of(
                       word.begin(), word.begin() + static_cast<std::ptrdiff_t>(word.find('=')),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
            sg.assignments.push_back(word);
        } else {
            sg.words.push_back(word);
        }
        word.clear();
        have_word = false;
    };
    auto new_segment = [&](bool piped) {
        end_word();
        redirect_pending = 0;
        shell_segment next;
        next.piped_from = piped;
        next.parent = cur().parent;
        segs.push_back(std::move(next));
        stack.back() = static_cast<int>(segs.size() - 1);
    };
    auto open_sub = [&](bool is_backtick) {
        const bool at_command = cur().words.empty() && !have_word;
        // The substitution's text also stands in the parent's word (as a marker).
        word += is_backtick ? "`" : "$(";
        have_word = true;
        shell_segment sub;
        sub.parent = stack.back();
        sub.command_position = at_command;
        segs.push_back(std::move(sub));
        // Save the parent's partial word: it continues after the substitution.
        stack.push_back(static_cast<int>(segs.size() - 1));
        in_dq.push_back(false);
        backtick.push_back(is_backtick);
    };
    std::vector<std::string> saved_words;
    auto push_sub = [&](bool is_backtick) {
        open_sub(is_backtick);
        saved_words.push_back(word);
        word.clear();
        have_word = false;
    };
    auto close_sub = [&] {
        end_word();
        stack.pop_back();
        in_dq.pop_back();
        backtick.pop_back();
        word = saved_words.back() + ")";
        have_word = true;
        saved_words.pop_back();
    };

    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (in_dq.back()) {
            if (c == '"') {
                in_dq.back() = false;
            } else if (c == '\\' && i + 1 < s.size()) {
                word += s[++i];
            } else if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') {
                ++i;
                in_dq.back() = true;
                push_sub(false);
            } else if (c == '`') {
                push_sub(true);
            } else {
                word += c;
            }
            have_word = true;
            continue;
        }
        switch (c) {
        case '#':
            if (!have_word) { // a comment, to the end of the line
                const std::size_t nl = s.find('\n', i);
                i = (nl == std::string_view::npos ? s.size() : nl) - 1;
                break;
            }
            word += c;
            break;
        case '\'': {
            const std::size_t close = s.find('\'', i + 1);
            const std::size_t stop = close == std::string_view::npos ? s.size() : close;
            word.append(s.substr(i + 1, stop - i - 1));
            have_word = true;
            i = stop;
            break;
        }
        case '"':
            in_dq.back() = true;
            have_word = true;
            break;
        case '\\':
            if (i + 1 < s.size()) {
                if (s[i + 1] != '\n') word += s[i + 1];
                have_word = true;
                ++i;
            }
            break;
        case ' ':
        case '\t':
            end_word();
            break;
        case '\n':
        case ';':
            new_segment(false);
            break;
        case '&':
            if (i + 1 < s.size() && s[i + 1] == '>') { // &> file
                end_word();
                redirect_pending = 1;
                ++i;
                if (i + 1 < s.size() && s[i + 1] == '>') ++i;
                break;
            }
            if (i + 1 < s.size() && s[i + 1] == '&') ++i;
            new_segment(false);
            break;
        case '|':
            if (i + 1 < s.size() && s[i + 1] == '|') {
                ++i;
                new_segment(false);
            } else {
                if (i + 1 < s.size() && s[i + 1] == '&') ++i;
                new_segment(true);
            }
            break;
        case '>': {
            // A digit just before (2>) belongs to the redirection, not to a word.
            if (have_word && word.size() == 1 && std::isdigit(static_cast<unsigned char>(word[0]))) {
                word.clear();
                have_word = false;
            }
            end_word();
            if (i + 1 < s.size() && (s[i + 1] == '>' || s[i + 1] == '|')) ++i;
            if (i + 1 < s.size() && s[i + 1] == '&') { // >&2: a descriptor, not a file
                ++i;
                while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))
                    ++i;
                break;
            }
            redirect_pending = 1;
            break;
        }
        case '<':
            end_word();
            break;
        case '$':
            if (i + 1 < s.size() && s[i + 1] == '(') {
                ++i;
                push_sub(false);
            } else {
                word += c;
                have_word = true;
            }
            break;
        case '`':
            if (backtick.back() && stack.size() > 1)
                close_sub();
            else
                push_sub(true);
            break;
        case ')':
            if (stack.size() > 1 && !backtick.back())
                close_sub();
            else
                end_word();
            break;
        case '(':
        case '{':
        case '}':
            end_word();
            break;
        default: {
            // A run of ordinary characters is appended at once.
            std::size_t end = i + 1;
            while (end < s.size() && !is_shell_special(s[end]))
                ++end;
            word.append(s.data() + i, end - i);
            have_word = true;
            i = end - 1;
        }
        }
    }
    while (stack.size() > 1)
        close_sub();
    end_word();
    return segs;
}

inline std::string_view base_name(std::string_view w) {
    const auto slash = w.rfind('/');
    return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

template <std::size_t N>
bool one_of(std::string_view w, const std::array<std::string_view, N>& set) {
    return std::find(set.begin(), set.end(), w) != set.end();
}

inline constexpr std::array<std::string_view, 8> shells{"sh",  "bash", "zsh", "dash",
                                                        "ksh", "fish", "csh", "tcsh"};
inline constexpr std::array<std::string_view, 11> interpreters{
    "python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "sh", "bash", "zsh"};
inline constexpr std::array<std::string_view, 5> downloaders{"curl", "wget", "fetch", "nc", "ncat"};
inline constexpr std::array<std::string_view, 17> command_position_runners{
    "curl", "wget", "bash", "sh",  "zsh", "dash", "python", "python2", "python3",
    "perl", "ruby", "node", "php", "nc",  "ncat", "base64", "xxd"};

// The command word of a segment, past sudo/env/nohup/exec/command prefixes; its index or words.size().
inline std::size_t command_index(const shell_segment& sg) {
    static constexpr std::array<std::string_view, 9> prefixes{"sudo",    "doas", "env",  "nohup",  "exec",
                                                              "command", "time", "nice", "builtin"};
    std::size_t k = 0;
    while (k < sg.words.size()) {
        const std::string_view w = base_name(sg.words[k]);
        if (one_of(w, prefixes) || (!sg.words[k].empty() && sg.words[k][0] == '-' && k > 0) ||
            (k > 0 && sg.words[k].find('=') != std::string::npos &&
             one_of(base_name(sg.words[k - 1]), prefixes)))
            ++k;
        else
            break;
    }
    return k;
}

inline bool has_sudo(const shell_segment& sg) {
    for (const auto& w : sg.words) {
        const std::string_view b = base_name(w);
        if (b == "sudo" || b == "su" || b == "doas") return true;
        if (b != "env" && b != "nohup" && b != "exec" && b != "command") break;
    }
    return false;
}

// A path whose writing or removal hurts the system.
inline bool is_system_path(std::string_view p) {
    static constexpr std::array<std::string_view, 15> dirs{"/etc",  "/usr",   "/bin",  "/sbin", "/boot",
                                                           "/lib",  "/lib64", "/var",  "/root", "/sys",
                                                           "/proc", "/dev",   "/home", "/opt",  "/srv"};
    while (p.size() > 1 && p.back() == '/')
        p.remove_suffix(1);
    if (p == "/" || p == "/*" || p == "~" || p == "~/" || p == "~/*" || p == "$HOME" || p == "${HOME}")
        return true;
    for (auto d : dirs)
        if (p == d || (p.starts_with(d) && p.size() > d.size() && p[d.size()] == '/' &&
                       (p.substr(d.size()) == "/*" || p.substr(d.size()) == "/")))
            return true;
    return false;
}

inline bool is_protected_write_target(std::string_view p) {
    if (p.starts_with("/etc/") || p == "/etc" || p.starts_with("/usr/bin/") || p.starts_with("/usr/sbin/") ||
        p.starts_with("/bin/") || p.starts_with("/sbin/") || p.starts_with("/usr/lib/") ||
        p.starts_with("/boot/") || p.starts_with("/dev/sd") || p.starts_with("/dev/nvme") ||
        p.starts_with("/dev/mem"))
        return true;
    static constexpr std::array<std::string_view, 8> rc{".bashrc",   ".bash_profile", ".profile", ".zshrc",
                                                        ".zprofile", ".bash_login",   ".zshenv",  ".cshrc"};
    const std::string_view b = base_name(p);
    return one_of(b, rc) && (p.starts_with("~") || p.starts_with("/") || p.starts_with("$HOME") ||
                             p.starts_with("${HOME}") || p == b);
}

inline bool rm_is_recursive_forced(const shell_segment& sg, std::size_t cmd) {
    bool r = false, f = false;
    for (std::size_t k = cmd + 1; k < sg.words.size(); ++k) {
        std::string_view w = sg.words[k];
        if (w == "--recursive")
            r = true;
        else if (w == "--force")
            f = true;
        else if (w.size() > 1 && w[0] == '-' && w[1] != '-') {
            r = r || w.find('r') != std::string_view::npos || w.find('R') != std::string_view::npos;
            f = f || w.find('f') != std::string_view::npos;
        }
    }
    return r && f;
}

// Removes blanks, for the fork-bomb shape `:(){ :|:& };:`.
inline bool looks_like_fork_bomb(std::string_view s) {
    std::size_t def = s.find("()");
    while (def != std::string_view::npos) {
        // The function name: the non-blank run before "()".
        std::size_t b = def;
        while (b > 0 && s[b - 1] != ' ' && s[b - 1] != '\n' && s[b - 1] != ';' && s[b - 1] != '\t')
            --b;
        const std::string_view name = s.substr(b, def - b);
        if (!name.empty() && name.size() < 64) {
            std::string compact;
            for (std::size_t k = def + 2; k < s.size() && compact.size() < 4 * name.size() + 32; ++k)
                if (s[k] != ' ' && s[k] != '\t' && s[k] != '\n') compact += s[k];
            const std::string self_pipe = std::string(name) + "|" + std::string(name);
            if (compact.find(self_pipe) != std::string::npos && compact.find('&') != std::string::npos)
                return true;
        }
        def = s.find("()", def + 2);
    }
    return false;
}

} // namespace detail

/// Judges one command (DeerFlow's classes; see the docs page). `depth`
/// counts the nested scripts (`bash -c '...'`, `eval '...'`) read so far.
inline command_verdict classify_command(std::string_view command, std::size_t max_chars = 10000,
                                        int depth = 0) {
    using namespace detail;
    auto block = [](std::string reason, std::string rule) {
        return command_verdict{command_risk::block, std::move(reason), std::move(rule)};
    };
    // Text kept for parity with DeerFlow (reference §5.16h): the reasons.
    if (command.find('\0') != std::string_view::npos) return block("null byte detected", "null_byte");
    if (command.size() > max_chars) return block("command too long", "too_long");
    if (command.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos)
        return block("empty command", "empty");
    const std::string violation = "security violation detected";

    // Substring classes, on the raw text.
    if (command.find("/dev/tcp/") != std::string_view::npos ||
        command.find("/dev/udp/") != std::string_view::npos)
        return block(violation, "dev_tcp");
    if (command.find("LD_PRELOAD=") != std::string_view::npos) return block(violation, "ld_preload");
    for (std::size_t p = command.find("/proc/"); p != std::string_view::npos;
         p = command.find("/proc/", p + 6)) {
        const std::size_t slash = command.find('/', p + 6);
        if (slash != std::string_view::npos && slash < p + 40 && command.substr(slash, 8) == "/environ")
            return block(violation, "proc_environ");
    }
    if (looks_like_fork_bomb(command)) return block(violation, "fork_bomb");

    const std::vector<shell_segment> segs = lex_shell(command);
    command_verdict medium;
    for (std::size_t i = 0; i < segs.size(); ++i) {
        const shell_segment& sg = segs[i];
        for (const auto& t : sg.write_targets)
            if (is_protected_write_target(t)) return block(violation, "system_write");
        for (const auto& a : sg.assignments)
            if (a.starts_with("LD_PRELOAD=")) return block(violation, "ld_preload");
        const std::size_t ci = command_index(sg);
        if (sg.parent >= 0 && sg.command_position && ci < sg.words.size() &&
            one_of(base_name(sg.words[ci]), command_position_runners))
            return block(violation, "command_substitution");
        if (ci >= sg.words.size()) {
            for (const auto& a : sg.assignments)
                if (a.starts_with("PATH=") && !medium.rule.size())
                    medium = {command_risk::warn, {}, "path_change"};
            continue;
        }
        const std::string_view cmd = base_name(sg.words[ci]);
        // A script given as a string is judged like the command itself.
        if (depth < 4) {
            std::string script;
            if (cmd == "eval") {
                for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                    script += sg.words[k] + " ";
            } else if (one_of(cmd, shells)) {
                for (std::size_t k = ci + 1; k + 1 < sg.words.size(); ++k)
                    if (sg.words[k].size() > 1 && sg.words[k][0] == '-' && sg.words[k][1] != '-' &&
                        sg.words[k].find('c') != std::string::npos) {
                        script = sg.words[k + 1];
                        break;
                    }
            }
            if (!script.empty()) {
                command_verdict inner = classify_command(script, max_chars, depth + 1);
                if (inner.risk == command_risk::block && inner.rule != "empty") return inner;
                if (inner.risk == command_risk::warn && medium.rule.empty()) medium = inner;
            }
        }
        // Downloads run by a shell or interpreter: eval $(curl ...), python -c "$(curl ...)", sh -c "`wget
        // ...`".
        if (sg.parent >= 0 && one_of(cmd, downloaders)) {
            const shell_segment& parent = segs[static_cast<std::size_t>(sg.parent)];
            const std::size_t pi = command_index(parent);
            if (pi < parent.words.size()) {
                const std::string_view pc = base_name(parent.words[pi]);
                if (pc == "eval" || pc == "source" || pc == "." || one_of(pc, interpreters))
                    return block(violation, "remote_code");
            }
        }
        if (cmd == "rm" && rm_is_recursive_forced(sg, ci))
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (is_system_path(sg.words[k])) return block(violation, "rm_rf_root");
        if (cmd == "dd")
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k].starts_with("if=")) return block(violation, "dd");
        if (cmd == "mkfs" || cmd.starts_with("mkfs.")) return block(violation, "mkfs");
        if (sg.piped_from && (one_of(cmd, shells) || one_of(cmd, interpreters)) && i > 0) {
            // `| sh`, `| python3`: whatever came before is run as code.
            bool script_arg = false;
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (!sg.words[k].starts_with("-")) script_arg = true;
            if (!script_arg || one_of(cmd, shells)) return block(violation, "pipe_to_shell");
        }
        if (cmd == "base64" && i + 1 < segs.size() && segs[i + 1].piped_from)
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k] == "-d" || sg.words[k] == "--decode" || sg.words[k] == "-D")
                    return block(violation, "base64_pipe");
        if (cmd == "tee" || cmd == "cp" || cmd == "mv" || cmd == "ln" || cmd == "install")
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (!sg.words[k].starts_with("-") && k + 1 == sg.words.size() &&
                    is_protected_write_target(sg.words[k]))
                    return block(violation, "system_write");
        if (cmd == "tee")
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (is_protected_write_target(sg.words[k])) return block(violation, "system_write");

        if (!medium.rule.empty()) continue;
        if (has_sudo(sg)) {
            medium = {command_risk::warn, {}, "sudo"};
        } else if (cmd == "chmod") {
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k] == "777" || sg.words[k] == "a+rwx" || sg.words[k] == "0777")
                    medium = {command_risk::warn, {}, "chmod_777"};
        } else if ((cmd == "pip" || cmd == "pip3" || cmd == "uv" || cmd == "npm" || cmd == "apt" ||
                    cmd == "apt-get" || cmd == "yum" || cmd == "dnf" || cmd == "apk" || cmd == "gem") &&
                   std::find(sg.words.begin() + static_cast<std::ptrdiff_t>(ci), sg.words.end(), "install") !=
                       sg.words.end()) {
            medium = {command_risk::warn, {}, "package_install"};
        } else if (one_of(cmd, interpreters) && ci + 3 < sg.words.size() + 1 &&
                   std::find(sg.words.begin(), sg.words.end(), "pip") != sg.words.end() &&
                   std::find(sg.words.begin(), sg.words.end(), "install") != sg.words.end()) {
            medium = {command_risk::warn, {}, "package_install"};
        } else if (cmd == "export" || cmd == "declare") {
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k].starts_with("PATH=")) medium = {command_risk::warn, {}, "path_change"};
        }
        if (medium.rule.empty())
            for (const auto& a : sg.assignments)
                if (a.starts_with("PATH=")) medium = {command_risk::warn, {}, "path_change"};
    }
    return medium;
}

struct sandbox_audit {
    // Text kept for parity with DeerFlow (reference §5.16h).
    static constexpr std::string_view block_format =
        "Command blocked: {}. Please use a safer alternative approach.";
    // Text kept for parity with DeerFlow (reference §5.16h).
    static constexpr std::string_view warning_format =
        "\n\n⚠️ Warning: `{}` is a medium-risk command that may modify the runtime environment.";

    /// Where audit lines go besides the file: for tests and embedding applications.
    using sink = std::function<void(std::string_view json_line)>;

    sandbox_audit() : sandbox_audit(sandbox_audit_options{}) {}
    explicit sandbox_audit(sandbox_audit_options o, sink s = {})
        : options_(std::move(o)), shared_(std::make_shared<shared>()) {
        shared_->out = std::move(s);
    }

    const sandbox_audit_options& options() const noexcept { return options_; }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (std::find(options_.tools.begin(), options_.tools.end(), req.call->name) == options_.tools.end())
            return next(req);
        std::string command;
        if (const auto* c = req.call->args.if_contains("command"); c && c->is_string())
            command = std::string(c->get_string());
        const command_verdict v = classify_command(command, options_.max_command_chars);
        const std::string thread = req.rt ? req.rt->thread_id : std::string();
        log(thread, command, v);
        if (v.risk == command_risk::block) {
            message m = tool_message(req.call->id, req.call->name,
                                     fmt::format(fmt::runtime(block_format), v.reason), tool_status::error);
            m.metadata["sandbox_audit"] = boost::json::object{{"verdict", "block"}, {"rule", v.rule}};
            return short_circuit(req, next, tool_response{std::move(m), {}, false});
        }
        if (v.risk == command_risk::warn && options_.warn_medium_risk)
            return map_response(req, next, [command, rule = v.rule](tool_response r) {
                std::string warning = fmt::format(fmt::runtime(warning_format), command);
                auto last = std::find_if(r.msg.content.rbegin(), r.msg.content.rend(),
                                         [](const content_block& b) { return b.is_text(); });
                if (last != r.msg.content.rend())
                    last->text += warning;
                else
                    r.msg.content.push_back(text_block(std::move(warning)));
                r.msg.metadata["sandbox_audit"] = boost::json::object{{"verdict", "warn"}, {"rule", rule}};
                return r;
            });
        return next(req);
    }

    /// The JSON line for one call (secrets in the command are masked).
    static std::string audit_line(std::string_view thread_id, std::string_view command,
                                  const command_verdict& v) {
        const auto now = std::chrono::system_clock::now();
        const std::time_t t = std::chrono::system_clock::to_time_t(now);
        std::tm tm{};
        gmtime_r(&t, &tm);
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
        char stamp[80]; // room for any int the fields could hold (g++ checks)
        std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
        boost::json::object o{{"timestamp", stamp},
                              {"thread_id", thread_id},
                              {"command", mask_secrets(command)},
                              {"verdict", v.risk == command_risk::block  ? "block"
                                          : v.risk == command_risk::warn ? "warn"
                                                                         : "pass"}};
        if (!v.rule.empty()) o["rule"] = v.rule;
        return boost::json::serialize(o);
    }

    /// Values of NAME=value words whose name looks secret, and Bearer tokens, become "***".
    static std::string mask_secrets(std::string_view command) {
        std::string out(command);
        static constexpr std::array<std::string_view, 6> secret{
            "KEY=", "TOKEN=", "SECRET=", "PASSWORD=", "PASSWD=", "Bearer "};
        for (auto marker : secret) {
            for (std::size_t p = out.find(marker); p != std::string::npos; p = out.find(marker, p + 1)) {
                const std::size_t start = p + marker.size();
                std::size_t end = start;
                while (end < out.size() && out[end] != ' ' && out[end] != '\t' && out[end] != '\n' &&
                       out[end] != '"' && out[end] != '\'' && out[end] != ';' && out[end] != '&')
                    ++end;
                if (end > start) out.replace(start, end - start, "***");
            }
        }
        return out;
    }

private:
    void log(std::string_view thread, std::string_view command, const command_verdict& v) const {
        if (options_.audit_log.empty() && !shared_->out) return;
        const std::string line = audit_line(thread, command, v);
        std::lock_guard lock(shared_->mutex);
        if (shared_->out) shared_->out(line);
        if (!options_.audit_log.empty()) {
            if (std::FILE* f = std::fopen(options_.audit_log.c_str(), "a")) {
                std::fwrite(line.data(), 1, line.size(), f);
                std::fputc('\n', f);
                std::fclose(f);
            }
        }
    }

    struct shared {
        std::mutex mutex;
        sink out;
    };
    sandbox_audit_options options_;
    std::shared_ptr<shared> shared_;
};

} // namespace agentware

#endif
