#ifndef AGENTWARE_SERVER_API_HPP
#define AGENTWARE_SERVER_API_HPP

// The LangGraph Server API as the official SDKs call it: system, assistants,
// threads (state and history), runs on a thread and stateless runs. Bodies
// are read leniently where the reference is (unknown keys ignored) and
// strictly where a wrong value would be silently misread (a 422 naming the
// key's path). Status codes and texts follow the reference server
// (server.md §1): clients match on them.

#include <agentware/message/json.hpp>
#include <agentware/server/http.hpp>
#include <agentware/server/ids.hpp>
#include <agentware/server/run_manager.hpp>
#include <agentware/server/wire.hpp>
#include <agentware/thread/id.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace agentware::server {

namespace detail {

inline boost::json::object parse_body(const http_request& req) {
    if (req.body.empty()) return {};
    boost::system::error_code ec;
    auto v = boost::json::parse(req.body, ec);
    if (ec) throw json_error("", agentware::detail::format("the body is not valid JSON ({})", ec.message()));
    if (!v.is_object()) throw json_error("", "the body must be a JSON object");
    return std::move(v.get_object());
}

// A key's value, checked: the kinds it may have, or a json_error naming it.
inline const boost::json::value* optional_field(const boost::json::object& o, std::string_view key,
                                                std::initializer_list<boost::json::kind> kinds,
                                                std::string_view what) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return nullptr;
    for (auto k : kinds)
        if (v->kind() == k || (k == boost::json::kind::double_ && v->is_number())) return v;
    throw json_error(std::string(key), agentware::detail::format("must be {}", what));
}

inline std::string one_of(const boost::json::object& o, std::string_view key,
                          std::initializer_list<std::string_view> allowed, std::string_view fallback) {
    const auto* v = optional_field(o, key, {boost::json::kind::string}, "a string");
    if (v == nullptr) return std::string(fallback);
    const std::string s(v->get_string());
    for (auto a : allowed)
        if (s == a) return s;
    std::string list;
    for (auto a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
    throw json_error(std::string(key), agentware::detail::format("must be one of {} (not \"{}\")", list, s));
}

inline std::size_t count_field(const boost::json::object& o, std::string_view key, std::size_t fallback,
                               std::size_t max = 10000) {
    const auto* v =
        optional_field(o, key, {boost::json::kind::int64, boost::json::kind::uint64}, "a whole number");
    if (v == nullptr) return fallback;
    const auto n = v->to_number<std::int64_t>();
    if (n < 0) throw json_error(std::string(key), "must not be negative");
    return std::min<std::size_t>(std::size_t(n), max);
}

// A RunCreate body, checked where a wrong value would be misread.
inline void validate_run_create(const boost::json::object& b, bool needs_assistant) {
    using k = boost::json::kind;
    const auto* a = optional_field(b, "assistant_id", {k::string}, "a string");
    if (needs_assistant && a == nullptr) throw json_error("assistant_id", "is required");
    optional_field(b, "input", {k::object, k::array, k::string}, "an object");
    optional_field(b, "command", {k::object}, "an object");
    optional_field(b, "config", {k::object}, "an object");
    optional_field(b, "context", {k::object}, "an object");
    optional_field(b, "metadata", {k::object}, "an object");
    optional_field(b, "checkpoint", {k::object}, "an object");
    optional_field(b, "checkpoint_id", {k::string}, "a string");
    optional_field(b, "after_seconds", {k::double_}, "a number");
    for (std::string_view flag :
         {"stream_subgraphs", "stream_resumable", "strict_resume", "checkpoint_during"})
        optional_field(b, flag, {k::bool_}, "true or false");
    static constexpr std::string_view modes[] = {"values", "messages", "messages-tuple", "updates",
                                                 "events", "tasks",    "checkpoints",    "debug",
                                                 "custom", "tools"};
    auto check_mode = [](const boost::json::value& m, const std::string& path) {
        if (!m.is_string()) throw json_error(path, "must be a stream mode name");
        if (std::find(std::begin(modes), std::end(modes), m.get_string()) == std::end(modes))
            throw json_error(path,
                             agentware::detail::format(
                                 "unknown stream mode \"{}\" (values, messages, messages-tuple, updates, "
                                 "events, tasks, checkpoints, debug, custom, tools)",
                                 std::string_view(m.get_string())));
    };
    if (const auto* m =
            optional_field(b, "stream_mode", {k::string, k::array}, "a mode or a list of modes")) {
        if (m->is_string())
            check_mode(*m, "stream_mode");
        else
            for (std::size_t i = 0; i < m->get_array().size(); ++i)
                check_mode(m->get_array()[i], agentware::detail::format("stream_mode[{}]", i));
    }
    one_of(b, "multitask_strategy", {"reject", "enqueue", "interrupt", "rollback"}, "reject");
    one_of(b, "if_not_exists", {"reject", "create"}, "reject");
    one_of(b, "on_disconnect", {"cancel", "continue"}, "continue");
    one_of(b, "on_completion", {"delete", "keep"}, "delete");
    one_of(b, "durability", {"async", "sync", "exit"}, "async");
    if (const auto* c = b.if_contains("command"); c && c->is_object() && c->get_object().empty())
        throw json_error("command", "must have resume, update or goto");
}

inline boost::json::object public_metadata(const boost::json::object& t) {
    boost::json::object out;
    if (const auto* m = t.if_contains("metadata"); m && m->is_object())
        for (const auto& kv : m->get_object())
            if (!kv.key().starts_with("__")) out[kv.key()] = kv.value();
    return out;
}

inline boost::json::object checkpoint_ref(std::string_view thread_id, const boost::json::value& id) {
    return {
        {"thread_id", thread_id}, {"checkpoint_ns", ""}, {"checkpoint_id", id}, {"checkpoint_map", nullptr}};
}

// ThreadState of one checkpoint.
inline boost::json::object thread_state(std::string_view thread_id, const checkpoint_record* c) {
    if (c == nullptr)
        return {{"values", boost::json::object{}}, {"next", boost::json::array{}},
                {"tasks", boost::json::array{}},   {"metadata", boost::json::object{}},
                {"created_at", nullptr},           {"checkpoint", checkpoint_ref(thread_id, nullptr)},
                {"parent_checkpoint", nullptr},    {"interrupts", boost::json::array{}}};
    const auto& values = c->at("values");
    const auto pending = pending_interrupts(values);
    boost::json::array next, tasks;
    if (!pending.empty()) {
        const std::string at = pending_point(values);
        next.push_back(boost::json::string(at));
        tasks.push_back(
            boost::json::object{{"id", c->at("checkpoint_id")},
                                {"name", at},
                                {"path", boost::json::array{"__pregel_pull", boost::json::string(at)}},
                                {"error", nullptr},
                                {"interrupts", pending},
                                {"checkpoint", nullptr},
                                {"state", nullptr},
                                {"result", nullptr}});
    }
    boost::json::object metadata;
    if (const auto* m = c->if_contains("metadata"); m && m->is_object()) metadata = m->get_object();
    metadata["source"] = c->contains("source") ? c->at("source") : "loop";
    metadata["step"] = c->contains("step") ? c->at("step") : 0;
    metadata["parents"] = boost::json::object{};
    if (const auto* r = c->if_contains("run_id")) metadata["run_id"] = *r;
    const auto* parent = c->if_contains("parent_checkpoint_id");
    return {{"values", langchain_values(values)},
            {"next", std::move(next)},
            {"tasks", std::move(tasks)},
            {"metadata", std::move(metadata)},
            {"created_at", c->contains("created_at") ? c->at("created_at") : nullptr},
            {"checkpoint", checkpoint_ref(thread_id, c->at("checkpoint_id"))},
            {"parent_checkpoint", parent && parent->is_string()
                                      ? boost::json::value(checkpoint_ref(thread_id, *parent))
                                      : boost::json::value(nullptr)},
            {"interrupts", pending}};
}

// `limit` items from `offset` on, with the total in `x-pagination-total`.
template <class List>
http_response page_of(const List& all, std::size_t offset, std::size_t limit) {
    boost::json::array page;
    for (std::size_t i = offset; i < all.size() && page.size() < limit; ++i)
        page.push_back(all[i]);
    auto r = http_response::json(page);
    r.headers.emplace_back("x-pagination-total", std::to_string(all.size()));
    return r;
}

inline bool metadata_matches(const boost::json::object& have, const boost::json::object& want) {
    for (const auto& kv : want) {
        const auto* v = have.if_contains(kv.key());
        if (v == nullptr || *v != kv.value()) return false;
    }
    return true;
}

} // namespace detail

/// The LangGraph routes over a run manager (and its store).
class langgraph_api {
public:
    explicit langgraph_api(run_manager& runs) : runs_(runs), store_(runs.records()) {}

    void add_routes(router& r) {
        using req = http_request;
        r.add("GET", "/ok", [](req&) { return http_response::json(boost::json::object{{"ok", true}}); });
        r.add("GET", "/info", [](req&) {
            return http_response::json(
                boost::json::object{{"version", "0.1.0"},
                                    {"context", "agentware"},
                                    {"flags", boost::json::object{{"assistants", true},
                                                                  {"crons", false},
                                                                  {"langsmith", false},
                                                                  {"strict_resume", true},
                                                                  {"stream_namespaces", false}}}});
        });
        // Assistants: the registered graphs, read-only.
        r.add("POST", "/assistants/search", [this](req& q) { return search_assistants(q); });
        r.add("POST", "/assistants/count",
              [this](req&) { return http_response::json(boost::json::value(runs_.assistants().size())); });
        r.add("GET", "/assistants/{id}",
              [this](req& q) { return with_assistant(q, [&](auto& a) { return a; }); });
        r.add("GET", "/assistants/{id}/graph", [this](req& q) {
            return with_assistant(q, [&](boost::json::object&) -> boost::json::value {
                return boost::json::object{
                    {"nodes", boost::json::array{boost::json::object{{"id", "__start__"}, {"type", "schema"}},
                                                 boost::json::object{{"id", "model"}, {"type", "runnable"}},
                                                 boost::json::object{{"id", "tools"}, {"type", "runnable"}},
                                                 boost::json::object{{"id", "__end__"}, {"type", "schema"}}}},
                    {"edges",
                     boost::json::array{
                         boost::json::object{{"source", "__start__"}, {"target", "model"}},
                         boost::json::object{{"source", "model"}, {"target", "tools"}, {"conditional", true}},
                         boost::json::object{{"source", "tools"}, {"target", "model"}},
                         boost::json::object{
                             {"source", "model"}, {"target", "__end__"}, {"conditional", true}}}}};
            });
        });
        r.add("GET", "/assistants/{id}/schemas", [this](req& q) {
            return with_assistant(q, [&](boost::json::object& a) -> boost::json::value {
                boost::json::object messages{
                    {"type", "object"},
                    {"properties",
                     boost::json::object{{"messages", boost::json::object{{"type", "array"}}}}}};
                return boost::json::object{{"graph_id", a.at("graph_id")},
                                           {"input_schema", messages},
                                           {"output_schema", messages},
                                           {"state_schema", messages},
                                           {"config_schema", boost::json::object{{"type", "object"}}},
                                           {"context_schema", boost::json::object{{"type", "object"}}}};
            });
        });
        r.add("GET", "/assistants/{id}/subgraphs", [this](req& q) {
            return with_assistant(
                q, [&](boost::json::object&) -> boost::json::value { return boost::json::object{}; });
        });
        r.add("POST", "/assistants/{id}/versions", [this](req& q) {
            return with_assistant(
                q, [&](boost::json::object& a) -> boost::json::value { return boost::json::array{a}; });
        });

        // Threads.
        r.add("POST", "/threads", [this](req& q) { return create_thread(q); });
        r.add("POST", "/threads/search", [this](req& q) { return search_threads(q, false); });
        r.add("POST", "/threads/count", [this](req& q) { return search_threads(q, true); });
        r.add("GET", "/threads/{thread_id}", [this](req& q) { return get_thread(q); });
        r.add("PATCH", "/threads/{thread_id}", [this](req& q) { return patch_thread(q); });
        r.add("DELETE", "/threads/{thread_id}", [this](req& q) { return delete_thread(q); });
        r.add("POST", "/threads/{thread_id}/copy", [this](req& q) { return copy_thread(q); });
        r.add("GET", "/threads/{thread_id}/state", [this](req& q) { return get_state(q, {}); });
        r.add("GET", "/threads/{thread_id}/state/{checkpoint_id}",
              [this](req& q) { return get_state(q, q.param("checkpoint_id")); });
        r.add("POST", "/threads/{thread_id}/state/checkpoint", [this](req& q) {
            auto body = detail::parse_body(q);
            std::string id;
            if (const auto* c = body.if_contains("checkpoint"); c && c->is_object())
                id = detail::string_or(c->get_object(), "checkpoint_id", "");
            return get_state(q, id);
        });
        r.add("POST", "/threads/{thread_id}/state", [this](req& q) { return update_state(q); });
        r.add("POST", "/threads/{thread_id}/history", [this](req& q) { return history(q); });
        r.add("GET", "/threads/{thread_id}/history", [this](req& q) { return history(q); });

        // Runs on a thread.
        r.add("POST", "/threads/{thread_id}/runs",
              [this](req& q) { return create_run(q, start::background); });
        r.add("POST", "/threads/{thread_id}/runs/stream",
              [this](req& q) { return create_run(q, start::stream); });
        r.add("POST", "/threads/{thread_id}/runs/wait",
              [this](req& q) { return create_run(q, start::wait); });
        r.add("GET", "/threads/{thread_id}/runs", [this](req& q) { return list_runs(q); });
        r.add("GET", "/threads/{thread_id}/runs/{run_id}", [this](req& q) { return get_run(q); });
        r.add("DELETE", "/threads/{thread_id}/runs/{run_id}", [this](req& q) { return delete_run(q); });
        r.add("GET", "/threads/{thread_id}/runs/{run_id}/join", [this](req& q) { return join(q); });
        r.add("GET", "/threads/{thread_id}/runs/{run_id}/stream", [this](req& q) { return join_stream(q); });
        r.add("POST", "/threads/{thread_id}/runs/{run_id}/cancel", [this](req& q) { return cancel(q); });
        // Stateless runs.
        r.add("POST", "/runs", [this](req& q) { return create_run(q, start::background); });
        r.add("POST", "/runs/stream", [this](req& q) { return create_run(q, start::stream); });
        r.add("POST", "/runs/wait", [this](req& q) { return create_run(q, start::wait); });
        r.add("POST", "/runs/batch", [this](req& q) { return batch(q); });
        r.add("GET", "/runs/{run_id}/stream", [this](req& q) { return join_stream(q); });
        r.add("GET", "/runs/{run_id}/join", [this](req& q) { return join(q); });
        r.add("POST", "/runs/{run_id}/cancel", [this](req& q) { return cancel(q); });
        r.add("POST", "/runs/cancel", [this](req& q) { return bulk_cancel(q); });
    }

    /// A thread as GET /threads/{id} shows it (values and interrupts once it has a checkpoint).
    boost::asio::awaitable<boost::json::object> thread_view(boost::json::object t) {
        boost::json::object out = t;
        out["metadata"] = detail::public_metadata(t);
        const std::string id = detail::string_or(t, "thread_id", "");
        if (auto c = co_await store_.last_checkpoint(id)) {
            out["values"] = langchain_values(c->at("values"));
            const auto pending = detail::pending_interrupts(c->at("values"));
            boost::json::object interrupts;
            if (!pending.empty()) interrupts[std::string(c->at("checkpoint_id").get_string())] = pending;
            out["interrupts"] = std::move(interrupts);
        }
        co_return out;
    }

private:
    enum class start { background, stream, wait };

    boost::json::object assistant_json(std::size_t i) const {
        const auto& a = runs_.assistants()[i];
        boost::json::object metadata = a.metadata;
        metadata["created_by"] = "system";
        return {{"assistant_id", runs_.assistant_id(i)},
                {"graph_id", a.graph_id},
                {"name", a.name.empty() ? a.graph_id : a.name},
                {"description",
                 a.description.empty() ? boost::json::value(nullptr) : boost::json::value(a.description)},
                {"version", 1},
                {"config", a.config},
                {"context", boost::json::object{}},
                {"metadata", std::move(metadata)},
                {"created_at", started_},
                {"updated_at", started_}};
    }

    template <class F>
    http_response with_assistant(http_request& q, F&& f) {
        std::size_t i = 0;
        const std::string id = q.param("id");
        if (runs_.find_assistant(id, &i) == nullptr)
            return http_response::text(
                404, agentware::detail::format(
                         "No assistant found for \"{}\". Make sure the assistant ID is for a "
                         "valid assistant or a valid graph ID.",
                         id));
        auto a = assistant_json(i);
        return http_response::json(f(a));
    }

    http_response search_assistants(http_request& q) {
        auto body = detail::parse_body(q);
        const std::string graph = detail::string_or(body, "graph_id", "");
        const std::string name = detail::string_or(body, "name", "");
        boost::json::object meta;
        if (const auto* m =
                detail::optional_field(body, "metadata", {boost::json::kind::object}, "an object"))
            meta = m->get_object();
        const std::size_t limit = detail::count_field(body, "limit", 10),
                          offset = detail::count_field(body, "offset", 0);
        boost::json::array all;
        for (std::size_t i = 0; i < runs_.assistants().size(); ++i) {
            auto a = assistant_json(i);
            if (!graph.empty() && a.at("graph_id") != boost::json::value(graph)) continue;
            if (!name.empty() &&
                std::string_view(a.at("name").get_string()).find(name) == std::string_view::npos)
                continue;
            if (!detail::metadata_matches(a.at("metadata").as_object(), meta)) continue;
            all.push_back(std::move(a));
        }
        return detail::page_of(all, offset, limit);
    }

    boost::asio::awaitable<std::optional<boost::json::object>> find_thread(std::string id) {
        auto t = co_await store_.thread(id);
        if (!t || !t->contains("created_at")) co_return std::nullopt; // none, or only its runs' records
        if (const auto* m = t->if_contains("metadata");
            m && m->is_object() && m->get_object().contains("__temporary"))
            co_return std::nullopt; // a stateless run's thread is not the client's
        co_return t;
    }
    static http_response no_thread(const std::string& id) {
        return http_response::text(404, agentware::detail::format("Thread with ID {} not found", id));
    }

    boost::asio::awaitable<http_response> create_thread(http_request& q) {
        auto body = detail::parse_body(q);
        std::string id;
        if (const auto* v =
                detail::optional_field(body, "thread_id", {boost::json::kind::string}, "a string")) {
            id = v->get_string();
            if (!is_valid_thread_id(id))
                throw json_error("thread_id", "must have 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'");
        }
        const std::string if_exists = detail::one_of(body, "if_exists", {"raise", "do_nothing"}, "raise");
        boost::json::object metadata;
        if (const auto* m =
                detail::optional_field(body, "metadata", {boost::json::kind::object}, "an object"))
            metadata = m->get_object();
        if (!id.empty())
            if (auto t = co_await store_.thread(id)) {
                if (if_exists == "do_nothing") co_return http_response::json(co_await thread_view(*t));
                co_return http_response::text(
                    409, agentware::detail::format("Thread with ID {} already exists", id));
            }
        if (id.empty()) id = new_uuid7();
        const std::string now = iso_now();
        boost::json::object t{{"thread_id", id},      {"created_at", now}, {"updated_at", now},
                              {"metadata", metadata}, {"status", "idle"},  {"config", boost::json::object{}}};
        co_await store_.put_thread(t);
        co_return http_response::json(t);
    }

    boost::asio::awaitable<http_response> get_thread(http_request& q) {
        const std::string id = q.param("thread_id");
        auto t = co_await find_thread(id);
        if (!t) co_return no_thread(id);
        co_return http_response::json(co_await thread_view(*t));
    }

    boost::asio::awaitable<http_response> patch_thread(http_request& q) {
        const std::string id = q.param("thread_id");
        auto body = detail::parse_body(q);
        if (!co_await find_thread(id)) co_return no_thread(id);
        boost::json::object metadata;
        if (const auto* m =
                detail::optional_field(body, "metadata", {boost::json::kind::object}, "an object"))
            metadata = m->get_object();
        // One write: a run's status changed meanwhile, in any process, stays.
        boost::json::object fields; // made before the co_await: g++ 12 mishandles a braced list under it
        fields["updated_at"] = iso_now();
        co_await store_.update_thread(id, std::move(fields), std::move(metadata));
        auto t = co_await find_thread(id);
        if (!t) co_return no_thread(id);
        co_return http_response::json(co_await thread_view(*t));
    }

    boost::asio::awaitable<http_response> delete_thread(http_request& q) {
        const std::string id = q.param("thread_id");
        if (!co_await find_thread(id)) co_return no_thread(id);
        runs_.cancel_thread(id);
        co_await store_.erase_thread(id);
        co_return http_response::empty(204);
    }

    boost::asio::awaitable<http_response> copy_thread(http_request& q) {
        const std::string id = q.param("thread_id");
        auto t = co_await find_thread(id);
        if (!t) co_return no_thread(id);
        const std::string copy_id = new_uuid7();
        const std::string now = iso_now();
        boost::json::object c = *t;
        c["thread_id"] = copy_id;
        c["created_at"] = now;
        c["updated_at"] = now;
        if (c.at("status") == "busy") c["status"] = "idle";
        co_await store_.put_thread(c);
        auto checkpoints = co_await store_.checkpoints(id);
        for (auto cp : checkpoints) {
            cp["thread_id"] = copy_id;
            co_await store_.add_checkpoint(cp);
        }
        co_return http_response::json(co_await thread_view(c));
    }

    boost::asio::awaitable<http_response> search_threads(http_request& q, bool count_only) {
        auto body = detail::parse_body(q);
        boost::json::object meta, values;
        if (const auto* m =
                detail::optional_field(body, "metadata", {boost::json::kind::object}, "an object"))
            meta = m->get_object();
        if (const auto* v = detail::optional_field(body, "values", {boost::json::kind::object}, "an object"))
            values = v->get_object();
        const std::string status =
            detail::one_of(body, "status", {"idle", "busy", "interrupted", "error"}, "");
        std::vector<std::string> ids;
        if (const auto* v =
                detail::optional_field(body, "ids", {boost::json::kind::array}, "a list of thread ids"))
            for (const auto& i : v->get_array())
                if (i.is_string()) ids.emplace_back(i.get_string());
        const std::size_t limit = detail::count_field(body, "limit", 10),
                          offset = detail::count_field(body, "offset", 0);
        const std::string sort_by = detail::one_of(
            body, "sort_by", {"thread_id", "status", "created_at", "updated_at"}, "created_at");
        const std::string order = detail::one_of(body, "sort_order", {"asc", "desc"}, "desc");
        // The threads' own fields filter and sort; only the threads shown read
        // their last checkpoint (every match does when `values` filters).
        std::vector<boost::json::object> all;
        auto threads = co_await store_.threads();
        for (auto& t : threads) {
            if (!t.contains("created_at")) continue; // a record only its runs made
            const auto m = t.contains("metadata") && t.at("metadata").is_object()
                               ? t.at("metadata").as_object()
                               : boost::json::object{};
            if (m.contains("__temporary")) continue;
            if (!detail::metadata_matches(m, meta)) continue;
            if (!status.empty() && t.at("status") != boost::json::value(status)) continue;
            if (!ids.empty() &&
                std::find(ids.begin(), ids.end(), detail::string_or(t, "thread_id", "")) == ids.end())
                continue;
            if (!values.empty()) {
                auto view = co_await thread_view(std::move(t));
                const auto* v = view.if_contains("values");
                if (v == nullptr || !detail::metadata_matches(v->as_object(), values)) continue;
                all.push_back(std::move(view));
            } else {
                all.push_back(std::move(t));
            }
        }
        if (count_only) co_return http_response::json(boost::json::value(all.size()));
        std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
            const std::string x = detail::string_or(a, sort_by, ""), y = detail::string_or(b, sort_by, "");
            return order == "asc" ? x < y : y < x;
        });
        if (values.empty())
            for (std::size_t i = offset; i < all.size() && i - offset < limit; ++i)
                all[i] = co_await thread_view(std::move(all[i]));
        co_return detail::page_of(all, offset, limit);
    }

    boost::asio::awaitable<http_response> get_state(http_request& q, std::string checkpoint_id) {
        const std::string id = q.param("thread_id");
        if (!co_await find_thread(id)) co_return no_thread(id);
        if (checkpoint_id.empty()) {
            auto c = co_await store_.last_checkpoint(id);
            co_return http_response::json(detail::thread_state(id, c ? &*c : nullptr));
        }
        const auto checkpoints = co_await store_.checkpoints(id);
        for (const auto& c : checkpoints)
            if (detail::string_or(c, "checkpoint_id", "") == checkpoint_id)
                co_return http_response::json(detail::thread_state(id, &c));
        co_return http_response::text(
            404, agentware::detail::format("Checkpoint {} not found on thread {}", checkpoint_id, id));
    }

    boost::asio::awaitable<http_response> update_state(http_request& q) {
        const std::string id = q.param("thread_id");
        auto body = detail::parse_body(q);
        if (!co_await find_thread(id)) co_return no_thread(id);
        if (co_await busy(id))
            co_return http_response::text(409, "Thread is busy: its state can change only between runs.");
        auto last = co_await store_.last_checkpoint(id);
        boost::json::object state = last ? last->at("values").as_object() : boost::json::object{};
        if (!state.contains("messages")) state["messages"] = boost::json::array{};
        if (const auto* v = detail::optional_field(
                body, "values", {boost::json::kind::object, boost::json::kind::array}, "an object")) {
            if (v->is_object()) {
                for (const auto& kv : v->get_object()) {
                    if (kv.key() == "messages") {
                        auto& ms = state["messages"].as_array();
                        for (auto& m :
                             read_run_input(boost::json::object{{"messages", kv.value()}}, "values")) {
                            if (m.id.empty()) m.id = new_uuid7();
                            auto as_json = boost::json::value_from(m);
                            auto same = std::find_if(ms.begin(), ms.end(), [&](const boost::json::value& x) {
                                return x.is_object() && x.as_object().contains("id") &&
                                       x.as_object().at("id") == boost::json::value(m.id);
                            });
                            if (same != ms.end())
                                *same = std::move(as_json);
                            else
                                ms.push_back(std::move(as_json));
                        }
                    } else if (kv.key().starts_with("__")) {
                        throw json_error("values." + std::string(kv.key()), "is the server's own key");
                    } else {
                        state[kv.key()] = kv.value();
                    }
                }
            }
        }
        const std::size_t step = co_await store_.checkpoint_count(id);
        checkpoint_record c{
            {"checkpoint_id", new_uuid7()},
            {"parent_checkpoint_id", last ? last->at("checkpoint_id") : nullptr},
            {"thread_id", id},
            {"created_at", iso_now()},
            {"step", step},
            {"source", "update"},
            {"values", state},
            {"metadata", boost::json::object{{"as_node", detail::string_or(body, "as_node", "")}}}};
        co_await store_.add_checkpoint(c);
        co_return http_response::json(
            boost::json::object{{"checkpoint", detail::checkpoint_ref(id, c.at("checkpoint_id"))}});
    }

    boost::asio::awaitable<http_response> history(http_request& q) {
        const std::string id = q.param("thread_id");
        auto body = q.method == "POST" ? detail::parse_body(q) : boost::json::object{};
        if (q.method == "GET")
            if (auto l = q.query_value("limit")) body["limit"] = std::atoll(l->c_str());
        if (!co_await find_thread(id)) co_return no_thread(id);
        const std::size_t limit = detail::count_field(body, "limit", 10);
        std::string before;
        if (const auto* b = body.if_contains("before"); b && b->is_object()) {
            // {"checkpoint_id"} (Python SDK) or a config {"configurable": {"checkpoint_id"}} (JS SDK).
            before = detail::string_or(b->get_object(), "checkpoint_id", "");
            if (const auto* c = b->get_object().if_contains("configurable");
                before.empty() && c && c->is_object())
                before = detail::string_or(c->get_object(), "checkpoint_id", "");
        } else if (b && b->is_string())
            before = b->get_string();
        boost::json::object meta;
        if (const auto* m =
                detail::optional_field(body, "metadata", {boost::json::kind::object}, "an object"))
            meta = m->get_object();
        auto all = co_await store_.checkpoints(id);
        boost::json::array out;
        bool skipping = !before.empty();
        for (auto it = all.rbegin(); it != all.rend() && out.size() < limit; ++it) {
            if (skipping) {
                if (detail::string_or(*it, "checkpoint_id", "") == before) skipping = false;
                continue;
            }
            auto s = detail::thread_state(id, &*it);
            if (!detail::metadata_matches(s.at("metadata").as_object(), meta)) continue;
            out.push_back(std::move(s));
        }
        co_return http_response::json(out);
    }

    static std::string run_location(const boost::json::object& run, bool stateless) {
        const std::string rid = detail::string_or(run, "run_id", "");
        if (stateless) return "/runs/" + rid;
        return "/threads/" + detail::string_or(run, "thread_id", "") + "/runs/" + rid;
    }

    boost::asio::awaitable<http_response> create_run(http_request& q, start how) {
        const bool stateless = q.param("thread_id").empty();
        auto body = detail::parse_body(q);
        detail::validate_run_create(body, true);
        if (how == start::wait && !body.contains("stream_mode"))
            body["stream_mode"] = boost::json::array{"values"};
        auto made = co_await runs_.create(q.param("thread_id"), body, stateless);
        if (auto* refused = std::get_if<run_refused>(&made))
            co_return http_response::text(refused->status, refused->message);
        auto& run = std::get<boost::json::object>(made);
        const std::string location = run_location(run, stateless);
        const std::string run_id = detail::string_or(run, "run_id", "");
        const bool cancel_on_disconnect = detail::string_or(body, "on_disconnect", "continue") == "cancel";
        http_response r;
        if (how == start::background) {
            r = http_response::json(run);
        } else {
            r.stream = runs_.stream(run_id);
            r.run_id = run_id;
            if (how == start::stream) {
                r.kind = http_response::mode::events;
                r.content_type = "text/event-stream";
                r.event_ids = !stateless;
            } else {
                r.kind = http_response::mode::await;
                r.content_type = "application/json";
                auto stream = r.stream;
                r.then = [stream] {
                    http_response done;
                    done.body = stream->outcome();
                    return done;
                };
            }
            if (cancel_on_disconnect) r.on_disconnect = [this, run_id] { runs_.cancel(run_id, "interrupt"); };
        }
        r.headers.emplace_back("content-location", location);
        co_return r;
    }

    boost::asio::awaitable<http_response> batch(http_request& q) {
        boost::system::error_code ec;
        auto v = boost::json::parse(q.body, ec);
        if (ec || !v.is_array()) throw json_error("", "the body must be a list of run requests");
        boost::json::array out;
        for (std::size_t i = 0; i < v.get_array().size(); ++i) {
            const auto* b = v.get_array()[i].if_object();
            if (b == nullptr) throw json_error(agentware::detail::format("[{}]", i), "must be an object");
            try {
                detail::validate_run_create(*b, true);
            } catch (const json_error& e) {
                throw e.within(agentware::detail::format("[{}]", i));
            }
            auto made = co_await runs_.create(std::string(), *b, true);
            if (auto* refused = std::get_if<run_refused>(&made))
                co_return http_response::text(refused->status, refused->message);
            out.push_back(std::get<boost::json::object>(made));
        }
        co_return http_response::json(out);
    }

    // The run named by the path, if it belongs to the path's thread.
    boost::asio::awaitable<std::optional<boost::json::object>> find_run(http_request& q,
                                                                        http_response& missing) {
        const std::string tid = q.param("thread_id"), rid = q.param("run_id");
        if (!tid.empty() && !co_await find_thread(tid)) {
            missing = no_thread(tid);
            co_return std::nullopt;
        }
        auto r = co_await store_.run(rid);
        if (!r || (!tid.empty() && detail::string_or(*r, "thread_id", "") != tid)) {
            missing = http_response::text(404, agentware::detail::format("Run with ID {} not found", rid));
            co_return std::nullopt;
        }
        co_return r;
    }

    boost::asio::awaitable<http_response> list_runs(http_request& q) {
        const std::string id = q.param("thread_id");
        if (!co_await find_thread(id)) co_return no_thread(id);
        std::size_t limit = 10, offset = 0;
        if (auto l = q.query_value("limit")) limit = std::size_t(std::max(0ll, std::atoll(l->c_str())));
        if (auto o = q.query_value("offset")) offset = std::size_t(std::max(0ll, std::atoll(o->c_str())));
        const auto status = q.query_value("status");
        auto all = co_await store_.runs(id);
        boost::json::array out;
        std::size_t skipped = 0;
        for (auto it = all.rbegin(); it != all.rend() && out.size() < limit; ++it) { // newest first
            if (status && detail::string_or(*it, "status", "") != *status) continue;
            if (skipped++ < offset) continue;
            out.push_back(*it);
        }
        co_return http_response::json(out);
    }

    boost::asio::awaitable<http_response> get_run(http_request& q) {
        http_response missing;
        auto r = co_await find_run(q, missing);
        if (!r) co_return missing;
        co_return http_response::json(*r);
    }

    boost::asio::awaitable<http_response> delete_run(http_request& q) {
        http_response missing;
        auto r = co_await find_run(q, missing);
        if (!r) co_return missing;
        const std::string rid = detail::string_or(*r, "run_id", "");
        if (runs_.active(rid) || unfinished(*r))
            co_return http_response::text(409, "Run is pending or running: cancel it first.");
        co_await store_.erase_run(rid);
        co_return http_response::empty(204);
    }

    boost::asio::awaitable<http_response> join(http_request& q) {
        http_response missing;
        auto run = co_await find_run(q, missing);
        if (!run) co_return missing;
        const std::string rid = detail::string_or(*run, "run_id", "");
        const std::string tid = detail::string_or(*run, "thread_id", "");
        auto stream = runs_.stream(rid);
        if (!stream && unfinished(*run)) stream = runs_.follow(*run); // another process runs it
        if (stream) {
            http_response r;
            r.kind = http_response::mode::await;
            r.stream = stream;
            r.then = [stream] {
                http_response done;
                done.body = stream->outcome();
                return done;
            };
            if (q.query_value("cancel_on_disconnect").value_or("0") == "1" ||
                q.query_value("cancel_on_disconnect").value_or("") == "true")
                r.on_disconnect = [this, rid] { runs_.cancel(rid, "interrupt"); };
            co_return r;
        }
        // Long finished: the thread's values as they are now.
        auto c = co_await store_.last_checkpoint(tid);
        co_return http_response::json(detail::ended_outcome(*run, c));
    }

    boost::asio::awaitable<http_response> join_stream(http_request& q) {
        http_response missing;
        auto run = co_await find_run(q, missing);
        if (!run) co_return missing;
        const std::string rid = detail::string_or(*run, "run_id", "");
        std::size_t from = 0;
        const std::string last = q.header("last-event-id");
        if (!last.empty()) {
            std::size_t n = 0;
            const auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), n);
            if (ec != std::errc{} || end != last.data() + last.size())
                co_return http_response::text(
                    422, agentware::detail::format(
                             "Last-Event-ID must be the id of an event of this run (a number), "
                             "not \"{}\"",
                             last.substr(0, 64)));
            from = n + 1;
        }
        http_response r;
        r.kind = http_response::mode::events;
        r.content_type = "text/event-stream";
        r.stream = runs_.stream(rid);
        if (!r.stream) r.stream = runs_.follow(*run); // another process runs it, or ran it
        if (!r.stream) {                              // nothing kept: an empty, finished stream
            r.stream = std::make_shared<run_stream>();
            r.stream->close();
        }
        r.from = from;
        r.run_id = rid;
        r.event_ids = !q.param("thread_id").empty();
        if (q.query_value("cancel_on_disconnect").value_or("0") == "1" ||
            q.query_value("cancel_on_disconnect").value_or("") == "true")
            r.on_disconnect = [this, rid] { runs_.cancel(rid, "interrupt"); };
        r.headers.emplace_back("content-location", run_location(*run, q.param("thread_id").empty()));
        co_return r;
    }

    static bool truthy(const std::optional<std::string>& v) { return v && (*v == "1" || *v == "true"); }

    static bool unfinished(const boost::json::object& run) {
        const std::string s = detail::string_or(run, "status", "");
        return s == "pending" || s == "running";
    }

    // A run of the thread is pending or running, here or (a shared queue) in another process.
    boost::asio::awaitable<bool> busy(std::string thread_id) {
        if (runs_.thread_busy(thread_id)) co_return true;
        auto all = co_await store_.runs(thread_id);
        co_return std::any_of(all.begin(), all.end(), [](const auto& r) { return unfinished(r); });
    }

    boost::asio::awaitable<http_response> cancel(http_request& q) {
        http_response missing;
        auto run = co_await find_run(q, missing);
        if (!run) co_return missing;
        const std::string rid = detail::string_or(*run, "run_id", "");
        const std::string action = q.query_value("action").value_or("interrupt");
        if (action != "interrupt" && action != "rollback")
            co_return http_response::text(422, "action must be interrupt or rollback");
        const std::string reason = q.query_value("reason").value_or("");
        if (!reason.empty() && action != "interrupt")
            co_return http_response::text(422, "a cancel reason goes only with action=interrupt");
        auto stream = runs_.stream(rid);
        if (!co_await runs_.request_cancel(rid, action, reason))
            co_return http_response::text(409,
                                          agentware::detail::format("Run {} is not pending or running", rid));
        if (!truthy(q.query_value("wait")) || !stream) co_return http_response::empty(202);
        http_response r;
        r.kind = http_response::mode::await;
        r.stream = stream;
        r.keep_alive = false;
        r.then = [] { return http_response::empty(204); };
        co_return r;
    }

    boost::asio::awaitable<http_response> bulk_cancel(http_request& q) {
        auto body = detail::parse_body(q);
        const std::string action = q.query_value("action").value_or("interrupt");
        const std::string tid = detail::string_or(body, "thread_id", "");
        const std::string status = detail::one_of(body, "status", {"pending", "running", "all"}, "");
        std::vector<std::string> ids;
        if (const auto* v =
                detail::optional_field(body, "run_ids", {boost::json::kind::array}, "a list of run ids"))
            for (const auto& i : v->get_array())
                if (i.is_string()) ids.emplace_back(i.get_string());
        std::vector<boost::json::object> thread_runs;
        if (!tid.empty()) thread_runs = co_await store_.runs(tid);
        if (!tid.empty())
            for (const auto& r : thread_runs)
                if (ids.empty() ||
                    std::find(ids.begin(), ids.end(), detail::string_or(r, "run_id", "")) != ids.end()) {
                    const std::string s = detail::string_or(r, "status", "");
                    if (status.empty() || status == "all" || s == status)
                        co_await runs_.request_cancel(detail::string_or(r, "run_id", ""), action);
                }
        if (tid.empty())
            for (const auto& id : ids)
                co_await runs_.request_cancel(id, action);
        co_return http_response::empty(204);
    }

    run_manager& runs_;
    store& store_;
    std::string started_ = iso_now();
};

} // namespace agentware::server

#endif
