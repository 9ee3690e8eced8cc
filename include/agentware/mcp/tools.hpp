#ifndef AGENTWARE_MCP_TOOLS_HPP
#define AGENTWARE_MCP_TOOLS_HPP

// MCP servers' tools as agentware tools: `mcp_tool` calls one tool of one
// server; `mcp_toolkit` starts the enabled servers of a configuration, names
// their tools (prefixed with the server's name unless configured otherwise),
// and brings them to an agent as a middleware (its `tools()` hook) or as a
// tool_set.

#include <agentware/mcp/client.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace agentware::mcp {

/// A `tools/call` result as a tool message's content: text blocks as text,
/// images as image blocks (data URLs), embedded text resources as their text,
/// other blocks described in a line; `structuredContent` as JSON text when no
/// text block carries it; `isError: true` as an error.
inline tool_output to_tool_output(const boost::json::object& result) {
    tool_output out;
    const auto str = [](const boost::json::object& o, std::string_view key) -> std::string {
        if (const auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->get_string());
        return {};
    };
    bool has_text = false;
    if (const auto* content = result.if_contains("content"); content && content->is_array()) {
        for (const auto& item : content->get_array()) {
            if (!item.is_object()) continue;
            const auto& b = item.get_object();
            const std::string type = str(b, "type");
            if (type == "text") {
                out.content.push_back(text_block(str(b, "text")));
                has_text = true;
            } else if (type == "image") {
                std::string mime = str(b, "mimeType");
                if (mime.empty()) mime = "image/png";
                out.content.push_back(image_block("data:" + mime + ";base64," + str(b, "data")));
            } else if (type == "resource") {
                const auto* r = b.if_contains("resource");
                if (r == nullptr || !r->is_object()) continue;
                const auto& res = r->get_object();
                if (const auto* t = res.if_contains("text"); t && t->is_string()) {
                    out.content.push_back(text_block(std::string(t->get_string())));
                    has_text = true;
                } else {
                    out.content.push_back(text_block("[binary resource " + str(res, "uri") + " (" +
                                                     str(res, "mimeType") + ")]"));
                }
            } else if (type == "resource_link") {
                out.content.push_back(text_block("[resource " + str(b, "name") + ": " + str(b, "uri") + "]"));
            } else if (type == "audio") {
                out.content.push_back(text_block("[audio (" + str(b, "mimeType") + ") not shown]"));
            } else {
                out.content.push_back(text_block("[content of type \"" + type + "\" not shown]"));
            }
        }
    }
    if (const auto* sc = result.if_contains("structuredContent"); sc && !has_text)
        out.content.push_back(text_block(boost::json::serialize(*sc)));
    if (out.content.empty()) out.content.push_back(text_block(""));
    if (const auto* e = result.if_contains("isError"); e && e->is_bool() && e->get_bool())
        out.status = tool_status::error;
    return out;
}

/// The error tool message for a call that did not produce a result.
inline tool_output call_failure(const client& c, std::string_view tool, const mcp_error& e) {
    std::string text =
        "Error: the MCP tool \"" + std::string(tool) + "\" of server \"" + c.config().name + "\" ";
    switch (e.kind()) {
    case mcp_error_kind::remote:
        text += "refused the call: " + std::string(e.what());
        if (e.code() != 0) text += " (JSON-RPC error " + std::to_string(e.code()) + ")";
        break;
    case mcp_error_kind::timeout:
        text += "timed out: " + std::string(e.what());
        break;
    case mcp_error_kind::input_required:
        text += "cannot run: " + std::string(e.what());
        break;
    case mcp_error_kind::cancelled:
        text += "was cancelled: the run was asked to stop";
        break;
    default:
        text += "failed: " + std::string(e.what());
        break;
    }
    return tool_output::error(std::move(text));
}

/// A server's notification as a run's custom event: `{"type": "mcp_progress"
/// | "mcp_log", "server", "tool", "tool_call_id", "params"}` (the log line's
/// tool is the one whose call was in flight when it came).
inline boost::json::object run_event(const mcp_event& e, std::string_view tool,
                                     std::string_view tool_call_id) {
    return {{"type", e.method == "notifications/progress" ? "mcp_progress" : "mcp_log"},
            {"server", e.server},
            {"tool", tool},
            {"tool_call_id", tool_call_id},
            {"params", e.params}};
}

/// What an MCP tool's run pauses with when the server asks the user
/// something (an elicitation): `{"type": "mcp_elicitation", "server",
/// "tool", "message", "requestedSchema", "params"}` (the last is the
/// request's params as the server sent them; the two before are copied from
/// it for the reader's convenience when present).
inline boost::json::object elicitation_interrupt(std::string_view server, std::string_view tool,
                                                 const boost::json::object& params) {
    boost::json::object payload{{"type", "mcp_elicitation"}, {"server", server}, {"tool", tool}};
    for (const char* key : {"message", "requestedSchema"})
        if (const auto* v = params.if_contains(key)) payload[key] = *v;
    payload["params"] = params;
    return payload;
}

/// The resume value of an `mcp_elicitation` interrupt as the elicitation's
/// result: an object with an `action` is sent as it is (`{"action":
/// "accept", "content": {...}}`, `{"action": "decline"}`); another object is
/// the content of an accepted form; the strings "decline" and "cancel" are
/// those actions. Anything else is an error (std::invalid_argument).
inline boost::json::object elicitation_answer(const boost::json::value& resumed) {
    if (resumed.is_object()) {
        const auto& o = resumed.get_object();
        if (o.contains("action")) return o;
        return {{"action", "accept"}, {"content", o}};
    }
    if (resumed.is_string() && (resumed.get_string() == "decline" || resumed.get_string() == "cancel"))
        return {{"action", resumed.get_string()}};
    throw std::invalid_argument("the answer to an MCP elicitation must be an object (the form's content, or "
                                "{\"action\": ...}) or \"decline\" or \"cancel\", not " +
                                boost::json::serialize(resumed));
}

/// One tool of one server, named `name` for the model.
class mcp_tool final : public tool_interface {
public:
    mcp_tool(std::shared_ptr<client> c, tool_info info, std::string name)
        : client_(std::move(c)), remote_name_(info.name),
          schema_{std::move(name), std::move(info.description), std::move(info.input_schema)} {}

    const tool_schema& schema() const override { return schema_; }
    const std::string& remote_name() const noexcept { return remote_name_; }

    /// Stops with the run (`tool_runtime::stop`), passes the server's
    /// progress and log notifications to the run's event channel as
    /// `mcp_progress` and `mcp_log` events, pauses the run when the server
    /// asks the user something (see `elicitation_interrupt`), and with
    /// client_options::roots_by_call gives the thread's workspace as its roots.
    tool_output call(const boost::json::object& args, const tool_runtime& rt) override {
        const call_options options = options_for(rt);
        try {
            return to_tool_output(client_->call_tool(remote_name_, args, options));
        } catch (const mcp_error& e) {
            return call_failure(*client_, remote_name_, e);
        }
    }

    /// The asynchronous loop awaits the call on its executor: over stdio no
    /// thread waits for the server's answer.
    bool is_async() const noexcept override { return true; }
    bool is_mcp() const noexcept override { return true; }
    boost::asio::awaitable<tool_output> async_call(const boost::json::object& args,
                                                   const tool_runtime& rt) override {
        try {
            co_return to_tool_output(co_await client_->async_call_tool(remote_name_, args, options_for(rt)));
        } catch (const mcp_error& e) {
            co_return call_failure(*client_, remote_name_, e);
        }
    }

private:
    call_options options_for(const tool_runtime& rt) const {
        call_options options;
        options.stop = rt.stop;
        if (rt.events) {
            options.on_event = [events = rt.events, tool = schema_.name,
                                call_id = std::string(rt.tool_call_id)](const mcp_event& e) {
                events.emit(run_event(e, tool, call_id));
            };
            options.event_group = rt.events.id();
        }
        if (client_->options().roots_by_call)
            if (const auto* td = rt.field<thread_data_field>(); td && *td && !(*td)->workspace_path.empty())
                options.roots = {(*td)->workspace_path};
        if (!client_->options().on_elicitation)
            options.on_elicitation = [this, &rt](const boost::json::object& params) {
                return elicitation_answer(
                    rt.interrupt(elicitation_interrupt(client_->config().name, schema_.name, params)));
            };
        return options;
    }

    std::shared_ptr<client> client_;
    std::string remote_name_;
    tool_schema schema_;
};

/// The tools of several servers. Copies share the connections.
class mcp_toolkit {
public:
    mcp_toolkit() = default;

    /// Connects to every enabled server of `servers` and lists its tools.
    /// Throws mcp_error when a server cannot start or answer, and
    /// std::invalid_argument when two tools end up with the same name.
    explicit mcp_toolkit(const std::vector<server_config>& servers, client_options options = {})
        : shared_(std::make_shared<shared>()) {
        if (!options.on_elicitation) options.elicitation_by_call = true; // the tools pause the run
        for (const auto& s : servers) {
            if (!s.enabled) continue;
            shared_->clients.push_back(std::make_shared<client>(s, options));
        }
        load();
    }

    /// The tools as a middleware brings them (the `tools()` hook): listed
    /// again first when a server said its list changed. As a middleware the
    /// toolkit tells the agent so through `tools_version()`, and the agent
    /// asks for the tools again before its next model call.
    std::vector<std::shared_ptr<tool_interface>> tools() const {
        if (!shared_) return {};
        if (tools_version() != shared_->loaded_version) load();
        std::lock_guard lock(shared_->mutex);
        return shared_->tools;
    }

    /// Grows with every `notifications/tools/list_changed` of any server.
    std::uint64_t tools_version() const noexcept {
        std::uint64_t v = 0;
        if (shared_)
            for (const auto& c : shared_->clients)
                v += c->tools_list_changes();
        return v;
    }

    /// The tools as a tool set (for `make_agent(model, toolkit.tool_set(), ...)`).
    agentware::tool_set tool_set() const {
        agentware::tool_set out;
        for (auto& t : tools())
            out.add(t);
        return out;
    }

    const std::vector<std::shared_ptr<client>>& clients() const {
        static const std::vector<std::shared_ptr<client>> none;
        return shared_ ? shared_->clients : none;
    }

    /// Stops every server.
    void close() {
        if (!shared_) return;
        for (auto& c : shared_->clients)
            c->close();
    }

private:
    struct shared {
        std::vector<std::shared_ptr<client>> clients;
        std::mutex mutex;
        std::vector<std::shared_ptr<tool_interface>> tools;
        std::atomic<std::uint64_t> loaded_version{0};
    };

    void load() const {
        const std::uint64_t version = tools_version(); // before listing: a change during it lists again
        std::vector<std::shared_ptr<tool_interface>> tools;
        std::map<std::string, std::string> owner; // tool name -> server
        for (const auto& c : shared_->clients) {
            for (auto& info : c->list_tools()) {
                const std::string name =
                    c->config().tool_name_prefix ? c->config().name + "_" + info.name : info.name;
                if (auto [it, fresh] = owner.emplace(name, c->config().name); !fresh)
                    throw std::invalid_argument(
                        "MCP tool name collision: \"" + name + "\" is offered by servers \"" + it->second +
                        "\" and \"" + c->config().name + "\" (set tool_name_prefix to tell them apart)");
                tools.push_back(std::make_shared<mcp_tool>(c, std::move(info), name));
            }
        }
        std::lock_guard lock(shared_->mutex);
        shared_->tools = std::move(tools);
        shared_->loaded_version = version;
    }

    std::shared_ptr<shared> shared_;
};

} // namespace agentware::mcp

#endif
