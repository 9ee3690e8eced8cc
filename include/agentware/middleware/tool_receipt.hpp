#ifndef AGENTWARE_MIDDLEWARE_TOOL_RECEIPT_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_RECEIPT_HPP

// tool_receipt: a receipt for every tool call, and the receipt ledger shown to
// the model (DeerFlow's ToolReceiptMiddleware, deerflow-today.md §3.4).
//
//  * The stamp (wrap_tool_call): the result of each call gets a receipt in its
//    metadata (`deerflow_tool_receipt`): the tool's name, the status, digests of
//    the arguments and of the output, the output's size in bytes, the time. The
//    key belongs to the runtime: a value the tool put there is replaced. It is
//    the outermost tool wrapper of DeerFlow's chain, so the results the gates
//    inside it make (guardrail, sandbox_audit, read_before_write) get one too.
//  * The ledger (before_model): the receipts of the messages added since the
//    last round go into the `tool_receipts` state field, numbered r1..rN in
//    the order they came; the field keeps where it stopped, so a round reads
//    only what is new.
//  * The projection (wrap_model_call): a hidden human message with the ledger
//    (at most 2,000 characters, the newest receipts kept), right after the
//    request's leading system messages; the stored history does not change.
//    In `delegation_only` mode (the lead agent's default) only while the
//    current turn holds a subagent's result; in `always` mode on every call.

#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/core/type_list.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/detail/iso_time.hpp>
#include <agentware/detail/utf8.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/summarization.hpp> // detail::is_real_user_message

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentware {

struct sandbox_audit;
struct read_before_write;
struct tool_error_handling;

/// When the ledger is shown to the model.
enum class receipt_render_mode {
    always,          ///< on every model call (DeerFlow's subagent chains)
    delegation_only, ///< while the current turn holds a subagent's result (DeerFlow's lead chain)
};

constexpr std::string_view to_string(receipt_render_mode m) noexcept {
    return m == receipt_render_mode::always ? "always" : "delegation_only";
}

/// DeerFlow's `verification` section. `receipts_enabled` (default true) is
/// read by the preset, which leaves the middleware out when it is false.
struct tool_receipt_options {
    receipt_render_mode render_mode = receipt_render_mode::delegation_only; ///< `receipts_render_mode`
    std::size_t max_ledger_chars = 2000;         ///< of the projected ledger, in characters (code points)
    std::string meta_key = "deerflow_tool_meta"; ///< where tool_error_handling puts a result's status
    std::string subagent_status_key = "subagent_status"; ///< marks a subagent's result (the task tool's)

    static constexpr std::string_view config_section = "verification";
    friend bool operator==(const tool_receipt_options&, const tool_receipt_options&) = default;
};

/// One tool call's receipt.
struct tool_receipt_entry {
    std::string tool_call_id;
    std::string tool_name;
    std::string status;        ///< success, error, partial_success: deerflow_tool_meta's, or its own
    std::string args_sha256;   ///< the first 16 hex digits of the arguments' digest
    std::string output_sha256; ///< the first 16 hex digits of the output's digest
    std::size_t output_bytes = 0;
    std::string created_at; ///< ISO 8601, UTC (`Z`)
    friend bool operator==(const tool_receipt_entry&, const tool_receipt_entry&) = default;
};

/// The `tool_receipts` state field: the thread's receipts, r1..rN in order,
/// and how far the history was read (so a round reads only the new messages).
struct tool_receipts_state {
    std::vector<tool_receipt_entry> receipts;
    std::size_t seen = 0;             ///< messages read
    std::string seen_last_id;         ///< the id of the last one read (a rewritten history is read again)
    bool turn_has_delegation = false; ///< a subagent's result since the last real user message
    friend bool operator==(const tool_receipts_state&, const tool_receipts_state&) = default;
};

struct tool_receipts_field {
    static constexpr std::string_view name = "tool_receipts";
    using value_type = tool_receipts_state;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_receipt_entry& r) {
    jv = boost::json::object{{"tool_call_id", r.tool_call_id},
                             {"tool_name", r.tool_name},
                             {"status", r.status},
                             {"args_sha256", r.args_sha256},
                             {"output_sha256", r.output_sha256},
                             {"output_bytes", r.output_bytes},
                             {"created_at", r.created_at}};
}

inline tool_receipt_entry tag_invoke(boost::json::value_to_tag<tool_receipt_entry>,
                                     const boost::json::value& jv) {
    json_reader r(jv);
    tool_receipt_entry t;
    r.read("tool_call_id", t.tool_call_id)
        .read("tool_name", t.tool_name)
        .read("status", t.status)
        .read("args_sha256", t.args_sha256)
        .read("output_sha256", t.output_sha256)
        .read("output_bytes", t.output_bytes)
        .read("created_at", t.created_at)
        .reject_unknown_keys();
    return t;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_receipts_state& s) {
    boost::json::array receipts;
    receipts.reserve(s.receipts.size());
    for (const auto& r : s.receipts)
        receipts.push_back(boost::json::value_from(r));
    jv = boost::json::object{{"receipts", std::move(receipts)},
                             {"seen", s.seen},
                             {"seen_last_id", s.seen_last_id},
                             {"turn_has_delegation", s.turn_has_delegation}};
}

inline tool_receipts_state tag_invoke(boost::json::value_to_tag<tool_receipts_state>,
                                      const boost::json::value& jv) {
    json_reader r(jv);
    tool_receipts_state s;
    r.read("receipts", s.receipts)
        .read("seen", s.seen)
        .read("seen_last_id", s.seen_last_id)
        .read("turn_has_delegation", s.turn_has_delegation)
        .reject_unknown_keys();
    return s;
}

namespace detail {

// A string as Python's json.dumps writes it (ensure_ascii: \uXXXX beyond ASCII).
inline void python_json_string(std::string_view s, std::string& out) {
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto [ch, len] = detail::utf8_at(s, i);
        auto cp = static_cast<std::uint32_t>(ch);
        i += len;
        switch (cp) {
        case '"':
            out += "\\\"";
            continue;
        case '\\':
            out += "\\\\";
            continue;
        case '\n':
            out += "\\n";
            continue;
        case '\r':
            out += "\\r";
            continue;
        case '\t':
            out += "\\t";
            continue;
        case '\b':
            out += "\\b";
            continue;
        case '\f':
            out += "\\f";
            continue;
        default:
            break;
        }
        if (cp < 0x20 || (cp >= 0x80 && cp < 0x10000)) {
            out += fmt::format("\\u{:04x}", cp);
        } else if (cp >= 0x10000) {
            cp -= 0x10000;
            out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
        } else {
            out += static_cast<char>(cp);
        }
    }
    out += '"';
}

/// `v` as Python's `json.dumps(v, sort_keys=True)` writes it, so that the
/// arguments' digest is DeerFlow's (separators ", " and ": ", keys sorted by
/// code point, non-ASCII escaped, floats in Python's repr).
inline void python_json_dumps_sorted(const boost::json::value& v, std::string& out) {
    switch (v.kind()) {
    case boost::json::kind::null:
        out += "null";
        return;
    case boost::json::kind::bool_:
        out += v.get_bool() ? "true" : "false";
        return;
    case boost::json::kind::int64:
        out += fmt::format("{}", v.get_int64());
        return;
    case boost::json::kind::uint64:
        out += fmt::format("{}", v.get_uint64());
        return;
    case boost::json::kind::double_: {
        std::string d = fmt::format("{}", v.get_double());
        if (d == "inf")
            d = "Infinity";
        else if (d == "-inf")
            d = "-Infinity";
        else if (d == "nan" || d == "-nan")
            d = "NaN";
        else if (d.find_first_of(".e") == std::string::npos)
            d += ".0";
        out += d;
        return;
    }
    case boost::json::kind::string:
        python_json_string(v.get_string(), out);
        return;
    case boost::json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first) out += ", ";
            first = false;
            python_json_dumps_sorted(e, out);
        }
        out += ']';
        return;
    }
    case boost::json::kind::object: {
        const auto& o = v.get_object();
        std::vector<const boost::json::key_value_pair*> kvs;
        kvs.reserve(o.size());
        for (const auto& kv : o)
            kvs.push_back(&kv);
        std::sort(kvs.begin(), kvs.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
        out += '{';
        bool first = true;
        for (const auto* kv : kvs) {
            if (!first) out += ", ";
            first = false;
            python_json_string(kv->key(), out);
            out += ": ";
            python_json_dumps_sorted(kv->value(), out);
        }
        out += '}';
        return;
    }
    }
}

inline std::string short_sha256(std::string_view data) { return sha256_hex(data).substr(0, 16); }

} // namespace detail

class tool_receipt {
public:
    using state_fields = fields<tool_receipts_field>;
    /// The outermost tool wrapper: the gates inside it short-circuit calls
    /// with results of their own, and those get receipts too.
    using must_come_before = type_list<sandbox_audit, read_before_write, tool_error_handling>;

    // Text kept for parity with DeerFlow's ToolReceiptMiddleware
    static constexpr std::string_view receipt_key = "deerflow_tool_receipt";
    // Text kept for parity with DeerFlow's ToolReceiptMiddleware
    static constexpr std::string_view context_key = "deerflow_tool_receipt_context";
    // Text kept for parity with DeerFlow's ToolReceiptMiddleware
    static constexpr std::string_view ledger_header =
        "## Tool receipts (execution record)\n"
        "Cite receipt ids (e.g. [r1]) in your final report for every claim about an action you took.\n"
        "Execution evidence only \u2014 receipts record that a call happened and its status; they do not "
        "validate claim correctness or task acceptance.";
    // Text kept for parity with DeerFlow's ToolReceiptMiddleware
    static constexpr std::string_view omission_line = "- ... older receipts omitted (context budget)";
    // Text kept for parity with DeerFlow's ToolReceiptMiddleware: a receipt's line.
    static constexpr std::string_view line_format =
        "- [r{}] {} status={} args_sha256={} output_sha256={} bytes={}";

    tool_receipt() : tool_receipt(tool_receipt_options{}) {}
    explicit tool_receipt(tool_receipt_options o) : options_(std::move(o)) {}

    /// The clock that stamps receipts (the replay fixes it).
    std::function<std::chrono::system_clock::time_point()> clock = [] {
        return std::chrono::system_clock::now();
    };

    const tool_receipt_options& options() const noexcept { return options_; }

    /// Stamps the result of the call (and a state update's message answering it).
    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        return map_response(req, next, [this, call = req.call](auto r) {
            const tool_call& c = *call;
            if (r.msg.is_tool()) stamp(r.msg, c);
            for (auto& m : r.update.messages)
                if (m.is_tool() && m.tool_call_id() == c.id) stamp(m, c);
            return r;
        });
    }

    /// The receipt of `call` answered by `result`.
    tool_receipt_entry make_receipt(const tool_call& call, const message& result) const {
        tool_receipt_entry e;
        e.tool_call_id = call.id;
        e.tool_name = call.name;
        std::string args;
        detail::python_json_dumps_sorted(boost::json::value(call.args), args);
        e.args_sha256 = detail::short_sha256(args);
        const std::string output = result.text();
        e.output_sha256 = detail::short_sha256(output);
        e.output_bytes = output.size();
        e.status = result.is_error() ? "error" : "success";
        if (const auto* meta = result.metadata.if_contains(options_.meta_key); meta && meta->is_object())
            if (const auto* s = meta->get_object().if_contains("status");
                s && s->is_string() && !s->get_string().empty())
                e.status = std::string(s->get_string());
        e.created_at = detail::iso_utc(clock());
        return e;
    }

    /// Reads the messages added since the last round into the ledger.
    template <class State>
    void before_model(State& state, runtime&) {
        update_ledger(get<tool_receipts_field>(state), state.messages);
    }

    /// Inserts the hidden ledger message after the leading system messages.
    template <class Request, class Next>
    decltype(auto) wrap_model_call(Request& req, Next&& next) {
        if (req.state) {
            const tool_receipts_state& ledger = get<tool_receipts_field>(*req.state);
            if (options_.render_mode == receipt_render_mode::always || ledger.turn_has_delegation) {
                std::string text = render(ledger.receipts);
                if (!text.empty()) {
                    message hidden = human_message(std::move(text));
                    hidden.metadata["hide_from_ui"] = true;
                    hidden.metadata[context_key] = true;
                    std::size_t at = 0;
                    while (at < req.messages.size() && req.messages[at].is_system())
                        ++at;
                    auto& ms = req.messages.edit();
                    ms.insert(ms.begin() + static_cast<std::ptrdiff_t>(at), std::move(hidden));
                }
            }
        }
        return next(req);
    }

    /// Folds the messages of `ms` not read yet into `ledger`. A history that
    /// no longer continues the one read (a summary replaced its start) is
    /// read again, skipping the calls the ledger has already.
    template <class Messages>
    void update_ledger(tool_receipts_state& ledger, const Messages& ms) const {
        std::size_t from = ledger.seen;
        const bool rewritten = from > ms.size() || (from > 0 && ms[from - 1].id != ledger.seen_last_id);
        if (rewritten) {
            from = 0;
            ledger.turn_has_delegation = false;
        }
        for (std::size_t i = from; i < ms.size(); ++i) {
            const message& m = ms[i];
            if (detail::is_real_user_message(m)) {
                ledger.turn_has_delegation = false;
                continue;
            }
            if (!m.is_tool()) continue;
            if (const auto* s = m.metadata.if_contains(options_.subagent_status_key); s && truthy(*s))
                ledger.turn_has_delegation = true;
            const auto* stamp_value = m.metadata.if_contains(receipt_key);
            if (stamp_value == nullptr) continue;
            tool_receipt_entry e;
            if (!valid_receipt(*stamp_value, e)) continue;
            if (rewritten && std::any_of(ledger.receipts.begin(), ledger.receipts.end(),
                                         [&](const auto& r) { return r.tool_call_id == e.tool_call_id; }))
                continue;
            ledger.receipts.push_back(std::move(e));
        }
        ledger.seen = ms.size();
        ledger.seen_last_id = ms.size() == 0 ? std::string() : ms[ms.size() - 1].id;
    }

    /// The ledger's text, "" without receipts. The newest receipts are kept
    /// within max_ledger_chars; only those are looked at.
    std::string render(const std::vector<tool_receipt_entry>& receipts) const {
        const std::size_t max = options_.max_ledger_chars;
        if (receipts.empty() || max == 0) return {};
        const std::size_t n = receipts.size();
        std::vector<std::string> tail; // newest first
        const std::size_t header = detail::utf8_chars(ledger_header);
        std::size_t total = header;
        std::size_t k = n;
        for (; k > 0; --k) {
            std::string line = receipt_line(k, receipts[k - 1]);
            std::size_t next_total = total + 1 + detail::utf8_chars(line);
            if (next_total > max) break;
            total = next_total;
            tail.push_back(std::move(line));
        }
        std::string out(ledger_header);
        if (k == 0) { // all fit
            for (auto it = tail.rbegin(); it != tail.rend(); ++it)
                out.append("\n").append(*it);
            return out;
        }
        // Not all fit: the omission line, then the newest lines that fit with it.
        std::size_t with_omission = header + 1 + detail::utf8_chars(omission_line);
        std::size_t keep = 0;
        for (; keep < tail.size(); ++keep) {
            std::size_t next_total = with_omission + 1 + detail::utf8_chars(tail[keep]);
            if (next_total > max) break;
            with_omission = next_total;
        }
        out.append("\n").append(omission_line);
        for (std::size_t i = keep; i > 0; --i)
            out.append("\n").append(tail[i - 1]);
        return bound(std::move(out), max);
    }

private:
    static std::string receipt_line(std::size_t number, const tool_receipt_entry& r) {
        return fmt::format(fmt::runtime(line_format), number, r.tool_name, r.status, r.args_sha256,
                           r.output_sha256, r.output_bytes);
    }

    // DeerFlow's hard cut of a rendered text: its first max - 4 characters and "\n...".
    static std::string bound(std::string text, std::size_t max) {
        if (detail::utf8_chars(text) <= max) return text;
        if (max <= 4) return std::string(detail::first_code_points(text, max));
        std::string out(detail::first_code_points(text, max - 4));
        out += "\n...";
        return out;
    }

    static bool truthy(const boost::json::value& v) {
        if (v.is_bool()) return v.get_bool();
        if (v.is_string()) return !v.get_string().empty();
        if (v.is_null()) return false;
        if (v.is_int64()) return v.get_int64() != 0;
        if (v.is_object()) return !v.get_object().empty();
        if (v.is_array()) return !v.get_array().empty();
        return true;
    }

    // A stamp read back from a message (checkpoints bring them back): of the
    // receipt's shape, strings of at most 256 characters, else left out.
    static bool valid_receipt(const boost::json::value& v, tool_receipt_entry& out) {
        const auto* o = v.if_object();
        if (o == nullptr) return false;
        auto str = [&](std::string_view key, std::string& into) {
            const auto* s = o->if_contains(key);
            if (s == nullptr || !s->is_string() || detail::utf8_chars(s->get_string()) > 256) return false;
            into = std::string(s->get_string());
            return true;
        };
        if (!str("tool_call_id", out.tool_call_id) || !str("tool_name", out.tool_name) ||
            !str("status", out.status) || !str("args_sha256", out.args_sha256) ||
            !str("output_sha256", out.output_sha256) || !str("created_at", out.created_at))
            return false;
        const auto* b = o->if_contains("output_bytes");
        if (b == nullptr) return false;
        if (b->is_int64() && b->get_int64() >= 0)
            out.output_bytes = static_cast<std::size_t>(b->get_int64());
        else if (b->is_uint64())
            out.output_bytes = static_cast<std::size_t>(b->get_uint64());
        else
            return false;
        return true;
    }

    void stamp(message& m, const tool_call& call) const {
        // The key is the runtime's: always replaced, so a tool cannot forge its own receipt.
        m.metadata[receipt_key] = boost::json::value_from(make_receipt(call, m));
    }

    tool_receipt_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_receipt_options& o) {
    jv = boost::json::object{{"receipts_render_mode", to_string(o.render_mode)},
                             {"max_ledger_chars", o.max_ledger_chars},
                             {"meta_key", o.meta_key},
                             {"subagent_status_key", o.subagent_status_key}};
}

/// DeerFlow's `verification` section less `receipts_enabled` (the preset's
/// switch): `receipts_render_mode`, and agentware's `max_ledger_chars`,
/// `meta_key`, `subagent_status_key`. DeerFlow's reserved judge keys are
/// accepted while off (`judge_enabled: false`, `judge_model_name`).
inline tool_receipt_options tag_invoke(boost::json::value_to_tag<tool_receipt_options>,
                                       const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_receipt_options::config_section));
    tool_receipt_options o;
    r.choice(
        "receipts_render_mode", o.render_mode,
        {{"always", receipt_render_mode::always}, {"delegation_only", receipt_render_mode::delegation_only}});
    r.read("max_ledger_chars", o.max_ledger_chars)
        .read("meta_key", o.meta_key)
        .read("subagent_status_key", o.subagent_status_key);
    if (r.optional<bool>("judge_enabled").value_or(false))
        throw json_error(r.path_of("judge_enabled"),
                         "the selective judge is not implemented: set it to false");
    (void)r.optional<std::string>("judge_model_name");
    r.reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
