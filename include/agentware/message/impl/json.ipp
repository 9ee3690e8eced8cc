#ifndef AGENTWARE_MESSAGE_IMPL_JSON_IPP
#define AGENTWARE_MESSAGE_IMPL_JSON_IPP

#include <agentware/message/json.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {
namespace detail {

std::string_view json_kind_name(const boost::json::value& v) noexcept {
    switch (v.kind()) {
    case boost::json::kind::null:
        return "null";
    case boost::json::kind::bool_:
        return "bool";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
        return "number";
    case boost::json::kind::string:
        return "string";
    case boost::json::kind::array:
        return "array";
    case boost::json::kind::object:
        return "object";
    }
    return "value";
}

std::string describe_json(const boost::json::value& v) {
    if (const auto* s = v.if_string()) return quoted_excerpt(*s, 40);
    return std::string(json_kind_name(v));
}

const boost::json::object& expect_object(const boost::json::value& v, const json_place& at) {
    if (const auto* o = v.if_object()) return *o;
    at.fail_here(detail::format("must be a JSON object (got {})", describe_json(v)));
}

std::string read_string(const boost::json::object& o, std::string_view key, const json_place& at) {
    const boost::json::value* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return {};
    if (const auto* s = v->if_string()) return std::string(*s);
    at.fail(key, detail::format("must be a string (got {})", describe_json(*v)));
}

std::string read_required_string(const boost::json::object& o, std::string_view key, const json_place& at) {
    const boost::json::value* v = o.if_contains(key);
    if (v == nullptr) at.fail(key, "is missing");
    if (const auto* s = v->if_string()) return std::string(*s);
    at.fail(key, detail::format("must be a string (got {})", describe_json(*v)));
}

std::string_view role_wire_name(role r) noexcept {
    switch (r) {
    case role::system:
        return "system";
    case role::human:
        return "user";
    case role::ai:
        return "assistant";
    case role::tool:
        return "tool";
    case role::remove:
        return "remove";
    }
    return "user";
}

role read_role(const boost::json::value& v, const json_place& at, std::string_view key) {
    constexpr std::string_view expected = "must be one of system, user, assistant, tool";
    const auto* s = v.if_string();
    if (s == nullptr) at.fail(key, detail::format("{} (got {})", expected, describe_json(v)));
    const std::string_view name = *s;
    if (name == "system" || name == "developer") return role::system;
    if (name == "user") return role::human;
    if (name == "assistant") return role::ai;
    if (name == "tool") return role::tool;
    if (name == "remove") return role::remove;
    at.fail(key, detail::format("{} (got {})", expected, describe_json(v)));
}

tool_status read_status(const boost::json::value& v, const json_place& at, std::string_view key) {
    if (const auto* s = v.if_string()) {
        // "success" is LangChain's spelling of ok.
        if (*s == "ok" || *s == "success") return tool_status::ok;
        if (*s == "error") return tool_status::error;
    }
    at.fail(key, detail::format("must be \"ok\" or \"error\" (got {})", describe_json(v)));
}

content_block read_content_part(const boost::json::value& v, const json_place& at) {
    if (const auto* s = v.if_string()) return text_block(std::string(*s));
    const boost::json::object& part = expect_object(v, at);
    const std::string type = read_required_string(part, "type", at);
    if (type == "text") return text_block(read_required_string(part, "text", at));
    if (type == "image_url") {
        const boost::json::value* image = part.if_contains("image_url");
        if (image == nullptr) at.fail("image_url", "is missing");
        if (const auto* url = image->if_string()) return image_block(std::string(*url)); // older shorthand
        const json_place image_at = at.member("image_url");
        const boost::json::object& image_obj = expect_object(*image, image_at);
        return image_block(read_required_string(image_obj, "url", image_at),
                           read_string(image_obj, "detail", image_at));
    }
    at.fail("type",
            detail::format("must be \"text\" or \"image_url\" (got {})", describe_json(part.at("type"))));
}

std::vector<content_block> read_content(const boost::json::object& o, const json_place& at) {
    std::vector<content_block> blocks;
    const boost::json::value* v = o.if_contains("content");
    if (v == nullptr || v->is_null()) return blocks;
    if (const auto* s = v->if_string()) {
        if (!s->empty()) blocks.push_back(text_block(std::string(*s)));
        return blocks;
    }
    const auto* parts = v->if_array();
    if (parts == nullptr)
        at.fail("content", detail::format("must be a string, an array or null (got {})", describe_json(*v)));
    blocks.reserve(parts->size());
    for (std::size_t i = 0; i < parts->size(); ++i)
        blocks.push_back(read_content_part((*parts)[i], at.element("content", i)));
    return blocks;
}

bool is_blank(std::string_view text) noexcept {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

parsed_arguments read_arguments(const boost::json::value* v) {
    parsed_arguments out;
    if (v == nullptr || v->is_null()) return out;
    if (const auto* o = v->if_object()) {
        out.args = *o;
        return out;
    }
    if (!v->is_string()) {
        out.raw = boost::json::serialize(*v);
        out.error = detail::format("arguments must be a JSON object (got {})", json_kind_name(*v));
        return out;
    }
    const std::string_view text = v->get_string();
    if (is_blank(text)) return out;

    boost::json::error_code ec;
    boost::json::value parsed = boost::json::parse(text, ec);
    if (ec) {
        out.raw = std::string(text);
        out.error = detail::format("arguments are not valid JSON: {}", ec.message());
        return out;
    }
    if (const auto* inner = parsed.if_string()) {
        boost::json::error_code inner_ec;
        boost::json::value unwrapped = boost::json::parse(*inner, inner_ec);
        if (!inner_ec && unwrapped.is_object()) parsed = std::move(unwrapped);
    }
    if (parsed.is_null()) return out;
    if (auto* o = parsed.if_object()) {
        out.args = std::move(*o);
        return out;
    }
    out.raw = std::string(text);
    out.error = detail::format("arguments must be a JSON object (got {})", json_kind_name(parsed));
    return out;
}

void read_tool_call(const boost::json::value& v, const json_place& at, message& m) {
    const boost::json::object& call = expect_object(v, at);
    if (const boost::json::value* type = call.if_contains("type"); type != nullptr && !type->is_null()) {
        const auto* s = type->if_string();
        if (s == nullptr || *s != "function")
            at.fail("type", detail::format("must be \"function\" (got {})", describe_json(*type)));
    }
    std::string id = read_string(call, "id", at);

    const boost::json::value* function = call.if_contains("function");
    if (function == nullptr) at.fail("function", "is missing");
    const json_place function_at = at.member("function");
    const boost::json::object& fn = expect_object(*function, function_at);
    std::string name = read_required_string(fn, "name", function_at);

    parsed_arguments arguments = read_arguments(fn.if_contains("arguments"));
    if (arguments.error.empty())
        m.tool_calls.push_back(tool_call{std::move(id), std::move(name), std::move(arguments.args)});
    else
        m.edit_invalid_tool_calls().push_back(invalid_tool_call{
            std::move(id), std::move(name), std::move(arguments.raw), std::move(arguments.error)});
}

invalid_tool_call read_invalid_tool_call(const boost::json::value& v, const json_place& at) {
    const boost::json::object& o = expect_object(v, at);
    return invalid_tool_call{read_string(o, "id", at), read_string(o, "name", at),
                             read_string(o, "raw_args", at), read_string(o, "error", at)};
}

template <class F>
void for_each_element(const boost::json::object& o, std::string_view key, const json_place& at, F&& read) {
    const boost::json::value* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return;
    const auto* items = v->if_array();
    if (items == nullptr) at.fail(key, detail::format("must be an array (got {})", describe_json(*v)));
    for (std::size_t i = 0; i < items->size(); ++i)
        read((*items)[i], at.element(key, i));
}

std::array<std::pair<std::string_view, std::uint64_t*>, 3> usage_counts(token_usage& u) noexcept {
    return {{{"input_tokens", &u.input_tokens},
             {"output_tokens", &u.output_tokens},
             {"total_tokens", &u.total_tokens}}};
}

std::optional<token_usage> read_exact_usage(const boost::json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr || o->size() != 3) return std::nullopt;
    token_usage u;
    for (auto [key, count] : usage_counts(u)) {
        const auto* n = o->if_contains(key);
        if (n == nullptr) return std::nullopt;
        if (const auto* i = n->if_int64(); i != nullptr && *i >= 0)
            *count = static_cast<std::uint64_t>(*i);
        else if (const auto* x = n->if_uint64())
            *count = *x;
        else
            return std::nullopt;
    }
    if (u.empty()) return std::nullopt;
    return u;
}

boost::json::object usage_to_json(const token_usage& u) {
    return boost::json::object{{"input_tokens", u.input_tokens},
                               {"output_tokens", u.output_tokens},
                               {"total_tokens", u.total_tokens}};
}

void read_metadata(const boost::json::object& in, message& m) {
    std::string_view finish_reason, model;
    token_usage usage;
    for (const boost::json::key_value_pair& entry : in) {
        const std::string_view key = entry.key();
        const boost::json::value& value = entry.value();
        const auto* text = value.if_string();
        if (key == "finish_reason" && text != nullptr && !text->empty()) {
            finish_reason = *text;
        } else if (key == "model" && text != nullptr && !text->empty()) {
            model = *text;
        } else if (const auto exact = key == "usage" ? read_exact_usage(value) : std::nullopt) {
            usage = *exact;
        } else {
            m.metadata.emplace(key, value);
        }
    }
    m.provider = provider_metadata(finish_reason, model, usage);
}

void write_provider_metadata(const provider_metadata& p, boost::json::object& out) {
    if (!p.finish_reason().empty()) out["finish_reason"] = p.finish_reason();
    if (!p.model().empty()) out["model"] = p.model();
    if (const token_usage usage = p.usage(); !usage.empty()) out["usage"] = usage_to_json(usage);
}

boost::json::object metadata_to_json(const message& m) {
    if (m.provider.empty()) return m.metadata;
    boost::json::object out;
    out.reserve(m.metadata.size() + 3);
    write_provider_metadata(m.provider, out);
    for (const boost::json::key_value_pair& entry : m.metadata)
        out.emplace(entry.key(), entry.value());
    return out;
}

message read_message_fields(const boost::json::object& o, const json_place& at) {
    message m;
    const boost::json::value* role_value = o.if_contains("role");
    if (role_value == nullptr) at.fail("role", "is missing");
    m.type = read_role(*role_value, at, "role");
    m.id = read_string(o, "id", at);
    m.name = read_string(o, "name", at);
    m.content = read_content(o, at);

    m.set_reasoning(read_string(o, "reasoning_content", at));
    if (m.reasoning().empty()) {
        // Only a fallback, and not our field: a non-string "reasoning" is ignored.
        if (const auto* r = o.if_contains("reasoning"); r != nullptr && r->is_string())
            m.set_reasoning(std::string(r->get_string()));
    }

    for_each_element(o, "tool_calls", at, [&](const boost::json::value& call, const json_place& call_at) {
        read_tool_call(call, call_at, m);
    });
    for_each_element(o, "invalid_tool_calls", at,
                     [&](const boost::json::value& call, const json_place& call_at) {
                         m.edit_invalid_tool_calls().push_back(read_invalid_tool_call(call, call_at));
                     });

    // A tool message without tool_call_id answers no call that can be named;
    // it is kept, and dangling_tool_call leaves it out of requests as an orphan.
    m.set_tool_call_id(read_string(o, "tool_call_id", at));

    if (const auto* status = o.if_contains("status"); status != nullptr && !status->is_null())
        m.status = read_status(*status, at, "status");
    return m;
}

message read_message(const boost::json::value& v, std::string_view owner) {
    const json_place at{owner, {}};
    const boost::json::object& o = expect_object(v, at);
    message m = read_message_fields(o, at);

    if (const auto* metadata = o.if_contains("metadata"); metadata != nullptr && !metadata->is_null()) {
        const auto* object = metadata->if_object();
        if (object == nullptr)
            at.fail("metadata", detail::format("must be an object (got {})", describe_json(*metadata)));
        read_metadata(*object, m);
    }
    if (const auto* refusal = o.if_contains("refusal"); refusal != nullptr && refusal->is_string() &&
                                                        !refusal->get_string().empty() &&
                                                        !m.metadata.contains("refusal"))
        m.metadata["refusal"] = *refusal;
    return m;
}

boost::json::object content_part_to_json(const content_block& block) {
    boost::json::object part;
    if (block.is_text()) {
        part["type"] = "text";
        part["text"] = block.text;
    } else {
        boost::json::object image;
        image["url"] = block.image_url;
        if (!block.detail.empty()) image["detail"] = block.detail;
        part["type"] = "image_url";
        part["image_url"] = std::move(image);
    }
    return part;
}

boost::json::value content_to_json(const std::vector<content_block>& content, bool null_when_empty) {
    if (content.empty()) {
        if (null_when_empty) return nullptr;
        return boost::json::string();
    }
    if (content.size() == 1 && content.front().is_text() && !content.front().text.empty())
        return boost::json::string(content.front().text);
    boost::json::array parts;
    parts.reserve(content.size());
    for (const content_block& block : content)
        parts.push_back(content_part_to_json(block));
    return parts;
}

boost::json::object tool_call_to_json(const tool_call& call) {
    boost::json::object function;
    function["name"] = call.name;
    function["arguments"] = boost::json::serialize(call.args);
    boost::json::object out;
    out["id"] = call.id;
    out["type"] = "function";
    out["function"] = std::move(function);
    return out;
}

boost::json::object invalid_tool_call_to_json(const invalid_tool_call& call) {
    boost::json::object out;
    out["id"] = call.id;
    out["name"] = call.name;
    out["raw_args"] = call.raw_args;
    out["error"] = call.error;
    return out;
}

boost::json::object message_to_json(const message& m, json_form form, const wire_options& options) {
    const bool wire = form == json_form::wire;
    if (wire && m.is_remove())
        throw std::invalid_argument(
            "to_openai_wire: a remove marker is an instruction to add_messages, not a message");

    boost::json::object o;
    o["role"] = role_wire_name(m.type);
    if (!wire && !m.id.empty()) o["id"] = m.id;
    // OpenAI's tool messages have no "name"; the state form keeps the tool's name.
    if (!m.name.empty() && !(wire && m.is_tool())) o["name"] = m.name;

    // On the wire, a call whose arguments were garbled is sent back as the model
    // wrote it: the agent answers it with an error tool message, and the
    // provider rejects a tool message whose call is missing from the request.
    const bool wire_invalid = wire && m.is_ai() && !m.invalid_tool_calls().empty();
    const bool write_calls = (!m.tool_calls.empty() && (!wire || m.is_ai())) || wire_invalid;
    if (!m.is_remove() || !m.content.empty())
        o["content"] = content_to_json(m.content, m.is_ai() && write_calls);
    if (!m.reasoning().empty() && (!wire || (options.include_reasoning && m.is_ai())))
        o["reasoning_content"] = m.reasoning();
    if (write_calls) {
        boost::json::array calls;
        calls.reserve(m.tool_calls.size() + (wire_invalid ? m.invalid_tool_calls().size() : 0));
        for (const tool_call& call : m.tool_calls)
            calls.push_back(tool_call_to_json(call));
        if (wire_invalid)
            for (const invalid_tool_call& call : m.invalid_tool_calls())
                calls.push_back(boost::json::object{
                    {"id", call.id},
                    {"type", "function"},
                    {"function", boost::json::object{{"name", call.name}, {"arguments", call.raw_args}}}});
        o["tool_calls"] = std::move(calls);
    }
    if (wire) {
        if (m.is_tool()) o["tool_call_id"] = m.tool_call_id();
        return o;
    }

    if (!m.invalid_tool_calls().empty()) {
        boost::json::array calls;
        calls.reserve(m.invalid_tool_calls().size());
        for (const invalid_tool_call& call : m.invalid_tool_calls())
            calls.push_back(invalid_tool_call_to_json(call));
        o["invalid_tool_calls"] = std::move(calls);
    }
    if (m.is_tool() || !m.tool_call_id().empty()) o["tool_call_id"] = m.tool_call_id();
    if (m.status == tool_status::error) o["status"] = "error";
    if (!m.provider.empty() || !m.metadata.empty()) o["metadata"] = metadata_to_json(m);
    return o;
}

} // namespace detail

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, role r) {
    jv = detail::role_wire_name(r);
}

role tag_invoke(boost::json::value_to_tag<role>, const boost::json::value& jv) {
    return detail::read_role(jv, detail::json_place{"role", {}}, "role");
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, tool_status s) {
    jv = s == tool_status::error ? "error" : "ok";
}

tool_status tag_invoke(boost::json::value_to_tag<tool_status>, const boost::json::value& jv) {
    return detail::read_status(jv, detail::json_place{"tool_status", {}}, "status");
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const content_block& block) {
    jv = detail::content_part_to_json(block);
}

content_block tag_invoke(boost::json::value_to_tag<content_block>, const boost::json::value& jv) {
    return detail::read_content_part(jv, detail::json_place{"content_block", {}});
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_call& call) {
    jv = detail::tool_call_to_json(call);
}

tool_call tag_invoke(boost::json::value_to_tag<tool_call>, const boost::json::value& jv) {
    const detail::json_place at{"tool_call", {}};
    message holder;
    detail::read_tool_call(jv, at, holder);
    if (!holder.invalid_tool_calls().empty())
        at.fail("function.arguments", holder.invalid_tool_calls().front().error);
    return std::move(holder.tool_calls.front());
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const invalid_tool_call& call) {
    jv = detail::invalid_tool_call_to_json(call);
}

invalid_tool_call tag_invoke(boost::json::value_to_tag<invalid_tool_call>, const boost::json::value& jv) {
    return detail::read_invalid_tool_call(jv, detail::json_place{"invalid_tool_call", {}});
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const token_usage& u) {
    jv = detail::usage_to_json(u);
}

token_usage tag_invoke(boost::json::value_to_tag<token_usage>, const boost::json::value& jv) {
    const detail::json_place at{"token_usage", {}};
    const boost::json::object& o = detail::expect_object(jv, at);
    token_usage u;
    for (auto [key, count] : detail::usage_counts(u)) {
        const boost::json::value* n = o.if_contains(key);
        if (n == nullptr) continue;
        boost::json::error_code ec;
        *count = n->to_number<std::uint64_t>(ec);
        if (ec)
            at.fail(key,
                    detail::format("must be a non-negative integer (got {})", detail::describe_json(*n)));
    }
    return u;
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const provider_metadata& p) {
    boost::json::object o;
    detail::write_provider_metadata(p, o);
    jv = std::move(o);
}

provider_metadata tag_invoke(boost::json::value_to_tag<provider_metadata>, const boost::json::value& jv) {
    const detail::json_place at{"provider_metadata", {}};
    const boost::json::object& o = detail::expect_object(jv, at);
    const std::string finish_reason = detail::read_string(o, "finish_reason", at);
    const std::string model = detail::read_string(o, "model", at);
    token_usage usage;
    if (const auto* u = o.if_contains("usage"); u != nullptr && !u->is_null())
        usage = boost::json::value_to<token_usage>(*u);
    return provider_metadata(finish_reason, model, usage);
}

void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const message& m) {
    jv = detail::message_to_json(m, detail::json_form::state, {});
}

message tag_invoke(boost::json::value_to_tag<message>, const boost::json::value& jv) {
    return detail::read_message(jv, "message");
}

boost::json::value to_openai_wire(const message& m, const wire_options& options) {
    return detail::message_to_json(m, detail::json_form::wire, options);
}

boost::json::array to_openai_wire(const std::vector<message>& messages, const wire_options& options) {
    boost::json::array out;
    out.reserve(messages.size());
    for (const message& m : messages)
        out.push_back(detail::message_to_json(m, detail::json_form::wire, options));
    return out;
}

std::vector<message> parse_messages(std::string_view json_text) {
    // The stream parser reports how far it got, which locates the error. The
    // depth limit is raised from Boost's 32 so that deeply nested metadata
    // written by to_json_string can be read back.
    boost::json::parse_options options;
    options.max_depth = 256;
    boost::json::stream_parser parser({}, options);
    boost::json::error_code ec;
    const std::size_t offset = parser.write(json_text.data(), json_text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec)
        throw message_format_error(
            detail::format("messages: not valid JSON: {} at offset {}", ec.message(), offset));
    const boost::json::value parsed = parser.release();
    const auto* items = parsed.if_array();
    if (items == nullptr)
        throw message_format_error(
            detail::format("messages: must be a JSON array (got {})", detail::describe_json(parsed)));

    std::vector<message> out;
    out.reserve(items->size());
    for (std::size_t i = 0; i < items->size(); ++i)
        out.push_back(detail::read_message((*items)[i], detail::format("messages[{}]", i)));
    return out;
}

std::string to_json_string(const std::vector<message>& messages) {
    return boost::json::serialize(boost::json::value_from(messages));
}

std::string to_json_string(const message& m) { return boost::json::serialize(boost::json::value_from(m)); }

} // namespace agentware

#endif
