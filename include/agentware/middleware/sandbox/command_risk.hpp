#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_COMMAND_RISK_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_COMMAND_RISK_HPP

// The risk classes of the sandbox audit: the table of command words and
// their roles, the protected paths, and classify_command, which judges a
// command line (pass, warn or block, with DeerFlow's reason) from the simple
// commands the shell lexer finds in it.

#include <agentware/middleware/sandbox/shell_lexer.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// How a command was judged.
enum class command_risk { pass, warn, block };

struct command_verdict {
    command_risk risk = command_risk::pass;
    std::string reason; ///< the reason in the block text (DeerFlow's words)
    std::string rule;   ///< which class matched (ours, for the log and tests), empty on pass
};

namespace detail {

inline std::string_view base_name(std::string_view w) {
    const auto slash = w.rfind('/');
    return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

// Whether `w` is in `set`: the length and first letter refuse most words
// before any byte comparison.
template <std::size_t N>
bool one_of(std::string_view w, const std::array<std::string_view, N>& set) {
    if (w.empty()) return false;
    for (std::string_view x : set)
        if (x.size() == w.size() && x[0] == w[0] && std::memcmp(x.data(), w.data(), w.size()) == 0)
            return true;
    return false;
}

// What a command word is, for the risk classes: a bit per role.
enum command_role : std::uint32_t {
    role_shell = 1u << 0,       // runs a script given as a string (`sh -c`)
    role_interpreter = 1u << 1, // runs code read from its input
    role_downloader = 1u << 2,
    role_runner = 1u << 3, // dangerous as a command substitution's command
    role_prefix = 1u << 4, // sudo, env, nohup...: the command word comes after it
    role_root = 1u << 5,   // runs as another user
    role_passthrough = 1u << 6,
    role_eval = 1u << 7,
    role_source = 1u << 8,
    role_rm = 1u << 9,
    role_dd = 1u << 10,
    role_mkfs = 1u << 11,
    role_base64 = 1u << 12,
    role_copier = 1u << 13, // writes to its last argument
    role_tee = 1u << 14,
    role_chmod = 1u << 15,
    role_package_manager = 1u << 16,
    role_export = 1u << 17,
};

struct command_word {
    std::string_view name;
    std::uint32_t roles;
};

inline constexpr std::array<command_word, 44> command_words{{
    {"sh", role_shell | role_interpreter | role_runner},
    {"bash", role_shell | role_interpreter | role_runner},
    {"zsh", role_shell | role_interpreter | role_runner},
    {"dash", role_shell | role_runner},
    {"ksh", role_shell},
    {"fish", role_shell},
    {"csh", role_shell},
    {"tcsh", role_shell},
    {"python", role_interpreter | role_runner},
    {"python2", role_interpreter | role_runner},
    {"python3", role_interpreter | role_runner},
    {"perl", role_interpreter | role_runner},
    {"ruby", role_interpreter | role_runner},
    {"node", role_interpreter | role_runner},
    {"php", role_interpreter | role_runner},
    {"lua", role_interpreter},
    {"curl", role_downloader | role_runner},
    {"wget", role_downloader | role_runner},
    {"fetch", role_downloader},
    {"nc", role_downloader | role_runner},
    {"ncat", role_downloader | role_runner},
    {"base64", role_runner | role_base64},
    {"xxd", role_runner},
    {"sudo", role_prefix | role_root},
    {"doas", role_prefix | role_root},
    {"su", role_root},
    {"env", role_prefix | role_passthrough},
    {"nohup", role_prefix | role_passthrough},
    {"exec", role_prefix | role_passthrough},
    {"command", role_prefix | role_passthrough},
    {"time", role_prefix},
    {"nice", role_prefix},
    {"builtin", role_prefix},
    {"eval", role_eval},
    {"source", role_source},
    {".", role_source},
    {"rm", role_rm},
    {"dd", role_dd},
    {"mkfs", role_mkfs},
    {"tee", role_copier | role_tee},
    {"cp", role_copier},
    {"mv", role_copier},
    {"ln", role_copier},
    {"install", role_copier},
}};
inline constexpr std::array<std::string_view, 10> package_managers{"pip",     "pip3", "uv",  "npm", "apt",
                                                                   "apt-get", "yum",  "dnf", "apk", "gem"};

// The words above and the package managers in an open-addressing hash table
// keyed by length and first and last characters: most words that are none of
// them land on an empty slot at once, the others are compared with one or two.
struct command_word_index {
    static constexpr std::size_t slots = 256; // over four times the words: probes stay short
    std::array<command_word, slots> table{};

    static constexpr std::size_t slot_of(std::string_view w) noexcept {
        return (static_cast<unsigned char>(w.front()) * 7u + static_cast<unsigned char>(w.back()) * 31u +
                w.size() * 13u) %
               slots;
    }
};

inline constexpr command_word_index command_word_table = [] {
    command_word_index idx;
    auto add = [&](command_word w) {
        std::size_t k = command_word_index::slot_of(w.name);
        while (!idx.table[k].name.empty()) {
            if (idx.table[k].name == w.name) return; // the first listing of a word holds
            k = (k + 1) % command_word_index::slots;
        }
        idx.table[k] = w;
    };
    for (const auto& w : command_words)
        add(w);
    for (std::string_view p : package_managers)
        add({p, role_package_manager});
    add({"chmod", role_chmod});
    add({"export", role_export});
    add({"declare", role_export});
    return idx;
}();

/// The roles of a command word (0 for any other word).
inline std::uint32_t roles_of(std::string_view w) noexcept {
    if (w.empty()) return 0;
    for (std::size_t k = command_word_index::slot_of(w);; k = (k + 1) % command_word_index::slots) {
        const command_word& x = command_word_table.table[k];
        if (x.name.empty()) return 0;
        if (x.name.size() == w.size() && std::memcmp(x.name.data(), w.data(), w.size()) == 0) return x.roles;
    }
}

// The command word of a segment, past sudo/env/nohup/exec/command prefixes; its index or words.size().
// `first_roles`: the roles of the first word's base name (most segments have no prefix: done at once).
inline std::size_t command_index(const shell_segment& sg, std::uint32_t first_roles) {
    if (sg.words.empty() || !(first_roles & role_prefix)) return 0;
    std::size_t k = 1;
    while (k < sg.words.size()) {
        const std::string_view w = sg.words[k];
        if ((roles_of(base_name(w)) & role_prefix) || (!w.empty() && w[0] == '-' && k > 0) ||
            (k > 0 && w.find('=') != std::string_view::npos &&
             (roles_of(base_name(sg.words[k - 1])) & role_prefix)))
            ++k;
        else
            break;
    }
    return k;
}

inline std::size_t command_index(const shell_segment& sg) {
    return command_index(sg, sg.words.empty() ? 0 : roles_of(base_name(sg.words[0])));
}

// `first_roles` as for command_index: a first word neither root nor passthrough settles it.
inline bool has_sudo(const shell_segment& sg, std::uint32_t first_roles) {
    if (!(first_roles & (role_root | role_passthrough))) return false;
    for (const auto& w : sg.words) {
        const std::uint32_t r = roles_of(base_name(w));
        if (r & role_root) return true;
        if (!(r & role_passthrough)) break;
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
    if (p.empty()) return false;
    // The system directories, by the character after the first '/'.
    if (p[0] == '/' && p.size() > 1) {
        switch (p[1]) {
        case 'e':
            if (p.starts_with("/etc/") || p == "/etc") return true;
            break;
        case 'u':
            if (p.starts_with("/usr/bin/") || p.starts_with("/usr/sbin/") || p.starts_with("/usr/lib/"))
                return true;
            break;
        case 'b':
            if (p.starts_with("/bin/") || p.starts_with("/boot/")) return true;
            break;
        case 's':
            if (p.starts_with("/sbin/")) return true;
            break;
        case 'd':
            if (p.starts_with("/dev/sd") || p.starts_with("/dev/nvme") || p.starts_with("/dev/mem"))
                return true;
            break;
        default:
            break;
        }
    }
    static constexpr std::array<std::string_view, 8> rc{".bashrc",   ".bash_profile", ".profile", ".zshrc",
                                                        ".zprofile", ".bash_login",   ".zshenv",  ".cshrc"};
    const std::string_view b = base_name(p);
    if (b.empty() || b[0] != '.') return false; // every rc file's name starts with '.'
    return one_of(b, rc) &&
           (p[0] == '~' || p[0] == '/' || p.starts_with("$HOME") || p.starts_with("${HOME}") || p == b);
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

// The classes found in the raw text: "/dev/tcp/" or "/dev/udp/" (dev_tcp),
// "LD_PRELOAD=" (ld_preload), "/proc/" followed within 40 characters by the
// next '/' opening "/environ" (proc_environ). One pass from '/' to '/' and
// from '=' to '=' (memchr) instead of a substring search per class.
struct raw_text_classes {
    bool dev_tcp = false, ld_preload = false, proc_environ = false;
};

inline raw_text_classes find_raw_text_classes(std::string_view s) noexcept {
    raw_text_classes found;
    const char* const base = s.data();
    const std::size_t n = s.size();
    auto next = [&](char c, std::size_t from) -> std::size_t {
        if (from >= n) return n;
        const void* hit = std::memchr(base + from, c, n - from);
        return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - base) : n;
    };
    // As a search for "/proc/" that goes on after each occurrence's end: an
    // occurrence starting inside the previous one is not one.
    std::size_t proc_from = 0;
    for (std::size_t p = next('/', 0); p < n; p = next('/', p + 1)) {
        const std::string_view rest = s.substr(p);
        if (rest.size() >= 9 && rest[1] == 'd' &&
            (rest.starts_with("/dev/tcp/") || rest.starts_with("/dev/udp/"))) {
            found.dev_tcp = true;
            return found; // the first class checked: nothing else matters
        }
        if (!found.proc_environ && p >= proc_from && rest.size() >= 6 && rest[1] == 'p' &&
            rest.starts_with("/proc/")) {
            proc_from = p + 6;
            const std::size_t slash = s.find('/', p + 6);
            if (slash != std::string_view::npos && slash < p + 40 && s.substr(slash, 8) == "/environ")
                found.proc_environ = true;
        }
    }
    constexpr std::string_view ld = "LD_PRELOAD";
    for (std::size_t e = next('=', 0); e < n; e = next('=', e + 1))
        if (std::string_view(base, e).ends_with(ld)) {
            found.ld_preload = true;
            break;
        }
    return found;
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
    const raw_text_classes raw = find_raw_text_classes(command);
    if (raw.dev_tcp) return block(violation, "dev_tcp");
    if (raw.ld_preload) return block(violation, "ld_preload");
    if (raw.proc_environ) return block(violation, "proc_environ");
    if (looks_like_fork_bomb(command)) return block(violation, "fork_bomb");

    const shell_lex lexed = lex_shell(command);
    const std::vector<shell_segment>& segs = lexed.segments;
    command_verdict medium;
    for (std::size_t i = 0; i < segs.size(); ++i) {
        const shell_segment& sg = segs[i];
        for (const auto& t : sg.write_targets)
            if (is_protected_write_target(t)) return block(violation, "system_write");
        for (const auto& a : sg.assignments)
            if (a.starts_with("LD_PRELOAD=")) return block(violation, "ld_preload");
        // The first word's roles, looked up once: they settle the command word and sudo for most segments.
        const std::string_view first = sg.words.empty() ? std::string_view() : base_name(sg.words[0]);
        const std::uint32_t first_roles = roles_of(first);
        const std::size_t ci = command_index(sg, first_roles);
        if (ci >= sg.words.size()) {
            for (const auto& a : sg.assignments)
                if (a.starts_with("PATH=") && !medium.rule.size())
                    medium = {command_risk::warn, {}, "path_change"};
            continue;
        }
        const std::string_view cmd = ci == 0 ? first : base_name(sg.words[ci]);
        // One lookup of the command word (by its first character) gives every role it has.
        const std::uint32_t roles = ci == 0 ? first_roles : roles_of(cmd);
        if (sg.parent >= 0 && sg.command_position && (roles & role_runner))
            return block(violation, "command_substitution");
        // A script given as a string is judged like the command itself.
        if (depth < 4 && (roles & (role_eval | role_shell))) {
            std::string script;
            if (roles & role_eval) {
                for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                    script.append(sg.words[k]).append(" ");
            } else {
                for (std::size_t k = ci + 1; k + 1 < sg.words.size(); ++k)
                    if (sg.words[k].size() > 1 && sg.words[k][0] == '-' && sg.words[k][1] != '-' &&
                        sg.words[k].find('c') != std::string_view::npos) {
                        script = std::string(sg.words[k + 1]);
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
        if (sg.parent >= 0 && (roles & role_downloader)) {
            const shell_segment& parent = segs[static_cast<std::size_t>(sg.parent)];
            const std::size_t pi = command_index(parent);
            if (pi < parent.words.size() &&
                (roles_of(base_name(parent.words[pi])) & (role_eval | role_source | role_interpreter)))
                return block(violation, "remote_code");
        }
        if ((roles & role_rm) && rm_is_recursive_forced(sg, ci))
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (is_system_path(sg.words[k])) return block(violation, "rm_rf_root");
        if (roles & role_dd)
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k].starts_with("if=")) return block(violation, "dd");
        if ((roles & role_mkfs) || cmd.starts_with("mkfs.")) return block(violation, "mkfs");
        if (sg.piped_from && (roles & (role_shell | role_interpreter)) && i > 0) {
            // `| sh`, `| python3`: whatever came before is run as code.
            bool script_arg = false;
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (!sg.words[k].starts_with("-")) script_arg = true;
            if (!script_arg || (roles & role_shell)) return block(violation, "pipe_to_shell");
        }
        if ((roles & role_base64) && i + 1 < segs.size() && segs[i + 1].piped_from)
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k] == "-d" || sg.words[k] == "--decode" || sg.words[k] == "-D")
                    return block(violation, "base64_pipe");
        if (roles & role_copier)
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (k + 1 == sg.words.size() && !sg.words[k].starts_with("-") &&
                    is_protected_write_target(sg.words[k]))
                    return block(violation, "system_write");
        if (roles & role_tee)
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (is_protected_write_target(sg.words[k])) return block(violation, "system_write");

        if (!medium.rule.empty()) continue;
        if (has_sudo(sg, first_roles)) {
            medium = {command_risk::warn, {}, "sudo"};
        } else if (roles & role_chmod) {
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k] == "777" || sg.words[k] == "a+rwx" || sg.words[k] == "0777")
                    medium = {command_risk::warn, {}, "chmod_777"};
        } else if ((roles & role_package_manager) &&
                   std::find(sg.words.begin() + static_cast<std::ptrdiff_t>(ci), sg.words.end(), "install") !=
                       sg.words.end()) {
            medium = {command_risk::warn, {}, "package_install"};
        } else if ((roles & role_interpreter) && ci + 3 < sg.words.size() + 1 &&
                   std::find(sg.words.begin(), sg.words.end(), "pip") != sg.words.end() &&
                   std::find(sg.words.begin(), sg.words.end(), "install") != sg.words.end()) {
            medium = {command_risk::warn, {}, "package_install"};
        } else if (roles & role_export) {
            for (std::size_t k = ci + 1; k < sg.words.size(); ++k)
                if (sg.words[k].starts_with("PATH=")) medium = {command_risk::warn, {}, "path_change"};
        }
        if (medium.rule.empty())
            for (const auto& a : sg.assignments)
                if (a.starts_with("PATH=")) medium = {command_risk::warn, {}, "path_change"};
    }
    return medium;
}

} // namespace agentware

#endif
