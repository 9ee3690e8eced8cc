#ifndef AGENTWARE_MIDDLEWARE_PII_REDACTION_HPP
#define AGENTWARE_MIDDLEWARE_PII_REDACTION_HPP

// pii_redaction: personal data in what reaches the model is replaced by
// numbered placeholders (`[EMAIL_1]`, `[PHONE_2]`), DeerFlow's
// PiiRedactionMiddleware (issue #3190, PR #5527). Distinct from LangChain's
// `pii` (pii.hpp): other patterns, other placeholders, and no strategies; only
// the Luhn check, the same in both, is pii's.
//
// Two places, as DeerFlow's:
//   * the genuine user messages of each model request (wrap_model_call), in
//     the request only: the thread keeps what the user wrote. One numbering
//     spans the request, so the Nth distinct email of the thread is always
//     `[EMAIL_N]`;
//   * the results of remote tools (wrap_tool_call): DeerFlow's web tools by
//     name (tool_result_sanitization's list) and every MCP tool. The stored
//     tool message is the redacted one; numbering restarts per result.
//
// The detectors run in a fixed order (email, API key, national ID, credit
// card, phone), each over the text the previous left; numeric identifiers are
// kept only when their checksum holds (Luhn, GB 11643, CPF). Redaction is
// irreversible: no table maps a placeholder back to its value.
//
// Cost: the model side keeps, per thread, how far it has read and the
// placeholders given so far, so a round reads only the messages that are new
// and the last user message (the one outer middlewares rewrite each round);
// the request is edited (one copy of the list) only when a message changed,
// and only the changed messages are replaced.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/input_sanitization.hpp>
#include <agentware/middleware/pii.hpp>
#include <agentware/middleware/tool_output_budget.hpp>
#include <agentware/middleware/tool_result_sanitization.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

struct pii_redaction_options {
    bool redact_email = true;       ///< email addresses
    bool redact_api_key = true;     ///< sk-, AKIA, ghp_/gho_/..., github_pat_, xox?-, AIza keys
    bool redact_credit_card = true; ///< card numbers that pass Luhn
    bool redact_phone = true;       ///< +CC numbers, CN mobiles, (US) formatted numbers
    bool redact_national_id = true; ///< CN resident ID and CPF (checksummed), CUIT and RFC (format)

    /// DeerFlow's `pii_redaction.enabled` is false by default: the section is
    /// read by make_deerflow_pipeline, which engages the middleware only when
    /// it is true (or the section is `true`).
    static constexpr std::string_view config_section = "pii_redaction";
    friend bool operator==(const pii_redaction_options&, const pii_redaction_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const pii_redaction_options& o) {
    jv = boost::json::object{{"redact_email", o.redact_email},
                             {"redact_api_key", o.redact_api_key},
                             {"redact_credit_card", o.redact_credit_card},
                             {"redact_phone", o.redact_phone},
                             {"redact_national_id", o.redact_national_id}};
}
inline pii_redaction_options tag_invoke(boost::json::value_to_tag<pii_redaction_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(pii_redaction_options::config_section));
    pii_redaction_options o;
    r.read("redact_email", o.redact_email)
        .read("redact_api_key", o.redact_api_key)
        .read("redact_credit_card", o.redact_credit_card)
        .read("redact_phone", o.redact_phone)
        .read("redact_national_id", o.redact_national_id)
        .reject_unknown_keys();
    return o;
}

namespace detail {

/// The detectors, in the order they run.
enum class pii_kind : std::size_t { email, api_key, national_id, credit_card, phone };
inline constexpr std::size_t pii_kinds = 5;

/// The placeholder's name for each kind, in pii_kind's order.
// Text kept for parity with DeerFlow's PiiRedactionMiddleware
inline constexpr std::array<std::string_view, pii_kinds> pii_placeholder_names = {
    "EMAIL", "API_KEY", "NATIONAL_ID", "CREDIT_CARD", "PHONE"};

struct pii_span {
    std::size_t begin, end;
};

inline bool pii_is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool pii_is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
inline bool pii_is_alpha(char c) noexcept { return pii_is_upper(c) || (c >= 'a' && c <= 'z'); }
inline bool pii_is_alnum(char c) noexcept { return pii_is_alpha(c) || pii_is_digit(c); }
/// `\w` as Python's `re` reads it on text, near enough: ASCII letters, digits,
/// `_`, and every byte of a non-ASCII character (letters and CJK are word
/// characters there; non-ASCII punctuation is the exception).
inline bool pii_is_word(char c) noexcept {
    return pii_is_alnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
/// `\b` at position i of t.
inline bool pii_boundary(std::string_view t, std::size_t i) noexcept {
    const bool before = i > 0 && pii_is_word(t[i - 1]);
    const bool after = i < t.size() && pii_is_word(t[i]);
    return before != after;
}

// The email pattern, [A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,},
// matched by hand in one pass (a backtracking engine is quadratic over long
// runs of letters): at each '@', the local part is the run of its characters
// before it, and the domain ends after the last dot, reachable through
// non-empty labels, that two or more letters follow (where the pattern's
// backtracking ends too).
inline bool pii_is_local_char(char c) noexcept {
    return pii_is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}
inline bool pii_is_label_char(char c) noexcept { return pii_is_alnum(c) || c == '-'; }

inline std::optional<pii_span> pii_next_email(std::string_view t, std::size_t from) {
    const std::size_t n = t.size();
    for (std::size_t at = t.find('@', from); at != std::string_view::npos; at = t.find('@', at + 1)) {
        std::size_t b = at;
        while (b > from && pii_is_local_char(t[b - 1]))
            --b;
        if (b == at) continue;
        std::size_t q = at + 1;
        while (q < n && pii_is_label_char(t[q]))
            ++q;
        if (q == at + 1) continue;
        std::size_t end = std::string_view::npos;
        while (q < n && t[q] == '.') {
            std::size_t r = q + 1;
            while (r < n && pii_is_alpha(t[r]))
                ++r;
            if (r - (q + 1) >= 2) end = r;
            std::size_t s = q + 1;
            while (s < n && pii_is_label_char(t[s]))
                ++s;
            if (s == q + 1) break; // an empty label: no dot further on is reachable
            q = s;
        }
        if (end != std::string_view::npos) return pii_span{b, end};
    }
    return std::nullopt;
}

// The API-key pattern, \b(?:sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}
// |github_pat_[A-Za-z0-9_]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})\b,
// by hand for the same reason: a run of at least `min` (at most `max`) characters of
// `in` after the prefix, the longest one that ends on a word boundary.
template <class In>
std::size_t pii_key_end(std::string_view t, std::size_t start, In in, std::size_t min, std::size_t max) {
    std::size_t m = 0;
    while (start + m < t.size() && m < max && in(t[start + m]))
        ++m;
    for (std::size_t len = m; len >= min && len > 0; --len) // every `min` here is above 0
        if (pii_boundary(t, start + len)) return start + len;
    return std::string_view::npos;
}

inline std::size_t pii_api_key_at(std::string_view t, std::size_t i) {
    constexpr std::size_t any = std::string_view::npos;
    const std::string_view rest = t.substr(i);
    const auto one_of = [&](std::size_t k, std::string_view set) {
        return k < rest.size() && set.find(rest[k]) != std::string_view::npos;
    };
    const auto key_char = [](char c) { return pii_is_alnum(c) || c == '_' || c == '-'; };
    std::size_t end = any;
    if (rest.starts_with("sk-")) end = pii_key_end(t, i + 3, key_char, 20, any);
    if (end == any && rest.starts_with("AKIA"))
        end = pii_key_end(
            t, i + 4, [](char c) { return pii_is_digit(c) || pii_is_upper(c); }, 16, 16);
    if (end == any && rest.starts_with("gh") && one_of(2, "pousr") && one_of(3, "_"))
        end = pii_key_end(t, i + 4, pii_is_alnum, 30, any);
    if (end == any && rest.starts_with("github_pat_"))
        end = pii_key_end(
            t, i + 11, [](char c) { return pii_is_alnum(c) || c == '_'; }, 20, any);
    if (end == any && rest.starts_with("xox") && one_of(3, "baprs") && one_of(4, "-"))
        end = pii_key_end(
            t, i + 5, [](char c) { return pii_is_alnum(c) || c == '-'; }, 10, any);
    if (end == any && rest.starts_with("AIza")) end = pii_key_end(t, i + 4, key_char, 35, 35);
    return end;
}

inline std::optional<pii_span> pii_next_api_key(std::string_view t, std::size_t from) {
    for (std::size_t i = from; i < t.size(); ++i) {
        const char c = t[i];
        if (c != 's' && c != 'A' && c != 'g' && c != 'x') continue;
        if (!pii_boundary(t, i)) continue;
        if (const std::size_t end = pii_api_key_at(t, i); end != std::string_view::npos)
            return pii_span{i, end};
    }
    return std::nullopt;
}

// The numeric detectors: bounded patterns, for std::regex (ECMAScript, which
// alternates leftmost-first as DeerFlow's Python `re` does).
inline const std::regex& pii_national_id_regex() {
    // CN resident ID | CPF | CUIT | RFC with homoclave (its letters include Ñ, two bytes in UTF-8)
    static const std::regex re("\\b\\d{17}[\\dXx]\\b"
                               "|\\b\\d{3}\\.\\d{3}\\.\\d{3}-\\d{2}\\b"
                               "|\\b\\d{2}-\\d{10}-\\d\\b"
                               "|(?:\\b[A-Z&]|\xC3\x91)(?:[A-Z&]|\xC3\x91){3}\\d{6}[0-9A-Z]{3}\\b",
                               std::regex::ECMAScript | std::regex::optimize);
    return re;
}
inline const std::regex& pii_credit_card_regex() {
    static const std::regex re("\\b(?:\\d{4}[ -]){3}\\d{1,7}\\b|\\b\\d{13,19}\\b",
                               std::regex::ECMAScript | std::regex::optimize);
    return re;
}
inline const std::regex& pii_phone_regex() {
    // international +CC form | CN mobile | US formatted
    static const std::regex re("\\+\\d{1,3}[\\s-]?(?:\\d{2,4}[\\s-]?){2,4}\\d{2,4}"
                               "|\\b1[3-9]\\d{9}\\b"
                               "|\\(\\d{3}\\)\\s?\\d{3}[-.]?\\d{4}\\b",
                               std::regex::ECMAScript | std::regex::optimize);
    return re;
}

// std::regex's `\b` takes a non-ASCII byte for a non-word character, Python's
// `re` a non-ASCII letter for a word character: a match that Python's `\b`
// would refuse next to one is passed over, as Python passes over that position.
// (The international phone form has no `\b`; the others start and end on theirs.)
inline bool pii_python_boundaries_hold(std::string_view t, std::size_t b, std::size_t e) noexcept {
    if (t[b] == '+') return true;
    const auto non_ascii = [&](std::size_t i) { return static_cast<unsigned char>(t[i]) >= 0x80; };
    if (b > 0 && pii_is_alnum(t[b]) && non_ascii(b - 1)) return false;
    if (e < t.size() && pii_is_alnum(t[e - 1]) && non_ascii(e)) return false;
    return true;
}

inline std::optional<pii_span> pii_next_regex(const std::regex& re, std::string_view t, std::size_t from) {
    std::cmatch m;
    while (from < t.size()) {
        const auto flags =
            from > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default;
        if (!std::regex_search(t.data() + from, t.data() + t.size(), m, re, flags)) return std::nullopt;
        const auto begin = from + static_cast<std::size_t>(m.position(0));
        const auto end = begin + static_cast<std::size_t>(m.length(0));
        if (end > begin && pii_python_boundaries_hold(t, begin, end)) return pii_span{begin, end};
        from = begin + 1;
    }
    return std::nullopt;
}

// The checksums that keep a numeric match.
inline bool pii_cn_resident_id_valid(std::string_view v) noexcept {
    static constexpr int weights[17] = {7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2};
    static constexpr std::string_view check_digits = "10X98765432";
    if (v.size() != 18) return false;
    const auto num = [&](std::size_t at, std::size_t len) {
        int x = 0;
        for (std::size_t k = at; k < at + len; ++k)
            x = x * 10 + (v[k] - '0');
        return x;
    };
    const int year = num(6, 4), month = num(10, 2), day = num(12, 2);
    if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) return false;
    int total = 0;
    for (std::size_t k = 0; k < 17; ++k)
        total += (v[k] - '0') * weights[k];
    const char last = v[17] == 'x' ? 'X' : v[17];
    return check_digits[static_cast<std::size_t>(total % 11)] == last;
}

inline bool pii_cpf_valid(std::string_view v) noexcept {
    std::vector<int> d;
    for (char c : v)
        if (pii_is_digit(c)) d.push_back(c - '0');
    if (d.size() != 11 || std::all_of(d.begin(), d.end(), [&](int x) { return x == d[0]; })) return false;
    for (std::size_t boundary : {std::size_t{9}, std::size_t{10}}) {
        int weight = 2, total = 0;
        for (std::size_t k = boundary; k-- > 0;)
            total += d[k] * weight++;
        if ((total * 10) % 11 % 10 != d[boundary]) return false;
    }
    return true;
}

inline bool pii_national_id_valid(std::string_view v) noexcept {
    const bool dotted = v.find('.') != std::string_view::npos;
    const bool resident_shape =
        v.size() == 18 && std::all_of(v.begin(), v.begin() + 17, [](char c) { return pii_is_digit(c); });
    if (dotted) return pii_cpf_valid(v);
    if (resident_shape) return pii_cn_resident_id_valid(v);
    return true; // CUIT and RFC: the format alone
}

inline bool pii_phone_valid(std::string_view v) noexcept {
    const auto digits = std::count_if(v.begin(), v.end(), [](char c) { return pii_is_digit(c); });
    return digits >= 8 && digits <= 15;
}

inline std::optional<pii_span> pii_next(pii_kind kind, std::string_view t, std::size_t from) {
    switch (kind) {
    case pii_kind::email:
        return pii_next_email(t, from);
    case pii_kind::api_key:
        return pii_next_api_key(t, from);
    case pii_kind::national_id:
        return pii_next_regex(pii_national_id_regex(), t, from);
    case pii_kind::credit_card:
        return pii_next_regex(pii_credit_card_regex(), t, from);
    case pii_kind::phone:
        return pii_next_regex(pii_phone_regex(), t, from);
    }
    return std::nullopt;
}

inline bool pii_valid(pii_kind kind, std::string_view v) {
    switch (kind) {
    case pii_kind::national_id:
        return pii_national_id_valid(v);
    case pii_kind::credit_card:
        return luhn_valid(v); // LangChain pii's check: the same as DeerFlow's
    case pii_kind::phone:
        return pii_phone_valid(v);
    default:
        return true;
    }
}

/// The detectors an options value turns on, in their order.
inline std::array<bool, pii_kinds> pii_enabled_kinds(const pii_redaction_options& o) noexcept {
    return {o.redact_email, o.redact_api_key, o.redact_national_id, o.redact_credit_card, o.redact_phone};
}

} // namespace detail

/// One numbering of placeholders: the same value gets the same placeholder,
/// the Nth distinct value of a kind gets `[KIND_N]`. One instance covers one
/// scan (a model request, a tool result); copies continue independently.
class pii_redactor {
public:
    pii_redactor() : pii_redactor(pii_redaction_options{}) {}
    explicit pii_redactor(const pii_redaction_options& o) : on_(detail::pii_enabled_kinds(o)) {}

    /// `text` with every match replaced, or nullopt when nothing matched.
    std::optional<std::string> redact(std::string_view text) {
        std::optional<std::string> out;
        for (std::size_t k = 0; k < detail::pii_kinds; ++k) {
            if (!on_[k]) continue;
            const std::string_view current = out ? std::string_view(*out) : text;
            if (auto next = pass(static_cast<detail::pii_kind>(k), current)) out = std::move(next);
        }
        return out;
    }

    /// `text` with every match replaced.
    std::string redact_text(std::string_view text) {
        auto out = redact(text);
        return out ? std::move(*out) : std::string(text);
    }

private:
    std::optional<std::string> pass(detail::pii_kind kind, std::string_view t) {
        std::optional<std::string> out;
        std::size_t done = 0, from = 0;
        while (from <= t.size()) {
            const auto m = detail::pii_next(kind, t, from);
            if (!m) break;
            const std::string_view value = t.substr(m->begin, m->end - m->begin);
            from = m->end > m->begin ? m->end : m->end + 1;
            if (!detail::pii_valid(kind, value)) continue;
            if (!out) out.emplace().reserve(t.size());
            out->append(t.substr(done, m->begin - done)).append(placeholder(kind, value));
            done = m->end;
        }
        if (out) out->append(t.substr(done));
        return out;
    }

    const std::string& placeholder(detail::pii_kind kind, std::string_view value) {
        const auto k = static_cast<std::size_t>(kind);
        auto& tokens = tokens_[k];
        auto it = tokens.find(std::string(value));
        if (it == tokens.end()) {
            // Text kept for parity with DeerFlow's PiiRedactionMiddleware
            std::string token = "[" + std::string(detail::pii_placeholder_names[k]) + "_" +
                                std::to_string(++counts_[k]) + "]";
            it = tokens.emplace(std::string(value), std::move(token)).first;
        }
        return it->second;
    }

    std::array<bool, detail::pii_kinds> on_{};
    std::array<std::unordered_map<std::string, std::string>, detail::pii_kinds> tokens_{};
    std::array<std::size_t, detail::pii_kinds> counts_{};
};

namespace detail {

/// `m` with its text blocks redacted through `r`, or nullopt when none changed.
inline std::optional<message> pii_redact_message(const message& m, pii_redactor& r) {
    std::optional<message> out;
    for (std::size_t k = 0; k < m.content.size(); ++k) {
        if (!m.content[k].is_text()) continue;
        auto text = r.redact(m.content[k].text);
        if (!text) continue;
        if (!out) out = m;
        out->content[k].text = std::move(*text);
    }
    return out;
}

} // namespace detail

struct pii_redaction {
    /// Outermost wrappers before it: user messages reach it after their other
    /// rewrites, and tool results are redacted before tool_result_sanitization
    /// neutralises them and tool_output_budget moves long ones to disk.
    using must_come_after = type_list<input_sanitization, tool_output_budget, tool_result_sanitization>;

    pii_redaction_options options;
    /// The tools whose results come from elsewhere, besides MCP tools: DeerFlow's web tools.
    std::vector<std::string> remote_tools = tool_result_sanitization_options{}.tools;

    pii_redaction() = default;
    explicit pii_redaction(pii_redaction_options o) : options(o) {}

    /// `text` redacted with a numbering of its own (for the inputs of a
    /// summary or a title, which DeerFlow passes through its redaction too).
    std::string redact_text(std::string_view text) const { return pii_redactor(options).redact_text(text); }

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        std::string thread;
        if (req.rt != nullptr) thread = req.rt->thread_id;
        std::vector<std::pair<std::size_t, message>> changes;
        {
            std::lock_guard lock(cache_->mutex);
            auto& scan = cache_->thread(thread);
            changes = scan.advance(req.messages, options);
        }
        if (!changes.empty()) {
            auto& msgs = req.messages.edit();
            for (auto& [i, m] : changes)
                msgs[i] = std::move(m);
        }
        return next(req);
    }

    template <class Request>
    bool redacts_results_of(const Request& req) const {
        if (std::find(remote_tools.begin(), remote_tools.end(), req.call->name) != remote_tools.end())
            return true;
        return req.tool != nullptr && req.tool->is_mcp();
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (!redacts_results_of(req)) return next(req);
        return map_response(req, next, [o = options](tool_response r) {
            pii_redactor redactor(o);
            if (auto m = detail::pii_redact_message(r.msg, redactor)) r.msg = std::move(*m);
            return r;
        });
    }

private:
    // What the model side has read of one thread: the first `seen` messages
    // (the last one's id and text size, to notice a rewritten history), the
    // numbering after the committed user messages, their redacted forms, and
    // the last genuine user message, `pending`: outer middlewares rewrite it
    // every round, so it is redacted afresh each round and committed (in
    // order, into the numbering) once another user message follows it.
    struct thread_scan {
        std::size_t seen = 0;
        std::string last_id;
        std::size_t last_size = 0;
        std::optional<std::size_t> pending;
        pii_redactor numbering;
        std::map<std::size_t, message> redacted;

        static std::size_t text_size(const message& m) noexcept {
            std::size_t n = 0;
            for (const auto& b : m.content)
                if (b.is_text()) n += b.text.size();
            return n;
        }

        template <class Messages>
        bool still_same(const Messages& msgs) const {
            if (seen == 0 || seen > msgs.size() || msgs[seen - 1].id != last_id) return false;
            if (pending != seen - 1 && text_size(msgs[seen - 1]) != last_size) return false;
            for (const auto& [i, m] : redacted)
                if (i >= msgs.size() || msgs[i].id != m.id) return false;
            return true;
        }

        template <class Messages>
        std::vector<std::pair<std::size_t, message>> advance(const Messages& msgs,
                                                             const pii_redaction_options& o) {
            if (!still_same(msgs)) {
                *this = thread_scan{};
                numbering = pii_redactor(o);
            }
            for (std::size_t i = seen; i < msgs.size(); ++i) {
                if (!detail::is_genuine_user_message(msgs[i])) continue;
                if (pending)
                    if (auto m = detail::pii_redact_message(msgs[*pending], numbering))
                        redacted.emplace(*pending, std::move(*m));
                pending = i;
            }
            if (msgs.size() > seen) {
                seen = msgs.size();
                last_id = msgs[seen - 1].id;
                last_size = text_size(msgs[seen - 1]);
            }
            std::vector<std::pair<std::size_t, message>> out;
            out.reserve(redacted.size() + 1);
            for (const auto& [i, m] : redacted)
                out.emplace_back(i, m);
            if (pending) {
                pii_redactor fresh = numbering;
                if (auto m = detail::pii_redact_message(msgs[*pending], fresh))
                    out.emplace_back(*pending, std::move(*m));
            }
            return out;
        }
    };

    struct scan_cache {
        static constexpr std::size_t max_threads = 4096;
        std::mutex mutex;
        std::unordered_map<std::string, thread_scan> threads;

        thread_scan& thread(const std::string& id) {
            if (threads.size() >= max_threads && !threads.contains(id)) threads.clear();
            return threads[id];
        }
    };

    std::shared_ptr<scan_cache> cache_ = std::make_shared<scan_cache>();
};

} // namespace agentware

#endif
