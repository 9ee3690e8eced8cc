#ifndef AGENTWARE_SERVER_WIRE_HPP
#define AGENTWARE_SERVER_WIRE_HPP

// Messages and states as the LangGraph SDKs read and send them: LangChain's
// serialised message dicts ({"type": "human", "content": ..., "id": ...}) out,
// and the input forms the SDKs and web UIs post ({"role": "user", ...} or
// {"type": "human", ...}, string or block content) in. The agent keeps its own
// form (message/json.hpp); the server converts at its edge only.

#include <agentware/json/reader.hpp>
#include <agentware/message/json.hpp>
#include <agentware/message/message.hpp>

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::server {

/// A message as LangChain serialises it (what `values`, `updates` and
/// `messages` events carry).
inline boost::json::object langchain_message(const message& m) {
    boost::json::object out;
    // Content: a string when it is only text (what clients render directly),
    // else LangChain's block list.
    bool only_text = true;
    for (const auto& b : m.content)
        only_text = only_text && b.is_text();
    if (only_text) {
        out["content"] = m.text();
    } else {
        boost::json::array blocks;
        for (const auto& b : m.content) {
            if (b.is_text())
                blocks.push_back(boost::json::object{{"type", "text"}, {"text", b.text}});
            else {
                boost::json::object url{{"url", b.image_url}};
                if (!b.detail.empty()) url["detail"] = b.detail;
                blocks.push_back(boost::json::object{{"type", "image_url"}, {"image_url", std::move(url)}});
            }
        }
        out["content"] = std::move(blocks);
    }
    boost::json::object kwargs = m.metadata; // DeerFlow's stamps (hide_from_ui, ...) live here
    if (!m.reasoning().empty()) kwargs["reasoning_content"] = m.reasoning();
    out["additional_kwargs"] = std::move(kwargs);
    boost::json::object response;
    if (!m.provider.finish_reason().empty()) response["finish_reason"] = m.provider.finish_reason();
    if (!m.provider.model().empty()) response["model_name"] = m.provider.model();
    out["response_metadata"] = std::move(response);
    switch (m.type) {
    case role::system:
        out["type"] = "system";
        break;
    case role::human:
        out["type"] = "human";
        break;
    case role::ai: {
        out["type"] = "ai";
        boost::json::array calls;
        for (const auto& c : m.tool_calls)
            calls.push_back(
                boost::json::object{{"name", c.name}, {"args", c.args}, {"id", c.id}, {"type", "tool_call"}});
        out["tool_calls"] = std::move(calls);
        boost::json::array invalid;
        for (const auto& c : m.invalid_tool_calls())
            invalid.push_back(boost::json::object{{"name", c.name},
                                                  {"args", c.raw_args},
                                                  {"id", c.id},
                                                  {"error", c.error},
                                                  {"type", "invalid_tool_call"}});
        out["invalid_tool_calls"] = std::move(invalid);
        const auto u = m.provider.usage();
        if (u.total_tokens != 0 || u.input_tokens != 0 || u.output_tokens != 0)
            out["usage_metadata"] = boost::json::object{{"input_tokens", u.input_tokens},
                                                        {"output_tokens", u.output_tokens},
                                                        {"total_tokens", u.total_tokens}};
        else
            out["usage_metadata"] = nullptr;
        break;
    }
    case role::tool:
        out["type"] = "tool";
        out["tool_call_id"] = m.tool_call_id();
        out["status"] = m.is_error() ? "error" : "success";
        out["artifact"] = nullptr;
        break;
    case role::remove:
        out["type"] = "remove";
        break;
    }
    out["name"] = m.name.empty() ? boost::json::value(nullptr) : boost::json::value(m.name);
    out["id"] = m.id;
    return out;
}

/// A state's values as clients read them: the messages in LangChain's form,
/// the other fields as they are (`state` is the agent state's JSON form).
/// Internal bookkeeping (keys starting with "__") stays out.
inline boost::json::object langchain_values(const boost::json::value& state) {
    boost::json::object out;
    const auto* o = state.if_object();
    if (o == nullptr) return out;
    for (const auto& kv : *o) {
        if (kv.key() == "messages") {
            boost::json::array ms;
            if (const auto* a = kv.value().if_array())
                for (const auto& m : *a)
                    ms.push_back(langchain_message(boost::json::value_to<message>(m)));
            out["messages"] = std::move(ms);
        } else if (!kv.key().starts_with("__")) {
            out[kv.key()] = kv.value();
        }
    }
    if (!out.contains("messages")) out["messages"] = boost::json::array{};
    return out;
}

namespace detail {

// LangChain's message types by the names clients use for them.
inline std::string_view openai_role_of(std::string_view type) {
    if (type == "human" || type == "user") return "user";
    if (type == "ai" || type == "assistant") return "assistant";
    if (type == "system" || type == "developer") return "system";
    if (type == "tool") return "tool";
    if (type == "remove") return "remove";
    return {};
}

} // namespace detail

/// One input message in any form the SDKs send: {"role": "user", "content": ...},
/// {"type": "human", ...}, or a plain string (a human message). Errors name
/// the message's path (`input.messages[0].type`).
inline message read_input_message(const boost::json::value& v, const std::string& path) {
    if (v.is_string()) return human_message(std::string(v.get_string()));
    const auto* o = v.if_object();
    if (o == nullptr) throw json_error(path, "must be a message object or a string");
    std::string_view kind;
    std::string kind_key = "role";
    if (const auto* r = o->if_contains("role"); r && r->is_string())
        kind = r->get_string();
    else if (const auto* t = o->if_contains("type"); t && t->is_string()) {
        kind = t->get_string();
        kind_key = "type";
    } else {
        throw json_error(path, "needs a \"role\" or a \"type\" (human, ai, system, tool)");
    }
    const std::string_view role = detail::openai_role_of(kind);
    if (role.empty())
        throw json_error(path + "." + kind_key,
                         agentware::detail::format("unknown message type \"{}\" (human, user, ai, assistant, "
                                                   "system, developer or tool)",
                                                   kind));
    boost::json::object wire;
    wire["role"] = role;
    if (const auto* c = o->if_contains("content")) wire["content"] = *c;
    if (const auto* id = o->if_contains("id"); id && id->is_string()) wire["id"] = *id;
    if (const auto* n = o->if_contains("name"); n && n->is_string()) wire["name"] = *n;
    if (const auto* t = o->if_contains("tool_call_id")) wire["tool_call_id"] = *t;
    if (const auto* k = o->if_contains("additional_kwargs"); k && k->is_object()) wire["metadata"] = *k;
    if (const auto* calls = o->if_contains("tool_calls"); calls && calls->is_array()) {
        // LangChain's {name, args, id} calls, in the OpenAI form the reader takes.
        boost::json::array out;
        for (const auto& c : calls->get_array()) {
            const auto* co = c.if_object();
            if (co == nullptr) continue;
            if (co->contains("function")) {
                out.push_back(c);
                continue;
            }
            const auto* args = co->if_contains("args");
            out.push_back(boost::json::object{
                {"id", co->contains("id") ? co->at("id") : boost::json::value("")},
                {"type", "function"},
                {"function", boost::json::object{
                                 {"name", co->contains("name") ? co->at("name") : boost::json::value("")},
                                 {"arguments", args ? boost::json::serialize(*args) : std::string("{}")}}}});
        }
        wire["tool_calls"] = std::move(out);
    }
    if (const auto* s = o->if_contains("status"); s && s->is_string()) wire["status"] = *s;
    try {
        return boost::json::value_to<message>(boost::json::value(std::move(wire)));
    } catch (const std::exception& e) {
        throw json_error(path, e.what());
    }
}

/// A run's `input`: {"messages": [...]} (or a bare list, or one message).
/// Null means no new message (a run that only continues the thread).
inline std::vector<message> read_run_input(const boost::json::value& input, const std::string& path) {
    std::vector<message> out;
    if (input.is_null()) return out;
    const boost::json::value* list = &input;
    std::string at = path;
    if (const auto* o = input.if_object()) {
        if (o->contains("role") || o->contains("type")) {
            out.push_back(read_input_message(input, path));
            return out;
        }
        list = o->if_contains("messages");
        at = path + ".messages";
        if (list == nullptr || list->is_null()) return out;
    }
    if (list->is_string()) {
        out.push_back(human_message(std::string(list->get_string())));
        return out;
    }
    const auto* a = list->if_array();
    if (a == nullptr) throw json_error(at, "must be a list of messages");
    for (std::size_t i = 0; i < a->size(); ++i)
        out.push_back(read_input_message((*a)[i], agentware::detail::format("{}[{}]", at, i)));
    return out;
}

} // namespace agentware::server

#endif
