#ifndef AGENTWARE_MODEL_ANTHROPIC_FORMAT_HPP
#define AGENTWARE_MODEL_ANTHROPIC_FORMAT_HPP

// The Anthropic Messages API wire format: request bodies from a chat_request,
// and responses (whole or as a stream of events) back into a message. No
// networking here, so the parsing can be tested and fuzzed on its own.

#include <agentware/detail/format.hpp>
#include <agentware/message/json.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/provider_error.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/model/sse_parser.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// Choices the Messages API needs that chat_request leaves open.
struct anthropic_wire_options {
    /// max_tokens is required by the API; this is used when the request has none.
    std::int64_t default_max_tokens = 4096;
    /// Thinking budget when settings.thinking is on (the API's minimum is 1024).
    std::int64_t thinking_budget_tokens = 4096;
};

/// Where the signature of an answer's thinking is kept in message metadata:
/// the API wants it back unchanged when the thinking is sent again.
inline constexpr std::string_view anthropic_signature_key = "thinking_signature";

namespace detail {

/// An image block in Anthropic's form: inline base64 from a data URL, or a URL source.
inline boost::json::object anthropic_image(const content_block& b) {
    const std::string_view url = b.image_url;
    if (url.starts_with("data:")) {
        const std::size_t semi = url.find(';');
        const std::size_t comma = url.find(',');
        if (semi != std::string_view::npos && comma != std::string_view::npos && semi < comma) {
            return boost::json::object{{"type", "image"},
                                       {"source", boost::json::object{{"type", "base64"},
                                                                      {"media_type", url.substr(5, semi - 5)},
                                                                      {"data", url.substr(comma + 1)}}}};
        }
    }
    return boost::json::object{{"type", "image"},
                               {"source", boost::json::object{{"type", "url"}, {"url", url}}}};
}

inline void append_content(boost::json::array& out, const std::vector<content_block>& content) {
    for (const content_block& b : content) {
        if (b.is_image())
            out.push_back(anthropic_image(b));
        else if (!b.text.empty())
            out.push_back(boost::json::object{{"type", "text"}, {"text", b.text}}); // empty text is rejected
    }
}

inline boost::json::array anthropic_blocks(const message& m) {
    boost::json::array blocks;
    if (m.is_ai()) {
        // Thinking goes back only with its signature; without one the API refuses it.
        if (const auto* sig = m.metadata.if_contains(anthropic_signature_key);
            !m.reasoning().empty() && sig != nullptr && sig->is_string())
            blocks.push_back(
                boost::json::object{{"type", "thinking"}, {"thinking", m.reasoning()}, {"signature", *sig}});
        append_content(blocks, m.content);
        for (const tool_call& c : m.tool_calls)
            blocks.push_back(
                boost::json::object{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.args}});
    } else if (m.is_tool()) {
        boost::json::object result{{"type", "tool_result"}, {"tool_use_id", m.tool_call_id()}};
        if (m.has_images()) {
            boost::json::array inner;
            append_content(inner, m.content);
            result["content"] = std::move(inner);
        } else {
            result["content"] = m.text();
        }
        if (m.is_error()) result["is_error"] = true;
        blocks.push_back(std::move(result));
    } else {
        append_content(blocks, m.content);
    }
    return blocks;
}

inline token_usage read_anthropic_usage(const boost::json::value* v, token_usage u = {}) {
    if (v == nullptr || !v->is_object()) return u;
    const auto& o = v->get_object();
    // Cached prompt tokens are billed apart but are still prompt tokens.
    if (o.contains("input_tokens"))
        u.input_tokens = read_count(o, "input_tokens") + read_count(o, "cache_creation_input_tokens") +
                         read_count(o, "cache_read_input_tokens");
    if (o.contains("output_tokens")) u.output_tokens = read_count(o, "output_tokens");
    u.total_tokens = u.input_tokens + u.output_tokens;
    return u;
}

inline boost::json::object anthropic_tool_choice(const model_settings& s) {
    boost::json::object choice;
    if (s.tool_choice.empty() || s.tool_choice == "auto")
        choice["type"] = "auto";
    else if (s.tool_choice == "required")
        choice["type"] = "any";
    else if (s.tool_choice == "none")
        choice["type"] = "none";
    else {
        choice["type"] = "tool";
        choice["name"] = s.tool_choice;
    }
    if (s.parallel_tool_calls && !*s.parallel_tool_calls) choice["disable_parallel_tool_use"] = true;
    return choice;
}

} // namespace detail

namespace detail {

/// Puts `cache_control` on the last block of the last message (the system
/// prompt when there is no message), where Anthropic caches everything before
/// it: tools, system prompt and history.
inline void anthropic_cache_breakpoint(boost::json::object& body, const boost::json::object& cache_control) {
    if (auto* msgs = body.if_contains("messages"); msgs && msgs->is_array() && !msgs->as_array().empty()) {
        auto& content = msgs->as_array().back().as_object()["content"];
        if (content.is_array() && !content.as_array().empty()) {
            content.as_array().back().as_object()["cache_control"] = cache_control;
            return;
        }
    }
    if (auto* system = body.if_contains("system"); system && system->is_string())
        *system = boost::json::array{boost::json::object{
            {"type", "text"}, {"text", system->as_string()}, {"cache_control", cache_control}}};
}

} // namespace detail

/// The body of a Messages API request for `model`. System messages in the
/// history join the system prompt (the API has no system role); consecutive
/// messages of one role are merged into one turn, with tool results as
/// tool_result blocks of a user turn.
inline boost::json::object make_anthropic_request(const chat_request& request, std::string_view model,
                                                  bool stream, const anthropic_wire_options& options = {}) {
    boost::json::object body;
    body["model"] = model;
    const model_settings& s = request.settings;

    std::string system = request.system_prompt;
    boost::json::array messages;
    std::string_view last_role;
    for (const message& m : request.messages) {
        if (m.is_remove()) continue;
        if (m.is_system()) {
            if (!system.empty()) system += "\n\n";
            system += m.text();
            continue;
        }
        boost::json::array blocks = detail::anthropic_blocks(m);
        if (blocks.empty()) continue;
        const std::string_view r = m.is_ai() ? "assistant" : "user";
        if (r == last_role) {
            auto& prev = messages.back().as_object()["content"].as_array();
            for (auto& b : blocks)
                prev.push_back(std::move(b));
        } else {
            messages.push_back(boost::json::object{{"role", r}, {"content", std::move(blocks)}});
            last_role = r;
        }
    }
    std::int64_t max_tokens = s.max_tokens.value_or(options.default_max_tokens);
    if (s.thinking) {
        const std::int64_t budget = std::max<std::int64_t>(options.thinking_budget_tokens, 1024);
        max_tokens = std::max(max_tokens, budget + 1024); // the budget must stay below max_tokens
        body["thinking"] = boost::json::object{{"type", "enabled"}, {"budget_tokens", budget}};
    }
    body["max_tokens"] = max_tokens;
    if (!system.empty()) body["system"] = system;
    body["messages"] = std::move(messages);

    if (!request.tools.empty()) {
        boost::json::array tools;
        for (const tool_schema& t : request.tools) {
            boost::json::object tool{{"name", t.name}};
            if (!t.description.empty()) tool["description"] = t.description;
            tool["input_schema"] =
                t.parameters.empty()
                    ? boost::json::object{{"type", "object"}, {"properties", boost::json::object{}}}
                    : t.parameters;
            tools.push_back(std::move(tool));
        }
        body["tools"] = std::move(tools);
        if (!s.tool_choice.empty() || s.parallel_tool_calls)
            body["tool_choice"] = detail::anthropic_tool_choice(s);
    }
    if (s.temperature) body["temperature"] = *s.temperature;
    if (!s.stop.empty()) {
        boost::json::array stop;
        for (const std::string& x : s.stop)
            stop.push_back(boost::json::string(x));
        body["stop_sequences"] = std::move(stop);
    }
    if (stream) body["stream"] = true;
    for (const auto& [key, value] : s.extra_body) {
        if (key == "cache_control" && value.is_object()) { // a cache breakpoint (prompt_caching)
            detail::anthropic_cache_breakpoint(body, value.as_object());
            continue;
        }
        body[key] = value;
    }
    return body;
}

namespace detail {

/// Adds one tool_use block to m, as a tool call or, with unusable input, an invalid one.
inline void add_tool_use(message& m, std::string id, std::string name, const boost::json::value* input) {
    boost::json::object wire{{"id", std::move(id)},
                             {"function", boost::json::object{{"name", std::move(name)}}}};
    if (input != nullptr) wire["function"].as_object()["arguments"] = *input;
    read_tool_call(wire, json_place{"content", "tool_use"}, m);
}

} // namespace detail

/// Reads a Messages API response object.
inline model_response anthropic_response_from_json(const boost::json::value& v,
                                                   std::string_view provider = "anthropic") {
    const auto* o = v.if_object();
    if (o == nullptr) throw detail::invalid_response(provider, "the body is not a JSON object");
    if (const auto* t = o->if_contains("type"); t != nullptr && t->is_string() && t->get_string() == "error")
        throw detail::stream_error(provider, v, {});
    const auto* content = o->if_contains("content");
    if (content == nullptr || !content->is_array())
        throw detail::invalid_response(provider, "no \"content\" array");

    model_response r;
    message& m = r.ai;
    m.type = role::ai;
    std::string reasoning;
    try {
        for (const boost::json::value& b : content->get_array()) {
            const auto* block = b.if_object();
            if (block == nullptr)
                throw detail::invalid_response(provider, "a content block is not an object");
            const std::string type = detail::read_string(*block, "type", {"content", {}});
            if (type == "text") {
                std::string text = detail::read_string(*block, "text", {"content", "text"});
                if (!text.empty()) m.content.push_back(text_block(std::move(text)));
            } else if (type == "thinking") {
                reasoning += detail::read_string(*block, "thinking", {"content", "thinking"});
                if (const auto* sig = block->if_contains("signature"); sig != nullptr && sig->is_string())
                    m.metadata[anthropic_signature_key] = *sig;
            } else if (type == "tool_use") {
                detail::add_tool_use(m, detail::read_string(*block, "id", {"content", "tool_use"}),
                                     detail::read_string(*block, "name", {"content", "tool_use"}),
                                     block->if_contains("input"));
            }
            // redacted_thinking, server tool blocks and future types carry nothing this message type holds.
        }
    } catch (const message_format_error& e) {
        throw detail::invalid_response(provider, e.what());
    }
    m.set_reasoning(reasoning);
    if (const auto* id = o->if_contains("id"); id != nullptr && id->is_string())
        m.id = std::string(id->get_string());
    std::string_view stop_reason, model;
    if (const auto* sr = o->if_contains("stop_reason"); sr != nullptr && sr->is_string())
        stop_reason = sr->get_string();
    if (const auto* mo = o->if_contains("model"); mo != nullptr && mo->is_string()) model = mo->get_string();
    r.usage = detail::read_anthropic_usage(o->if_contains("usage"));
    detail::attach_provider_metadata(r, stop_reason, model);
    return r;
}

inline model_response parse_anthropic_response(std::string_view body,
                                               std::string_view provider = "anthropic") {
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(body, ec);
    if (ec) throw detail::invalid_response(provider, "the body is not valid JSON: " + ec.message());
    return anthropic_response_from_json(v, provider);
}

/// Builds one answer from a Messages API event stream (message_start,
/// content_block_start/delta/stop, message_delta, message_stop). Complete only
/// after message_stop.
class anthropic_stream_assembler {
public:
    explicit anthropic_stream_assembler(const stream_handler* handler = nullptr,
                                        std::string provider = "anthropic", std::string secret = {})
        : handler_(handler), provider_(std::move(provider)), secret_(std::move(secret)) {}

    void feed(std::string_view bytes) {
        sse_.feed(bytes, [this](const sse_event& e) { on_data(e.data); });
    }

    /// Handles the data of one event (its "type" field names the event, so the
    /// `event:` line is not needed).
    void on_data(std::string_view data) {
        if (done_) return;
        boost::json::error_code ec;
        const boost::json::value v = boost::json::parse(data, ec);
        if (ec)
            throw detail::invalid_response(provider_, "a stream event is not valid JSON: " + ec.message());
        const auto* o = v.if_object();
        if (o == nullptr) throw detail::invalid_response(provider_, "a stream event is not a JSON object");
        const auto* t = o->if_contains("type");
        if (t == nullptr || !t->is_string())
            throw detail::invalid_response(provider_, "a stream event has no type");
        const std::string_view type = t->get_string();
        ++events_;
        if (type == "message_start") {
            const auto* msg = o->if_contains("message");
            if (msg == nullptr || !msg->is_object())
                throw detail::invalid_response(provider_, "message_start without message");
            const auto& mo = msg->get_object();
            if (const auto* id = mo.if_contains("id"); id != nullptr && id->is_string())
                id_ = std::string(id->get_string());
            if (const auto* m = mo.if_contains("model"); m != nullptr && m->is_string())
                model_ = std::string(m->get_string());
            usage_ = detail::read_anthropic_usage(mo.if_contains("usage"), usage_);
        } else if (type == "content_block_start") {
            block& b = block_at(*o);
            const auto* cb = o->if_contains("content_block");
            if (cb == nullptr || !cb->is_object())
                throw detail::invalid_response(provider_, "content_block_start without block");
            const auto& c = cb->get_object();
            b.type = text_of(c, "type");
            if (b.type == "text")
                b.text = text_of(c, "text");
            else if (b.type == "thinking")
                b.text = text_of(c, "thinking");
            else if (b.type == "tool_use") {
                b.id = text_of(c, "id");
                b.name = text_of(c, "name");
                // The start block carries "input": {} and the real input follows as JSON deltas.
                if (const auto* in = c.if_contains("input");
                    in != nullptr && in->is_object() && !in->get_object().empty())
                    b.json = boost::json::serialize(*in);
            }
            if (!b.text.empty()) deliver(b.type, b.text);
        } else if (type == "content_block_delta") {
            block& b = block_at(*o);
            const auto* d = o->if_contains("delta");
            if (d == nullptr || !d->is_object())
                throw detail::invalid_response(provider_, "content_block_delta without delta");
            const auto& delta = d->get_object();
            const std::string dt = text_of(delta, "type");
            if (dt == "text_delta") {
                const std::string piece = text_of(delta, "text");
                b.text += piece;
                deliver("text", piece);
            } else if (dt == "thinking_delta") {
                const std::string piece = text_of(delta, "thinking");
                b.text += piece;
                deliver("thinking", piece);
            } else if (dt == "signature_delta") {
                b.signature += text_of(delta, "signature");
            } else if (dt == "input_json_delta") {
                b.json += text_of(delta, "partial_json");
            }
        } else if (type == "message_delta") {
            if (const auto* d = o->if_contains("delta"); d != nullptr && d->is_object())
                if (const auto* sr = d->get_object().if_contains("stop_reason");
                    sr != nullptr && sr->is_string())
                    stop_reason_ = std::string(sr->get_string());
            usage_ = detail::read_anthropic_usage(o->if_contains("usage"), usage_);
        } else if (type == "message_stop") {
            done_ = true;
        } else if (type == "error") {
            throw detail::stream_error(provider_, v, secret_);
        }
        // ping, content_block_stop and unknown events change nothing.
    }

    bool complete() const noexcept { return done_; }
    /// True once message_stop arrived: nothing more will come.
    bool finished() const noexcept { return done_; }
    bool delivered() const noexcept { return delivered_; }

    model_response finish() {
        if (!done_) {
            if (events_ == 0) throw detail::invalid_response(provider_, "the stream ended before any event");
            throw detail::invalid_response(provider_, "the stream ended before message_stop (truncated)");
        }
        model_response r;
        message& m = r.ai;
        m.type = role::ai;
        m.id = id_;
        std::string reasoning;
        try {
            for (auto& [index, b] : blocks_) {
                if (b.type == "text") {
                    if (!b.text.empty()) m.content.push_back(text_block(std::move(b.text)));
                } else if (b.type == "thinking") {
                    reasoning += b.text;
                    if (!b.signature.empty()) m.metadata[anthropic_signature_key] = b.signature;
                } else if (b.type == "tool_use") {
                    const boost::json::value input = boost::json::string(b.json);
                    detail::add_tool_use(m, std::move(b.id), std::move(b.name), &input);
                }
            }
        } catch (const message_format_error& e) {
            throw detail::invalid_response(provider_, e.what());
        }
        m.set_reasoning(reasoning);
        r.usage = usage_;
        detail::attach_provider_metadata(r, stop_reason_, model_);
        return r;
    }

private:
    struct block {
        std::string type, text, id, name, json, signature;
    };

    std::string text_of(const boost::json::object& o, std::string_view key) const {
        const auto* v = o.if_contains(key);
        if (v == nullptr || v->is_null()) return {};
        if (!v->is_string())
            throw detail::invalid_response(provider_, detail::format("\"{}\" is not a string", key));
        return std::string(v->get_string());
    }

    block& block_at(const boost::json::object& o) {
        const auto* i = o.if_contains("index");
        boost::json::error_code ec;
        const std::int64_t index = i == nullptr ? -1 : i->to_number<std::int64_t>(ec);
        if (i == nullptr || ec || index < 0)
            throw detail::invalid_response(provider_, "a block event has no valid index");
        if (blocks_.size() >= 1024 && !blocks_.contains(index))
            throw detail::invalid_response(provider_, "too many content blocks in one answer");
        return blocks_[index];
    }

    void deliver(std::string_view type, std::string_view piece) {
        if (piece.empty()) return;
        delivered_ = true;
        if (handler_ == nullptr) return;
        if (type == "text" && handler_->on_text)
            handler_->on_text(piece);
        else if (type == "thinking" && handler_->on_reasoning)
            handler_->on_reasoning(piece);
    }

    const stream_handler* handler_;
    std::string provider_;
    std::string secret_;
    sse_parser sse_;
    std::map<std::int64_t, block> blocks_;
    std::string id_, model_, stop_reason_;
    token_usage usage_;
    std::size_t events_ = 0;
    bool done_ = false;
    bool delivered_ = false;
};

} // namespace agentware

#endif
