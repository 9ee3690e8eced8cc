#ifndef AGENTWARE_SERVER_DEERFLOW_GATEWAY_HPP
#define AGENTWARE_SERVER_DEERFLOW_GATEWAY_HPP

// DeerFlow's gateway: the REST routes its web UI calls beside the LangGraph
// API (docs/server.md, "DeerFlow's gateway"), with DeerFlow's shapes, status
// codes and `{"detail": "..."}` errors, over agentware's own pieces:
//
//   /api/models, /api/features      the configuration's `models` (no keys, no URLs)
//   /api/skills...                  the skill folders (load_skills) and their
//                                   switches in extensions_config.json
//   /api/memory...                  the memory files (memory_storage), the
//                                   ones the memory middleware writes
//   /api/threads/{id}/uploads...,   the thread's folders (thread_files.hpp)
//   /api/threads/{id}/artifacts/...
//   /api/mcp/config                 extensions_config.json's MCP servers, secrets masked
//
// Files the routes change (extensions_config.json, memory) are written whole
// to a temporary file and renamed over the old one. Needs yaml-cpp (SKILL.md
// front matter), as <agentware/skills/skills.hpp> does.
//
//     auto gateway = add_deerflow_gateway(server.routes(), {.config = sections, .config_path = path});

#include <agentware/detail/format.hpp>
#include <agentware/detail/iso_time.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/mcp/config.hpp>
#include <agentware/memory/options.hpp>
#include <agentware/memory/storage.hpp>
#include <agentware/memory/updater.hpp>
#include <agentware/server/detail/extensions_file.hpp>
#include <agentware/server/http.hpp>
#include <agentware/server/thread_files.hpp>
#include <agentware/skills/skills.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace agentware::server {

struct deerflow_gateway_options {
    /// config.yaml's sections: `models`, `token_usage`, `skills`, `memory`,
    /// `uploads` and `thread_data` are read.
    boost::json::object config;
    /// The configuration file; a relative `skills.path` is taken from its folder.
    std::string config_path;
    /// extensions_config.json, which the skills and MCP routes rewrite; "":
    /// beside config_path (or ./extensions_config.json without one).
    std::string extensions_path;
    /// The user whose memory and threads these are (DeerFlow without accounts: "default").
    std::string user_id = "default";
    /// Called with the file after a route rewrote extensions_config.json (a
    /// skill or an MCP server switched), to reload what depends on it.
    std::function<void(const std::filesystem::path&)> on_extensions_changed;
};

namespace detail {

/// DeerFlow's test for a configuration key that holds a secret (`api_key`,
/// `clientSecret`, `X-Auth-Token`, ...): camelCase split, then a word of the list.
inline bool is_secret_key(std::string_view key) {
    std::string snake;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const char c = key[i];
        const bool upper = c >= 'A' && c <= 'Z';
        if (upper && i > 0) {
            const char prev = key[i - 1];
            const bool next_lower = i + 1 < key.size() && key[i + 1] >= 'a' && key[i + 1] <= 'z';
            if ((prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') || next_lower) snake += '_';
        }
        snake += std::isalnum(static_cast<unsigned char>(c))
                     ? char(std::tolower(static_cast<unsigned char>(c)))
                     : '_';
    }
    static const std::regex words(
        "(^|_)(api_key|apikey|access_key|private_key|client_secret|secret|token|password|"
        "passwd|credential|credentials|authorization|bearer)(_|$)");
    return std::regex_search(snake, words);
}

inline constexpr std::string_view masked_value = "***";

/// Values of secret keys replaced by "***", at any depth.
inline boost::json::value mask_secret_keys(const boost::json::value& v) {
    if (const auto* o = v.if_object()) {
        boost::json::object out;
        for (const auto& kv : *o)
            out[kv.key()] =
                is_secret_key(kv.key()) ? boost::json::value(masked_value) : mask_secret_keys(kv.value());
        return out;
    }
    if (const auto* a = v.if_array()) {
        boost::json::array out;
        for (const auto& e : *a)
            out.push_back(mask_secret_keys(e));
        return out;
    }
    return v;
}

inline const boost::json::object* object_at(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v ? v->if_object() : nullptr;
}

inline std::string string_at(const boost::json::object& o, std::string_view key, std::string fallback = {}) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : fallback;
}

inline bool bool_at(const boost::json::object& o, std::string_view key, bool fallback = false) {
    const auto* v = o.if_contains(key);
    return v && v->is_bool() ? v->get_bool() : fallback;
}

inline boost::json::object parse_json_body(const http_request& q) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(q.body, ec);
    if (ec) throw json_error("", agentware::detail::format("the body is not valid JSON: {}", ec.message()));
    if (!v.is_object()) agentware::detail::json_type_error("", "an object", v);
    return std::move(v.get_object());
}

} // namespace detail

class deerflow_gateway {
public:
    explicit deerflow_gateway(deerflow_gateway_options o)
        : options_(std::move(o)), files_(files_options(options_)),
          memory_(memory_options_of(options_.config)),
          memory_storage_(agentware::detail::resolve_base_dir(memory_.backend_config.storage_path)) {
        namespace fs = std::filesystem;
        if (const auto* s = options_.config.if_contains("skills"); s && !s->is_null()) {
            skills_options so = json_read_as<skills_options>(*s, "skills");
            if (!options_.config_path.empty() && fs::path(so.path).is_relative())
                so.path =
                    (fs::path(options_.config_path).parent_path() / so.path).lexically_normal().string();
            skills_ = std::move(so);
        }
        extensions_ = options_.extensions_path;
        if (extensions_.empty())
            extensions_ = options_.config_path.empty()
                              ? fs::path("extensions_config.json")
                              : fs::path(options_.config_path).parent_path() / "extensions_config.json";
        extensions_ =
            fs::absolute(extensions_).lexically_normal(); // its folder is where the temporary file goes
    }

    const std::filesystem::path& extensions_path() const noexcept { return extensions_; }
    server::thread_files& thread_files() noexcept { return files_; }

    /// Puts the routes on `r`; `keep_alive` (the gateway's owner) is held by them.
    void add_routes(router& r, std::shared_ptr<const void> keep_alive = {}) {
        auto add = [&](std::string method, std::string pattern,
                       http_response (deerflow_gateway::*f)(http_request&)) {
            r.add(std::move(method), std::move(pattern), detail::gateway_handler(this, f, keep_alive));
        };
        add("GET", "/api/models", &deerflow_gateway::models);
        add("GET", "/api/models/{name}", &deerflow_gateway::model);
        add("GET", "/api/features", &deerflow_gateway::features);
        add("GET", "/api/skills", &deerflow_gateway::skills);
        add("GET", "/api/skills/{name}", &deerflow_gateway::skill);
        add("PUT", "/api/skills/{name}", &deerflow_gateway::put_skill);
        add("POST", "/api/skills/{name}/enable", &deerflow_gateway::enable_skill);
        add("POST", "/api/skills/{name}/disable", &deerflow_gateway::disable_skill);
        add("GET", "/api/memory", &deerflow_gateway::memory);
        add("DELETE", "/api/memory", &deerflow_gateway::clear_memory);
        add("POST", "/api/memory/reload", &deerflow_gateway::memory);
        add("GET", "/api/memory/export", &deerflow_gateway::memory);
        add("POST", "/api/memory/import", &deerflow_gateway::import_memory);
        add("POST", "/api/memory/facts", &deerflow_gateway::create_fact);
        add("PATCH", "/api/memory/facts/{fact_id}", &deerflow_gateway::patch_fact);
        add("DELETE", "/api/memory/facts/{fact_id}", &deerflow_gateway::delete_fact);
        add("GET", "/api/memory/config", &deerflow_gateway::memory_config);
        add("GET", "/api/memory/status", &deerflow_gateway::memory_status);
        add("GET", "/api/mcp/config", &deerflow_gateway::mcp_config);
        add("PUT", "/api/mcp/config", &deerflow_gateway::put_mcp_config);
        add("PATCH", "/api/mcp/config", &deerflow_gateway::patch_mcp_config);
        files_.add_routes(r, keep_alive);
    }

private:
    static thread_files_options files_options(const deerflow_gateway_options& o) {
        thread_files_options f;
        f.user_id = o.user_id;
        if (const auto* td = detail::object_at(o.config, "thread_data"))
            f.base_dir = detail::string_at(*td, "base_dir");
        // DeerFlow's `uploads:` limits (with its earlier names); a value that is not a positive number keeps
        // the default.
        if (const auto* u = detail::object_at(o.config, "uploads")) {
            auto limit = [&](std::string_view key, std::string_view legacy, auto& out) {
                const auto* v = u->if_contains(key);
                if ((!v || v->is_null()) && !legacy.empty()) v = u->if_contains(legacy);
                if (v && v->is_number() && v->to_number<double>() >= 1)
                    out = static_cast<std::remove_reference_t<decltype(out)>>(v->to_number<double>());
            };
            limit("max_files", "max_file_count", f.limits.max_files);
            limit("max_file_size", "max_single_file_size", f.limits.max_file_size);
            limit("max_total_size", "", f.limits.max_total_size);
        }
        return f;
    }

    static memory_options memory_options_of(const boost::json::object& config) {
        const auto* m = config.if_contains("memory");
        if (!m || m->is_null()) return {};
        if (m->is_bool()) {
            memory_options o;
            o.enabled = m->get_bool();
            return o;
        }
        return boost::json::value_to<memory_options>(*m);
    }

    // ---- models, features -------------------------------------------------

    // What the UI may see of a model: never its keys, URLs or other settings.
    static boost::json::object model_json(const boost::json::object& m) {
        auto optional_string = [&](std::string_view key) -> boost::json::value {
            const auto* v = m.if_contains(key);
            return v && v->is_string() ? boost::json::value(v->get_string()) : boost::json::value(nullptr);
        };
        return boost::json::object{
            {"name", detail::string_at(m, "name")},
            {"model", detail::string_at(m, "model")},
            {"display_name", optional_string("display_name")},
            {"description", optional_string("description")},
            {"supports_thinking", detail::bool_at(m, "supports_thinking")},
            {"supports_reasoning_effort", detail::bool_at(m, "supports_reasoning_effort")},
            {"supports_vision", detail::bool_at(m, "supports_vision")}};
    }

    std::vector<const boost::json::object*> configured_models() const {
        std::vector<const boost::json::object*> out;
        if (const auto* list = options_.config.if_contains("models"); list && list->is_array())
            for (const auto& m : list->get_array())
                if (const auto* o = m.if_object(); o && o->contains("name")) out.push_back(o);
        return out;
    }

    http_response models(http_request&) {
        boost::json::array list;
        for (const auto* m : configured_models())
            list.push_back(model_json(*m));
        bool token_usage = false;
        if (const auto* t = detail::object_at(options_.config, "token_usage"))
            token_usage = detail::bool_at(*t, "enabled");
        return http_response::json(
            boost::json::object{{"models", std::move(list)}, {"token_usage", {{"enabled", token_usage}}}});
    }

    http_response model(http_request& q) {
        const std::string name = q.param("name");
        for (const auto* m : configured_models())
            if (detail::string_at(*m, "name") == name) return http_response::json(model_json(*m));
        return http_response::detail(404, agentware::detail::format("Model '{}' not found", name));
    }

    // The custom-agent API, live browser control and MCP tasks are not served.
    http_response features(http_request&) {
        return http_response::json(boost::json::object{{"agents_api", {{"enabled", false}}},
                                                       {"browser_control", {{"enabled", false}}},
                                                       {"mcp_tasks", {{"enabled", false}}}});
    }

    // ---- skills -----------------------------------------------------------

    skill_catalog load_catalog() const {
        if (!skills_) return {};
        boost::json::value ext = boost::json::value(detail::read_extensions_file(extensions_));
        return load_skills(*skills_, read_skill_states(ext));
    }

    static boost::json::object skill_json(const agentware::skill& s) {
        boost::json::object o{
            {"name", s.name},
            {"description", s.description},
            {"license", s.license.empty() ? boost::json::value(nullptr) : boost::json::value(s.license)},
            {"category", skill_category_name(s.category)},
            {"enabled", s.enabled},
            {"editable", s.category == skill_category::custom_skill}};
        return o;
    }

    static std::string clean_skill_name(std::string name) {
        std::erase(name, '\r');
        std::erase(name, '\n');
        return name;
    }

    http_response skills(http_request&) {
        boost::json::array list;
        for (const auto& s : load_catalog().skills)
            list.push_back(skill_json(s));
        return http_response::json(boost::json::object{{"skills", std::move(list)}});
    }

    http_response skill(http_request& q) {
        const std::string name = clean_skill_name(q.param("name"));
        for (const auto& s : load_catalog().skills)
            if (s.name == name) return http_response::json(skill_json(s));
        return http_response::detail(404, agentware::detail::format("Skill '{}' not found", name));
    }

    http_response set_skill(const std::string& raw_name, bool enabled) {
        const std::string name = clean_skill_name(raw_name);
        std::lock_guard lock(extensions_mutex_);
        auto catalog = load_catalog();
        const auto it = std::find_if(catalog.skills.begin(), catalog.skills.end(),
                                     [&](const agentware::skill& s) { return s.name == name; });
        if (it == catalog.skills.end())
            return http_response::detail(404, agentware::detail::format("Skill '{}' not found", name));
        boost::json::object doc = detail::read_extensions_file(extensions_);
        auto& states = doc["skills"];
        if (!states.is_object()) states = boost::json::object{};
        states.get_object()[name] = boost::json::object{{"enabled", enabled}};
        detail::write_extensions_file(extensions_, doc);
        changed();
        it->enabled = enabled;
        return http_response::json(skill_json(*it));
    }

    http_response put_skill(http_request& q) {
        const auto body = detail::parse_json_body(q);
        const auto* enabled = body.if_contains("enabled");
        if (!enabled) throw json_error("enabled", "required");
        return set_skill(q.param("name"), json_read_as<bool>(*enabled, "enabled"));
    }
    http_response enable_skill(http_request& q) { return set_skill(q.param("name"), true); }
    http_response disable_skill(http_request& q) { return set_skill(q.param("name"), false); }

    void changed() {
        if (options_.on_extensions_changed) options_.on_extensions_changed(extensions_);
    }

    // ---- memory -----------------------------------------------------------

    // The lead agent's facts are kept under the default agent's name.
    static constexpr std::string_view memory_agent = "";

    std::optional<http_response> memory_unsupported(std::string_view label) const {
        if (memory_.manager_class != "noop") return std::nullopt;
        return http_response::detail(
            501, agentware::detail::format("Operation '{}' not supported by memory backend 'noop'.", label));
    }

    // Runs `change` on the stored memory and saves it (an answer from `change`
    // is sent instead, nothing saved); another writer in between is a 409.
    template <class Change>
    http_response change_memory(std::string_view label, std::string_view failure, Change change) {
        if (auto no = memory_unsupported(label)) return *no;
        try {
            user_memory m = memory_storage_.load(options_.user_id, memory_agent);
            if (std::optional<http_response> refused = change(m)) return *refused;
            memory_storage_.save(options_.user_id, memory_agent, m);
            return http_response::json(memory_view(memory_storage_.load(options_.user_id, memory_agent)));
        } catch (const memory_revision_conflict&) {
            return http_response::detail(409, "Memory changed concurrently; reload and retry.");
        } catch (const memory_storage_error&) {
            return http_response::detail(500, "Stored memory data is corrupted.");
        } catch (const std::filesystem::filesystem_error&) {
            return http_response::detail(500, std::string(failure));
        }
    }

    http_response memory(http_request&) {
        if (auto no = memory_unsupported("get memory")) return *no;
        try {
            return http_response::json(memory_view(memory_storage_.load(options_.user_id, memory_agent)));
        } catch (const memory_storage_error&) {
            return http_response::detail(500, "Stored memory data is corrupted.");
        }
    }

    http_response clear_memory(http_request&) {
        return change_memory("clear memory", "Failed to clear memory data.", [](user_memory& m) {
            const auto revision = m.revision;
            m = user_memory{};
            m.revision = revision;
            return std::optional<http_response>();
        });
    }

    static std::string now_iso() { return agentware::detail::iso_utc(std::chrono::system_clock::now()); }

    http_response import_memory(http_request& q) {
        const auto doc = detail::parse_json_body(q);
        user_memory incoming;
        auto summaries = [&](std::string_view group, const auto& keys, auto& out) {
            const auto* g = doc.if_contains(group);
            if (!g || g->is_null()) return;
            if (!g->is_object()) agentware::detail::json_type_error(std::string(group), "an object", *g);
            for (std::size_t i = 0; i < keys.size(); ++i)
                if (const auto* s = detail::object_at(g->get_object(), keys[i])) {
                    out[i].summary = detail::string_at(*s, "summary");
                    out[i].updated_at = detail::string_at(*s, "updatedAt");
                }
        };
        summaries("user", memory_user_keys, incoming.user);
        summaries("history", memory_history_keys, incoming.history);
        if (const auto* facts = doc.if_contains("facts"); facts && !facts->is_null()) {
            if (!facts->is_array()) agentware::detail::json_type_error("facts", "an array", *facts);
            std::set<std::string> ids;
            for (std::size_t i = 0; i < facts->get_array().size(); ++i) {
                const auto& f = facts->get_array()[i];
                if (!f.is_object())
                    agentware::detail::json_type_error(agentware::detail::format("facts[{}]", i), "an object",
                                                       f);
                memory_fact fact = agentware::detail::fact_from_v1(f.get_object());
                if (agentware::detail::trim(fact.content).empty()) continue;
                if (!agentware::detail::is_valid_fact_id(fact.id) || ids.contains(fact.id))
                    fact.id = agentware::detail::new_fact_id();
                if (fact.created_at.empty()) fact.created_at = now_iso();
                ids.insert(fact.id);
                incoming.facts.push_back(std::move(fact));
            }
        }
        return change_memory("import memory", "Failed to import memory data.", [&](user_memory& m) {
            incoming.revision = m.revision;
            m = std::move(incoming);
            return std::optional<http_response>();
        });
    }

    // {content, category, confidence}: the checks DeerFlow makes (400), a bad type is a 422.
    struct fact_fields {
        std::optional<std::string> content, category;
        std::optional<double> confidence;
    };
    static fact_fields read_fact_fields(const boost::json::object& body) {
        fact_fields f;
        auto opt = [&](std::string_view key) {
            const auto* v = body.if_contains(key);
            return v && !v->is_null() ? v : nullptr;
        };
        if (const auto* v = opt("content")) f.content = json_read_as<std::string>(*v, "content");
        if (const auto* v = opt("category")) f.category = json_read_as<std::string>(*v, "category");
        if (const auto* v = opt("confidence")) f.confidence = json_read_as<double>(*v, "confidence");
        return f;
    }
    static std::optional<http_response> check_fact_fields(const fact_fields& f) {
        if (f.content && agentware::detail::trim(*f.content).empty())
            return http_response::detail(400, "Memory fact content cannot be empty.");
        if (f.confidence && !(*f.confidence >= 0 && *f.confidence <= 1))
            return http_response::detail(400, "Invalid confidence value; must be between 0 and 1.");
        return std::nullopt;
    }

    http_response create_fact(http_request& q) {
        fact_fields f = read_fact_fields(detail::parse_json_body(q));
        if (!f.content) throw json_error("content", "required");
        if (auto bad = check_fact_fields(f)) return *bad;
        return change_memory("create fact", "Failed to create memory fact.", [&](user_memory& m) {
            const std::string content(agentware::detail::trim(*f.content));
            for (const auto& existing : m.facts)
                if (agentware::detail::trim(existing.content) == content)
                    return std::optional<http_response>(
                        http_response::detail(409, "A fact with the same content already exists."));
            memory_fact fact;
            fact.id = agentware::detail::new_fact_id();
            fact.content = content;
            fact.category = f.category.value_or("context");
            fact.confidence = f.confidence.value_or(0.5);
            fact.created_at = now_iso();
            fact.updated_at = fact.created_at;
            fact.source_type = "manual";
            fact.source = "manual";
            m.facts.push_back(std::move(fact));
            return std::optional<http_response>();
        });
    }

    std::optional<http_response> fact_not_found(const std::string& id) const {
        return http_response::detail(404, agentware::detail::format("Memory fact '{}' not found.", id));
    }

    http_response patch_fact(http_request& q) {
        const std::string id = q.param("fact_id");
        fact_fields f = read_fact_fields(detail::parse_json_body(q));
        if (auto bad = check_fact_fields(f)) return *bad;
        return change_memory("update fact", "Failed to update memory fact.", [&](user_memory& m) {
            auto it = std::find_if(m.facts.begin(), m.facts.end(),
                                   [&](const memory_fact& x) { return x.id == id; });
            if (it == m.facts.end()) return fact_not_found(id);
            if (f.content) it->content = std::string(agentware::detail::trim(*f.content));
            if (f.category) it->category = *f.category;
            if (f.confidence) it->confidence = *f.confidence;
            it->updated_at = now_iso();
            return std::optional<http_response>();
        });
    }

    http_response delete_fact(http_request& q) {
        const std::string id = q.param("fact_id");
        return change_memory("delete fact", "Failed to delete memory fact.", [&](user_memory& m) {
            const auto before = m.facts.size();
            std::erase_if(m.facts, [&](const memory_fact& x) { return x.id == id; });
            if (m.facts.size() == before) return fact_not_found(id);
            return std::optional<http_response>();
        });
    }

    boost::json::object memory_config_json() const {
        boost::json::object o = boost::json::value_from(memory_).as_object();
        // The memory model's settings may hold a key.
        if (auto* b = o.if_contains("backend_config"); b && b->is_object()) *b = detail::mask_secret_keys(*b);
        return o;
    }

    http_response memory_config(http_request&) { return http_response::json(memory_config_json()); }

    http_response memory_status(http_request& q) {
        http_response data = memory(q);
        if (data.status != 200) return data;
        return http_response::json(
            boost::json::object{{"config", memory_config_json()}, {"data", boost::json::parse(data.body)}});
    }

    // ---- MCP servers --------------------------------------------------------

    // A server as the UI sees it: DeerFlow's defaults filled in, env and header
    // values masked, OAuth secrets dropped, other secret-named keys masked.
    static boost::json::object masked_server(const boost::json::object& raw) {
        boost::json::object out;
        for (const auto& kv : raw)
            out[kv.key()] = detail::is_secret_key(kv.key()) ? boost::json::value(detail::masked_value)
                                                            : detail::mask_secret_keys(kv.value());
        auto fill = [&](std::string_view key, boost::json::value v) {
            if (!out.contains(key)) out[key] = std::move(v);
        };
        fill("enabled", true);
        fill("type", "stdio");
        fill("command", nullptr);
        fill("args", boost::json::array{});
        fill("url", nullptr);
        fill("description", "");
        for (std::string_view key : {"env", "headers"}) {
            boost::json::object masked;
            if (const auto* m = detail::object_at(raw, key))
                for (const auto& kv : *m)
                    masked[kv.key()] = detail::masked_value;
            out[key] = std::move(masked);
        }
        if (const auto* oauth = detail::object_at(raw, "oauth")) {
            boost::json::object o = *oauth;
            o["client_secret"] = nullptr;
            o["refresh_token"] = nullptr;
            out["oauth"] = std::move(o);
        }
        return out;
    }

    static boost::json::object servers_of(const boost::json::object& doc) {
        if (const auto* s = detail::object_at(doc, "mcpServers")) return *s;
        return {};
    }

    static http_response servers_response(const boost::json::object& servers) {
        boost::json::object masked;
        for (const auto& kv : servers)
            if (const auto* o = kv.value().if_object()) masked[kv.key()] = masked_server(*o);
        return http_response::json(boost::json::object{{"mcp_servers", std::move(masked)}});
    }

    http_response mcp_config(http_request&) {
        return servers_response(servers_of(detail::read_extensions_file(extensions_)));
    }

    // The API is a boundary a browser session can reach: a stdio server it
    // adds may only start an allowed launcher (DeerFlow's npx and uvx, more
    // with DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST), without flags that make
    // it run a string, nor variables that load code at start.
    static std::optional<http_response> check_stdio_server(const std::string& name,
                                                           const boost::json::object& s) {
        std::string type = detail::string_at(s, "type", "stdio");
        for (auto& c : type)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (type != "stdio") return std::nullopt;
        const std::string command = detail::string_at(s, "command");
        if (command.empty() || command.find_first_not_of(" \t") == std::string::npos)
            return http_response::detail(
                400,
                agentware::detail::format("MCP server '{}' with stdio transport requires a command.", name));
        if (command.find_first_of("/\\ \t;|&`$<>\n\r") != std::string::npos)
            return http_response::detail(
                400, agentware::detail::format("MCP server '{}' command must be a single executable name; "
                                               "put parameters in args instead.",
                                               name));
        std::set<std::string> allowed{"npx", "uvx"};
        if (const char* extra = std::getenv("DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST"))
            for (std::string_view rest = extra; !rest.empty();) {
                const auto comma = rest.find(',');
                const auto item = agentware::detail::trim(rest.substr(0, comma));
                if (!item.empty()) allowed.emplace(item);
                rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
            }
        if (!allowed.contains(command)) {
            std::string list;
            for (const auto& a : allowed)
                list += (list.empty() ? "" : ", ") + a;
            return http_response::detail(
                400, agentware::detail::format(
                         "MCP server '{}' uses disallowed stdio command '{}'. Allowed commands: {}. "
                         "Configure DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST to extend this list.",
                         name, command, list));
        }
        if (const auto* args = s.if_contains("args"); args && args->is_array())
            for (const auto& a : args->get_array()) {
                if (!a.is_string()) break;
                const std::string_view arg = a.get_string();
                if (arg == "--" || !arg.starts_with('-')) break; // the package: its own arguments follow
                const std::string_view flag = arg.substr(0, arg.find('='));
                if (flag == "-c" || flag == "--call" || flag == "-e" || flag == "--eval" || flag == "--exec")
                    return http_response::detail(
                        400, agentware::detail::format(
                                 "MCP server '{}' passes '{}' to '{}', which would run arbitrary "
                                 "code. Point the server at a package or module instead.",
                                 name, flag, command));
            }
        if (const auto* env = detail::object_at(s, "env"))
            for (const auto& kv : *env) {
                std::string var(agentware::detail::trim(kv.key()));
                for (auto& c : var)
                    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                static const std::set<std::string, std::less<>> injecting{
                    "BASH_ENV",        "ENV",
                    "LD_PRELOAD",      "LD_AUDIT",
                    "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES",
                    "NODE_OPTIONS",    "PYTHONSTARTUP",
                    "PYTHONPATH",      "PERL5OPT",
                    "RUBYOPT"};
                if (injecting.contains(var))
                    return http_response::detail(
                        400, agentware::detail::format(
                                 "MCP server '{}' sets environment variable '{}', which would run "
                                 "arbitrary code at process startup.",
                                 name, std::string(kv.key())));
            }
        return std::nullopt;
    }

    // The incoming server with the values GET masked put back from the file's.
    static std::variant<boost::json::object, http_response>
    keep_secrets(const boost::json::object& incoming, const boost::json::object* existing) {
        boost::json::object out = incoming;
        for (std::string_view key : {"env", "headers"}) {
            const auto* in = detail::object_at(incoming, key);
            if (!in) continue;
            const auto* old = existing ? detail::object_at(*existing, key) : nullptr;
            boost::json::object merged;
            for (const auto& kv : *in) {
                if (kv.value().is_string() && kv.value().get_string() == detail::masked_value) {
                    const auto* was = old ? old->if_contains(kv.key()) : nullptr;
                    if (!was)
                        return http_response::detail(
                            400, agentware::detail::format(
                                     "Cannot set {} '{}' to masked value '***'; provide a real value.",
                                     key == "env" ? "env key" : "header", std::string(kv.key())));
                    merged[kv.key()] = *was;
                } else {
                    merged[kv.key()] = kv.value();
                }
            }
            out[key] = std::move(merged);
        }
        if (auto* oauth = out.if_contains("oauth"); oauth && oauth->is_object()) {
            const auto* old = existing ? detail::object_at(*existing, "oauth") : nullptr;
            for (std::string_view key : {"client_secret", "refresh_token"}) {
                auto& o = oauth->get_object();
                const auto* v = o.if_contains(key);
                if (!v || v->is_null()) { // null: keep the stored one
                    if (old && old->contains(key))
                        o[key] = old->at(key);
                    else
                        o.erase(key);
                } else if (v->is_string() && v->get_string().empty()) { // "": clear it
                    o.erase(key);
                }
            }
        }
        for (auto& kv : out) // other secret-named keys sent back masked
            if (kv.key() != "env" && kv.key() != "headers" && kv.value().is_string() &&
                kv.value().get_string() == detail::masked_value && detail::is_secret_key(kv.key())) {
                const auto* was = existing ? existing->if_contains(kv.key()) : nullptr;
                if (!was)
                    return http_response::detail(
                        400, agentware::detail::format("Cannot set extra config key '{}' to "
                                                       "masked value '***'; provide a real value.",
                                                       std::string(kv.key())));
                kv.value() = *was;
            }
        return out;
    }

    http_response put_mcp_config(http_request& q) {
        const auto body = detail::parse_json_body(q);
        const auto* servers = body.if_contains("mcp_servers");
        if (!servers) throw json_error("mcp_servers", "required");
        if (!servers->is_object())
            agentware::detail::json_type_error("mcp_servers", "an object of servers by name", *servers);
        std::lock_guard lock(extensions_mutex_);
        boost::json::object doc = detail::read_extensions_file(extensions_);
        const boost::json::object existing = servers_of(doc);
        boost::json::object merged;
        for (const auto& kv : servers->get_object()) {
            const std::string name(kv.key());
            if (!kv.value().is_object())
                agentware::detail::json_type_error("mcp_servers." + name, "an object", kv.value());
            const auto& incoming = kv.value().get_object();
            if (auto bad = check_stdio_server(name, incoming)) return *bad;
            auto kept = keep_secrets(incoming, detail::object_at(existing, name));
            if (auto* refused = std::get_if<http_response>(&kept)) return *refused;
            auto& server = std::get<boost::json::object>(kept);
            // GET fills in DeerFlow's defaults; a null is "not set", and is not written.
            for (auto it = server.begin(); it != server.end();)
                it = it->value().is_null() ? server.erase(it) : std::next(it);
            // What is written must be what the lead agent can start from.
            try {
                (void)mcp::read_server_config(name, server, "mcp_servers." + name);
            } catch (const json_error& e) {
                return http_response::detail(400, e.what());
            }
            merged[name] = std::move(server);
        }
        doc["mcpServers"] = merged;
        detail::write_extensions_file(extensions_, doc);
        changed();
        return servers_response(merged);
    }

    http_response patch_mcp_config(http_request& q) {
        const auto body = detail::parse_json_body(q);
        const auto* name_v = body.if_contains("server_name");
        const auto* enabled_v = body.if_contains("enabled");
        if (!name_v) throw json_error("server_name", "required");
        if (!enabled_v) throw json_error("enabled", "required");
        const std::string name = json_read_as<std::string>(*name_v, "server_name");
        const bool enabled = json_read_as<bool>(*enabled_v, "enabled");
        std::lock_guard lock(extensions_mutex_);
        boost::json::object doc = detail::read_extensions_file(extensions_);
        auto* servers = doc.if_contains("mcpServers");
        auto* server = servers && servers->is_object() ? servers->get_object().if_contains(name) : nullptr;
        if (!server || !server->is_object())
            return http_response::detail(404, agentware::detail::format("MCP server '{}' not found", name));
        if (enabled)
            if (auto bad = check_stdio_server(name, server->get_object())) return *bad;
        server->get_object()["enabled"] = enabled;
        detail::write_extensions_file(extensions_, doc);
        changed();
        return servers_response(servers->get_object());
    }

    deerflow_gateway_options options_;
    server::thread_files files_;
    memory_options memory_;
    memory_storage memory_storage_;
    std::optional<skills_options> skills_;
    std::filesystem::path extensions_;
    std::mutex extensions_mutex_;
};

/// Makes the gateway and puts its routes on `r` (which then keeps it alive).
inline std::shared_ptr<deerflow_gateway> add_deerflow_gateway(router& r, deerflow_gateway_options o) {
    auto g = std::make_shared<deerflow_gateway>(std::move(o));
    g->add_routes(r, g);
    return g;
}

} // namespace agentware::server

#endif
