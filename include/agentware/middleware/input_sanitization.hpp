#ifndef AGENTWARE_MIDDLEWARE_INPUT_SANITIZATION_HPP
#define AGENTWARE_MIDDLEWARE_INPUT_SANITIZATION_HPP

// input_sanitization: the user's newest message reaches the model with the
// prompt's own tags defused and framed as user input (DeerFlow's
// InputSanitizationMiddleware). In the request only: the stored message keeps
// what the user wrote.
//
// The message is the last genuine user message: a human message not named
// "summary", and either visible or a clarification answer (a valid
// `human_input_response`). Its text has the blocked tags escaped and the
// boundary tokens replaced (detail/untrusted_text.hpp, one pass), and is then
// wrapped in "--- BEGIN USER INPUT ---" / "--- END USER INPUT ---". When the
// uploads middleware put its <current_uploads> block in front of the user's
// text (metadata `original_user_content`), only the user's own text is
// sanitised and framed; the block stays as the server wrote it.
//
// Its wrap_model_call must be the outermost, so every inner wrapper (retries
// included) sees the sanitised request: it declares `must_be_outermost_model_wrapper`.

#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/untrusted_text.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

struct input_sanitization_options {
    bool frame = true; ///< wrap the text in the user-input boundary tokens (false: only neutralise)

    static constexpr std::string_view config_section = "input_sanitization";
    friend bool operator==(const input_sanitization_options&, const input_sanitization_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const input_sanitization_options& o) {
    jv = boost::json::object{{"frame", o.frame}};
}
inline input_sanitization_options tag_invoke(boost::json::value_to_tag<input_sanitization_options>,
                                             const boost::json::value& jv) {
    json_reader r(jv, std::string(input_sanitization_options::config_section));
    input_sanitization_options o;
    r.read("frame", o.frame).reject_unknown_keys();
    return o;
}

namespace detail {

inline bool is_blank_text(std::string_view s) noexcept {
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
    return true;
}

/// A clarification answer card: hidden, but the user's own words.
inline bool has_human_input_response(const message& m) {
    const auto* r = m.metadata.if_contains("human_input_response");
    if (!r || !r->is_object()) return false;
    const auto* kind = r->get_object().if_contains("kind");
    return kind && kind->is_string() && kind->get_string() == "human_input_response" &&
           r->get_object().contains("value");
}

/// DeerFlow's "genuine user message": human, not a summary, visible or a clarification answer.
inline bool is_genuine_user_message(const message& m) {
    if (!m.is_human() || m.name == "summary") return false;
    return !m.metadata_flag("hide_from_ui") || has_human_input_response(m);
}

/// True when `text` is already framed: begin marker and newline first, newline and end marker last.
inline bool is_framed_user_text(std::string_view text) noexcept {
    const std::string_view begin = user_input_begin, end = user_input_end;
    return text.size() > begin.size() && text.size() > end.size() && text.starts_with(begin) &&
           text[begin.size()] == '\n' && text.ends_with(end) && text[text.size() - end.size() - 1] == '\n';
}

/// Appends `text` neutralised and framed to `out` (as it is when blank or,
/// framing, already framed), written there in one pass; true when what was
/// appended differs from `text`.
inline bool append_sanitized_user_text(std::string& out, std::string_view text, bool frame) {
    if (is_blank_text(text) || (frame && is_framed_user_text(text))) {
        out.append(text);
        return false;
    }
    if (!frame) return append_neutralized(out, text);
    // Room for the frame and for dense escapes (the neutraliser's own estimate): nothing regrows.
    out.reserve(out.size() + user_input_begin.size() + user_input_end.size() + 2 + text.size() +
                text.size() / 4 + 64);
    // Text kept for parity with DeerFlow (reference §5.16a).
    out.append(user_input_begin).append("\n");
    append_neutralized(out, text);
    out.append("\n").append(user_input_end);
    return true;
}

/// Neutralised and framed (as it is when blank or, framing, already framed).
inline std::string sanitize_user_text(std::string_view text, bool frame) {
    std::string out;
    append_sanitized_user_text(out, text, frame);
    return out;
}

} // namespace detail

struct input_sanitization {
    /// Nothing may wrap the model call outside it (see core/ordering.hpp).
    static constexpr bool must_be_outermost_model_wrapper = true;

    input_sanitization_options options;

    input_sanitization() = default;
    explicit input_sanitization(input_sanitization_options o) : options(o) {}

    auto wrap_model_call(auto& req, auto&& next) -> decltype(next(req)) {
        const auto& msgs = req.messages;
        std::size_t i = msgs.size();
        while (i > 0 && !detail::is_genuine_user_message(msgs[i - 1]))
            --i;
        if (i == 0) return next(req);
        if (auto changed = sanitize(msgs[i - 1])) req.messages.edit()[i - 1] = std::move(*changed);
        return next(req);
    }

    /// The message as the model should see it, or nullopt when it stays as it is.
    std::optional<message> sanitize(const message& m) const {
        // The text blocks concatenated: a view of the block when there is one (no copy).
        std::size_t text_blocks = 0, first_text = m.content.size();
        std::string joined;
        std::string_view text;
        for (std::size_t k = 0; k < m.content.size(); ++k)
            if (m.content[k].is_text()) {
                if (text_blocks++ == 0) {
                    first_text = k;
                    text = m.content[k].text;
                    continue;
                }
                if (text_blocks == 2) joined.assign(text);
                joined += m.content[k].text;
                text = joined;
            }
        if (text_blocks == 0 || detail::is_blank_text(text)) return std::nullopt;

        std::string_view prefix, own = text;
        const auto* original = m.metadata.if_contains("original_user_content");
        if (original && original->is_string()) {
            const std::string_view o = original->get_string();
            if (!o.empty() && text.ends_with(o)) {
                prefix = text.substr(0, text.size() - o.size());
                own = text.substr(prefix.size());
            }
        }
        // The new text is written once, prefix first, into the string the block will own.
        std::string result;
        result.append(prefix);
        const bool changed = detail::append_sanitized_user_text(result, own, options.frame);
        if (!changed && text_blocks == 1) return std::nullopt;

        message out = m.copy_without_content();
        out.content.reserve(m.content.size() - text_blocks + 1);
        for (std::size_t k = 0; k < m.content.size(); ++k) {
            if (k == first_text)
                out.content.push_back(text_block(std::move(result)));
            else if (!m.content[k].is_text())
                out.content.push_back(m.content[k]);
        }
        if (!original || !original->is_string()) out.metadata["original_user_content"] = own;
        return out;
    }
};

} // namespace agentware

#endif
