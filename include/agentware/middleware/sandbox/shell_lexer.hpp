#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_SHELL_LEXER_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_SHELL_LEXER_HPP

// The shell lexer of the sandbox audit: splits a command line into simple
// commands (quotes, escapes, separators, pipes, redirections, command
// substitutions) in one pass, so that the risk classes are checked on words
// rather than on the raw text. Not a shell parser: only the structure those
// classes need.

#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::detail {

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

} // namespace agentware::detail

#endif
