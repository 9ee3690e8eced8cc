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

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <forward_list>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
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

/// One simple command of a shell command line. Its words are views into the
/// command (or into shell_lex::built, for words whose quotes or escapes were
/// removed), kept in shell_lex::words.
struct shell_segment {
    std::span<const std::string_view> words;       ///< unquoted words, assignments and redirections excluded
    std::span<const std::string_view> assignments; ///< NAME=value words before the command
    std::span<const std::string_view> write_targets; ///< targets of > and >> redirections
    bool piped_from = false;                         ///< its input is the previous segment's output (`a | b`)
    int parent = -1;                                 ///< the segment a $(...) or `...` is part of
    bool command_position = false;                   ///< the substitution is the parent's command word
    std::size_t word_count = 0;                      ///< while lexing: the words so far
};

/// A command line split into simple commands.
struct shell_lex {
    std::vector<shell_segment> segments;
    /// Every segment's words, assignments and write targets, by segment (the
    /// segments' spans point here; a vector's buffer stays put when moved).
    std::vector<std::string_view> words;
    /// The words that are not a run of the command as written (quotes or
    /// escapes removed, substitutions marked): list nodes never move, so the
    /// views into them stay valid when the result is moved.
    std::forward_list<std::string> built;
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

/// Whether `w` is NAME=value (a name of letters, digits and '_').
inline bool is_assignment_word(std::string_view w) noexcept {
    std::size_t k = 0;
    static constexpr auto name_char = [] {
        std::array<bool, 256> t{};
        for (int c = 0; c < 256; ++c)
            t[static_cast<std::size_t>(c)] =
                (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        return t;
    }();
    while (k < w.size() && name_char[static_cast<unsigned char>(w[k])])
        ++k;
    return k > 0 && k < w.size() && w[k] == '=';
}

/// Splits a command line into simple commands, one pass. Not a full shell
/// parser: enough structure for the risk classes (quotes, escapes, ; & | &&
/// || newlines, $( ) and backticks, redirections). A word that is a run of
/// the command as written (most are) is a view into it; only the others are copied.
inline shell_lex lex_shell(std::string_view s) {
    shell_lex out;
    std::vector<shell_segment>& segs = out.segments;
    segs.reserve(s.size() / 24 + 4); // about one simple command per 24 characters in long scripts
    segs.resize(1);
    std::vector<int> stack{0};      // open segments: the innermost is current
    std::vector<bool> in_dq{false}; // inside double quotes, per nesting level
    bool dq = false;                // in_dq.back()
    std::vector<bool> backtick{false};
    // The words of the open segments, innermost level last, with their kind.
    // A segment's words go to out.words when it ends, grouped by kind, so
    // each segment's words are contiguous there without a sort at the end
    // (a $(...) inside a segment ends, and is written, before it).
    enum word_kind : std::uint8_t { kind_word, kind_assignment, kind_target, kinds };
    struct placed {
        std::string_view word;
        word_kind kind;
    };
    std::vector<placed> pending;
    pending.reserve(32);
    std::vector<std::size_t> pending_base{0}; // per level: where its segment's words start in `pending`
    // Per segment, where its words, assignments and targets start in
    // out.words, and where they end (offsets: out.words still grows).
    std::vector<std::uint32_t> bounds;
    bounds.reserve(segs.capacity() * (kinds + 1));
    out.words.reserve(s.size() / 6 + 8);
    auto flush_segment = [&] {
        const std::size_t b = pending_base.back();
        const auto g = static_cast<std::size_t>(stack.back());
        if (bounds.size() < segs.size() * (kinds + 1)) bounds.resize(segs.size() * (kinds + 1));
        std::uint32_t* at = &bounds[g * (kinds + 1)];
        at[kind_word] = static_cast<std::uint32_t>(out.words.size());
        bool others = false; // assignments or targets: rare, a pass each
        for (std::size_t j = b; j < pending.size(); ++j) {
            if (pending[j].kind == kind_word)
                out.words.push_back(pending[j].word);
            else
                others = true;
        }
        for (int k = kind_assignment; k < kinds; ++k) {
            at[k] = static_cast<std::uint32_t>(out.words.size());
            if (others)
                for (std::size_t j = b; j < pending.size(); ++j)
                    if (pending[j].kind == k) out.words.push_back(pending[j].word);
        }
        at[kinds] = static_cast<std::uint32_t>(out.words.size());
        pending.resize(b);
    };
    // The current word: s[raw_begin, raw_end) while `plain`, else `word`.
    std::string word;
    std::size_t raw_begin = 0, raw_end = 0;
    bool plain = true;
    bool have_word = false;
    int redirect_pending = 0; // 1: the next word is a write target
    auto cur = [&]() -> shell_segment& { return segs[static_cast<std::size_t>(stack.back())]; };
    auto current = [&]() -> std::string_view {
        return plain ? s.substr(raw_begin, raw_end - raw_begin) : std::string_view(word);
    };
    auto reset_word = [&] {
        word.clear();
        plain = true;
        have_word = false;
    };
    auto materialize = [&] {
        if (!plain) return;
        word.assign(s.data() + raw_begin, raw_end - raw_begin);
        plain = false;
    };
    // Appends s[b, e) to the word: it stays a view while the pieces are contiguous.
    auto append_raw = [&](std::size_t b, std::size_t e) {
        if (!have_word) {
            plain = true;
            raw_begin = b;
            raw_end = e;
            have_word = true;
        } else if (plain && b == raw_end) {
            raw_end = e;
        } else {
            materialize();
            word.append(s.data() + b, e - b);
        }
    };
    // Appends text that is not the command as written.
    auto append_built = [&](std::string_view piece) {
        if (!have_word) {
            word.clear();
            plain = false;
            have_word = true;
        } else {
            materialize();
        }
        word.append(piece);
    };
    auto end_word = [&] {
        if (!have_word) return;
        std::string_view w = current();
        if (!plain) w = out.built.emplace_front(std::move(word));
        shell_segment& sg = cur();
        if (redirect_pending) {
            pending.push_back({w, kind_target});
            redirect_pending = 0;
        } else if (sg.word_count == 0 && is_assignment_word(w)) {
            pending.push_back({w, kind_assignment});
        } else {
            pending.push_back({w, kind_word});
            ++sg.word_count;
        }
        reset_word();
    };
    auto new_segment = [&](bool piped) {
        end_word();
        flush_segment();
        redirect_pending = 0;
        shell_segment next;
        next.piped_from = piped;
        next.parent = cur().parent;
        segs.push_back(std::move(next));
        stack.back() = static_cast<int>(segs.size() - 1);
    };
    std::vector<std::string> saved_words;
    auto push_sub = [&](bool is_backtick) {
        const bool at_command = cur().word_count == 0 && !have_word;
        // The substitution's text also stands in the parent's word (as a marker).
        append_built(is_backtick ? "`" : "$(");
        shell_segment sub;
        sub.parent = stack.back();
        sub.command_position = at_command;
        segs.push_back(std::move(sub));
        // Save the parent's partial word: it continues after the substitution.
        stack.push_back(static_cast<int>(segs.size() - 1));
        pending_base.push_back(pending.size());
        in_dq.push_back(false);
        dq = false;
        backtick.push_back(is_backtick);
        saved_words.push_back(std::move(word));
        reset_word();
    };
    auto close_sub = [&] {
        end_word();
        flush_segment();
        pending_base.pop_back();
        stack.pop_back();
        in_dq.pop_back();
        dq = in_dq.back();
        backtick.pop_back();
        word = std::move(saved_words.back());
        word += ')';
        plain = false;
        have_word = true;
        saved_words.pop_back();
    };

    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (dq) {
            if (c == '"') {
                in_dq.back() = dq = false;
            } else if (c == '\\' && i + 1 < s.size()) {
                ++i;
                append_raw(i, i + 1);
            } else if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') {
                ++i;
                push_sub(false); // the parent level stays inside its quotes
            } else if (c == '`') {
                push_sub(true);
            } else {
                append_raw(i, i + 1);
            }
            if (!have_word) append_built({}); // a word has begun, even if empty so far
            continue;
        }
        // Ordinary characters and blanks, most of any command, before the switch.
        if (!is_shell_special(c)) {
            std::size_t end = i + 1;
            while (end < s.size() && !is_shell_special(s[end]))
                ++end;
            append_raw(i, end);
            i = end - 1;
            continue;
        }
        if (c == ' ' || c == '\t') {
            end_word();
            continue;
        }
        switch (c) {
        case '#':
            if (!have_word) { // a comment, to the end of the line
                const std::size_t nl = s.find('\n', i);
                i = (nl == std::string_view::npos ? s.size() : nl) - 1;
                break;
            }
            append_raw(i, i + 1);
            break;
        case '\'': {
            const std::size_t close = s.find('\'', i + 1);
            const std::size_t stop = close == std::string_view::npos ? s.size() : close;
            append_raw(i + 1, stop);
            i = stop;
            break;
        }
        case '"':
            in_dq.back() = dq = true;
            if (!have_word) append_built({});
            break;
        case '\\':
            if (i + 1 < s.size()) {
                append_raw(i + 1, s[i + 1] != '\n' ? i + 2 : i + 1);
                ++i;
            }
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
            if (have_word) {
                const std::string_view w = current();
                if (w.size() == 1 && std::isdigit(static_cast<unsigned char>(w[0]))) reset_word();
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
                append_raw(i, i + 1);
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
        default: // '\r': kept in the word, as the shell does
            append_raw(i, i + 1);
            break;
        }
    }
    while (stack.size() > 1)
        close_sub();
    end_word();
    flush_segment();
    const std::string_view* base = out.words.data();
    for (std::size_t g = 0; g < segs.size(); ++g) {
        const std::uint32_t* b = &bounds[g * (kinds + 1)];
        segs[g].words = {base + b[kind_word], b[kind_word + 1] - b[kind_word]};
        segs[g].assignments = {base + b[kind_assignment], b[kind_assignment + 1] - b[kind_assignment]};
        segs[g].write_targets = {base + b[kind_target], b[kind_target + 1] - b[kind_target]};
    }
    return out;
}

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
