#ifndef AGENTWARE_MODEL_OPENAI_FORMAT_HPP
#define AGENTWARE_MODEL_OPENAI_FORMAT_HPP

// The OpenAI chat-completions wire format: building a request body from a
// chat_request, and turning a response (whole or streamed) into a message.
// No networking here, so the parsing can be tested and fuzzed on its own.

#include <agentware/detail/format.hpp>
#include <agentware/message/json.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/provider_error.hpp>
#include <agentware/model/sse_parser.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// Differences between servers that copy the OpenAI API.
struct openai_wire_options {
    /// Send assistant reasoning back as "reasoning_content" (DeepSeek and
    /// Moonshot want it with tool calls in thinking mode; OpenAI rejects it).
    bool include_reasoning = false;
    /// Write "max_completion_tokens" instead of "max_tokens" (OpenAI's
    /// reasoning models accept only the former).
    bool use_max_completion_tokens = false;
    /// Ask for usage in the last streamed chunk (stream_options.include_usage).
    bool stream_usage = true;
};

namespace detail {

inline std::uint64_t read_count(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) return 0;
    if (const auto* i = v->if_int64()) return *i > 0 ? static_cast<std::uint64_t>(*i) : 0;
    if (const auto* u = v->if_uint64()) return *u;
    return 0;
}

inline token_usage read_openai_usage(const boost::json::value* v) {
    token_usage u;
    if (v == nullptr || !v->is_object()) return u;
    const auto& o = v->get_object();
    u.input_tokens = read_count(o, "prompt_tokens");
    u.output_tokens = read_count(o, "completion_tokens");
    u.total_tokens = read_count(o, "total_tokens");
    if (u.total_tokens == 0) u.total_tokens = u.input_tokens + u.output_tokens;
    return u;
}

/// Records what the provider reported on the answer, usage included, so that
/// token counting can later use the provider's figures for the history up to it.
inline void attach_provider_metadata(model_response& r, std::string_view finish_reason,
                                     std::string_view model) {
    r.ai.provider =
        provider_metadata(finish_reason, model, r.usage.total_tokens != 0 ? r.usage : token_usage{});
}

inline boost::json::object tool_to_openai(const tool_schema& t) {
    boost::json::object function{{"name", t.name}};
    if (!t.description.empty()) function["description"] = t.description;
    function["parameters"] =
        t.parameters.empty() ? boost::json::object{{"type", "object"}, {"properties", boost::json::object{}}}
                             : t.parameters;
    return boost::json::object{{"type", "function"}, {"function", std::move(function)}};
}

} // namespace detail

/// The body of a chat-completions request for `model`.
inline boost::json::object make_openai_request(const chat_request& request, std::string_view model,
                                               bool stream, const openai_wire_options& options = {}) {
    boost::json::object body;
    body["model"] = model;

    boost::json::array messages;
    messages.reserve(request.messages.size() + 1);
    if (!request.system_prompt.empty())
        messages.push_back(boost::json::object{{"role", "system"}, {"content", request.system_prompt.str()}});
    const wire_options wire{options.include_reasoning};
    for (const message& m : request.messages) {
        if (m.is_remove()) continue; // a merge instruction, never part of a conversation
        messages.push_back(to_openai_wire(m, wire));
    }
    body["messages"] = std::move(messages);

    const model_settings& s = request.settings;
    if (!request.tools.empty()) {
        boost::json::array tools;
        tools.reserve(request.tools.size());
        for (const tool_schema& t : request.tools)
            tools.push_back(detail::tool_to_openai(t));
        body["tools"] = std::move(tools);
        // Only meaningful with tools; OpenAI rejects parallel_tool_calls without them.
        if (s.parallel_tool_calls) body["parallel_tool_calls"] = *s.parallel_tool_calls;
    }
    if (!s.tool_choice.empty()) {
        if (s.tool_choice == "auto" || s.tool_choice == "none" || s.tool_choice == "required")
            body["tool_choice"] = s.tool_choice;
        else
            body["tool_choice"] = boost::json::object{
                {"type", "function"}, {"function", boost::json::object{{"name", s.tool_choice}}}};
    }
    if (s.temperature) body["temperature"] = *s.temperature;
    if (s.max_tokens)
        body[options.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = *s.max_tokens;
    if (!s.stop.empty()) {
        boost::json::array stop;
        for (const std::string& x : s.stop)
            stop.push_back(boost::json::string(x));
        body["stop"] = std::move(stop);
    }
    if (!s.reasoning_effort.empty()) body["reasoning_effort"] = s.reasoning_effort;
    if (stream) {
        body["stream"] = true;
        if (options.stream_usage) body["stream_options"] = boost::json::object{{"include_usage", true}};
    }
    for (const auto& [key, value] : s.extra_body)
        body[key] = value;
    return body;
}

/// Reads a chat-completions response object. Throws model_error
/// (invalid_response) for an unexpected shape, or the provider's error when the
/// body is an error object.
inline model_response openai_response_from_json(const boost::json::value& v,
                                                std::string_view provider = "openai") {
    const auto* o = v.if_object();
    if (o == nullptr) throw detail::invalid_response(provider, "the body is not a JSON object");
    if (const auto* e = o->if_contains("error"); e != nullptr && !e->is_null())
        throw detail::stream_error(provider, v, {});
    const auto* choices = o->if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->get_array().empty())
        throw detail::invalid_response(provider, "no \"choices\" in the response");
    const auto* choice = choices->get_array()[0].if_object();
    if (choice == nullptr) throw detail::invalid_response(provider, "choices[0] is not an object");
    const auto* msg = choice->if_contains("message");
    if (msg == nullptr || !msg->is_object())
        throw detail::invalid_response(provider, "choices[0].message is missing");

    model_response r;
    try {
        if (msg->get_object().contains("role")) {
            r.ai = detail::read_message(*msg, "choices[0].message");
        } else { // some local servers omit the role of the answer
            boost::json::object copy = msg->get_object();
            copy["role"] = "assistant";
            r.ai = detail::read_message(copy, "choices[0].message");
        }
    } catch (const message_format_error& e) {
        throw detail::invalid_response(provider, e.what());
    }
    if (!r.ai.is_ai())
        throw detail::invalid_response(provider, "choices[0].message is not an assistant message");
    if (const auto* id = o->if_contains("id"); id != nullptr && id->is_string())
        r.ai.id = std::string(id->get_string());
    std::string_view finish_reason, model;
    if (const auto* fr = choice->if_contains("finish_reason"); fr != nullptr && fr->is_string())
        finish_reason = fr->get_string();
    if (const auto* m = o->if_contains("model"); m != nullptr && m->is_string()) model = m->get_string();
    r.usage = detail::read_openai_usage(o->if_contains("usage"));
    detail::attach_provider_metadata(r, finish_reason, model);
    return r;
}

/// Parses a whole (non-streamed) response body.
inline model_response parse_openai_response(std::string_view body, std::string_view provider = "openai") {
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(body, ec);
    if (ec) throw detail::invalid_response(provider, "the body is not valid JSON: " + ec.message());
    return openai_response_from_json(v, provider);
}

/// Builds one answer from the chunks of a streamed response: text and
/// reasoning deltas are concatenated (and passed to the handler as they come),
/// tool-call deltas are assembled by their index, usage comes from the final
/// chunk. Only choice 0 is read.
class openai_stream_assembler {
public:
    explicit openai_stream_assembler(const stream_handler* handler = nullptr, std::string provider = "openai",
                                     std::string secret = {})
        : handler_(handler), provider_(std::move(provider)), secret_(std::move(secret)) {}

    /// Feeds raw bytes of the event stream.
    void feed(std::string_view bytes) {
        sse_.feed(bytes, [this](const sse_event& e) { on_event(e); });
    }

    /// Handles the data of one event: a JSON chunk or "[DONE]".
    void on_data(std::string_view data) {
        if (done_) return; // nothing after [DONE] counts
        if (data == "[DONE]") {
            done_ = true;
            return;
        }
        boost::json::error_code ec;
        const boost::json::value v = boost::json::parse(data, ec);
        if (ec)
            throw detail::invalid_response(provider_, "a streamed chunk is not valid JSON: " + ec.message());
        on_chunk(v);
    }

    /// Handles one parsed chunk.
    void on_chunk(const boost::json::value& v) {
        const auto* o = v.if_object();
        if (o == nullptr) throw detail::invalid_response(provider_, "a streamed chunk is not a JSON object");
        if (const auto* e = o->if_contains("error"); e != nullptr && !e->is_null())
            throw detail::stream_error(provider_, v, secret_);
        ++chunks_;
        if (id_.empty())
            if (const auto* id = o->if_contains("id"); id != nullptr && id->is_string())
                id_ = std::string(id->get_string());
        if (model_.empty())
            if (const auto* m = o->if_contains("model"); m != nullptr && m->is_string())
                model_ = std::string(m->get_string());
        if (const auto* u = o->if_contains("usage"); u != nullptr && u->is_object())
            usage_ = detail::read_openai_usage(u);

        const auto* choices = o->if_contains("choices");
        if (choices == nullptr || choices->is_null()) return;
        if (!choices->is_array())
            throw detail::invalid_response(provider_, "\"choices\" of a chunk is not an array");
        for (const boost::json::value& c : choices->get_array()) {
            const auto* choice = c.if_object();
            if (choice == nullptr)
                throw detail::invalid_response(provider_, "a chunk's choice is not an object");
            if (const auto* index = choice->if_contains("index"); index != nullptr && index->is_number()) {
                boost::json::error_code ec;
                if (index->to_number<std::int64_t>(ec) != 0 || ec) continue;
            }
            read_choice(*choice);
        }
    }

    /// True once the stream said it is complete ([DONE] or a finish_reason).
    bool complete() const noexcept { return done_ || !finish_reason_.empty(); }
    /// True once [DONE] arrived: nothing more will come.
    bool finished() const noexcept { return done_; }
    /// True once any text or reasoning delta went to the handler (a retry would repeat it).
    bool delivered() const noexcept { return delivered_; }

    /// The assembled answer. Throws model_error (invalid_response) when the
    /// stream ended before it was complete or assembled into no valid message.
    model_response finish() {
        if (!complete()) {
            if (chunks_ == 0) throw detail::invalid_response(provider_, "the stream ended before any chunk");
            throw detail::invalid_response(provider_, "the stream ended before its final chunk (truncated)");
        }
        model_response r;
        message& m = r.ai;
        m.type = role::ai;
        m.id = id_;
        if (!text_.empty()) m.content.push_back(text_block(std::move(text_)));
        m.set_reasoning(std::move(reasoning_));
        std::size_t position = 0;
        for (auto& [index, call] : calls_) {
            boost::json::object function{{"arguments", std::move(call.arguments)}};
            if (call.has_name) function["name"] = call.name;
            boost::json::object wire{{"id", call.id}, {"function", std::move(function)}};
            try {
                detail::read_tool_call(
                    wire, detail::json_place{"stream", detail::format("tool_calls[{}]", position)}, m);
            } catch (const message_format_error& e) {
                throw detail::invalid_response(provider_, e.what());
            }
            ++position;
        }
        r.usage = usage_;
        detail::attach_provider_metadata(r, finish_reason_, model_);
        return r;
    }

    /// Whether bytes of an unfinished event are still buffered.
    bool has_pending_bytes() const noexcept { return sse_.has_pending(); }

private:
    struct partial_call {
        std::string id;
        std::string name;
        std::string arguments;
        bool has_name = false;
    };

    void on_event(const sse_event& e) {
        // OpenRouter and others send errors as a named event; anything else is data.
        if (e.type == "error") {
            boost::json::error_code ec;
            const boost::json::value v = boost::json::parse(e.data, ec);
            if (ec)
                throw model_error(model_error_kind::server,
                                  provider_ + ": error in stream: " + detail::excerpt(e.data, 300));
            throw detail::stream_error(provider_, v, secret_);
        }
        on_data(e.data);
    }

    std::string_view read_text(const boost::json::object& o, std::string_view key) const {
        const auto* v = o.if_contains(key);
        if (v == nullptr || v->is_null()) return {};
        if (!v->is_string())
            throw detail::invalid_response(provider_, detail::format("delta.{} is not a string", key));
        return v->get_string();
    }

    void read_choice(const boost::json::object& choice) {
        if (const auto* fr = choice.if_contains("finish_reason");
            fr != nullptr && fr->is_string() && !fr->get_string().empty())
            finish_reason_ = std::string(fr->get_string());
        const auto* d = choice.if_contains("delta");
        if (d == nullptr || d->is_null()) return;
        const auto* delta = d->if_object();
        if (delta == nullptr) throw detail::invalid_response(provider_, "a chunk's delta is not an object");

        if (const std::string_view text = read_text(*delta, "content"); !text.empty()) {
            text_.append(text);
            delivered_ = true;
            if (handler_ && handler_->on_text) handler_->on_text(text);
        }
        std::string_view reasoning = read_text(*delta, "reasoning_content");
        if (reasoning.empty()) {
            if (const auto* r = delta->if_contains("reasoning"); r != nullptr && r->is_string())
                reasoning = r->get_string();
        }
        if (!reasoning.empty()) {
            reasoning_.append(reasoning);
            delivered_ = true;
            if (handler_ && handler_->on_reasoning) handler_->on_reasoning(reasoning);
        }
        if (const auto* calls = delta->if_contains("tool_calls"); calls != nullptr && !calls->is_null()) {
            if (!calls->is_array())
                throw detail::invalid_response(provider_, "delta.tool_calls is not an array");
            for (const boost::json::value& c : calls->get_array())
                read_call_delta(c);
        }
    }

    void read_call_delta(const boost::json::value& c) {
        const auto* call = c.if_object();
        if (call == nullptr) throw detail::invalid_response(provider_, "a tool-call delta is not an object");
        const std::string_view id = read_text(*call, "id");
        std::int64_t index = -1;
        if (const auto* i = call->if_contains("index"); i != nullptr && !i->is_null()) {
            boost::json::error_code ec;
            index = i->to_number<std::int64_t>(ec);
            if (ec || index < 0)
                throw detail::invalid_response(provider_, "a tool-call delta has an invalid index");
        } else {
            // Servers that omit the index: a new id starts a new call, otherwise the last call continues.
            if (calls_.empty())
                index = 0;
            else {
                index = calls_.rbegin()->first;
                if (!id.empty() && !calls_.rbegin()->second.id.empty() && calls_.rbegin()->second.id != id)
                    ++index;
            }
        }
        if (calls_.size() >= max_calls && !calls_.contains(index))
            throw detail::invalid_response(provider_, "too many tool calls in one answer");
        partial_call& p = calls_[index];
        if (!id.empty()) p.id = std::string(id);
        const auto* f = call->if_contains("function");
        if (f == nullptr || f->is_null()) return;
        const auto* fn = f->if_object();
        if (fn == nullptr)
            throw detail::invalid_response(provider_, "a tool-call delta's function is not an object");
        if (const std::string_view name = read_text(*fn, "name"); !name.empty()) {
            // Names come whole in practice; a server that splits them still concatenates correctly.
            if (p.name != name) p.name.append(name);
            p.has_name = true;
        }
        if (const auto* a = fn->if_contains("arguments"); a != nullptr && !a->is_null()) {
            if (a->is_string())
                p.arguments.append(a->get_string());
            else if (a->is_object())
                p.arguments.append(boost::json::serialize(*a)); // some local servers
            else
                throw detail::invalid_response(provider_, "a tool-call delta's arguments are not a string");
        }
    }

    static constexpr std::size_t max_calls = 1024;

    const stream_handler* handler_;
    std::string provider_;
    std::string secret_;
    sse_parser sse_;
    std::string id_, model_, text_, reasoning_, finish_reason_;
    std::map<std::int64_t, partial_call> calls_;
    token_usage usage_;
    std::size_t chunks_ = 0;
    bool done_ = false;
    bool delivered_ = false;
};

} // namespace agentware

#endif
