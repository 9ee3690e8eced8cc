#ifndef AGENTWARE_MCP_CONFIG_HPP
#define AGENTWARE_MCP_CONFIG_HPP

// MCP servers as DeerFlow's `extensions_config.json` describes them
// (`mcpServers`), read with json_reader: a bad entry is an error naming the
// server and the key.

#include <agentware/json/reader.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::mcp {

enum class transport_type { stdio, http };

/// One entry of `mcpServers`.
struct server_config {
    std::string name; ///< the key of the entry
    bool enabled = true;
    transport_type type = transport_type::stdio;
    std::string command;                        ///< stdio
    std::vector<std::string> args;              ///< stdio
    std::map<std::string, std::string> env;     ///< stdio: added to the client's environment ($VAR expanded)
    std::string cwd;                            ///< stdio: working directory (empty: the client's)
    std::string url;                            ///< http
    std::map<std::string, std::string> headers; ///< http: sent on every request ($VAR expanded), never logged
    std::string description;
    bool tool_name_prefix = true; ///< tools are named `<server>_<tool>` (DeerFlow's default)
    std::chrono::milliseconds session_init_timeout{60'000};
    std::chrono::milliseconds tool_call_timeout{60'000};
};

namespace detail {

/// `$VAR` and `${VAR}` anywhere in `text` replaced by the environment's value
/// ("" when unset); `$$` is a literal `$`.
inline std::string expand_env(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        if (text[i + 1] == '$') {
            out += '$';
            ++i;
            continue;
        }
        std::size_t start = i + 1, end = start;
        const bool braced = text[start] == '{';
        if (braced) {
            end = text.find('}', start);
            if (end == std::string_view::npos) {
                out += text.substr(i);
                break;
            }
            ++start;
        } else {
            while (end < text.size() &&
                   (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
                ++end;
        }
        if (end == start) {
            out += '$';
            continue;
        }
        const std::string name(text.substr(start, end - start));
        if (const char* v = std::getenv(name.c_str())) out += v;
        i = braced ? end : end - 1;
    }
    return out;
}

inline std::chrono::milliseconds seconds_to_ms(double s) {
    return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

} // namespace detail

/// Reads one `mcpServers` entry; `path` is where it sits ("mcpServers.github").
inline server_config read_server_config(std::string name, const boost::json::value& v, std::string path) {
    json_reader r(v, path);
    server_config c;
    c.name = std::move(name);
    r.read("enabled", c.enabled);
    std::optional<std::string> type = r.optional<std::string>("type");
    if (!type)
        type = r.optional<std::string>("transport"); // the MCP spec's name for it
    else
        r.skip("transport");
    if (!type) type = r.contains("url") ? "http" : "stdio";
    if (*type == "sse")
        throw json_error(r.path_of("type"), "the legacy HTTP+SSE transport is not supported; use \"http\" "
                                            "(Streamable HTTP)");
    c.type = json_choose(r.path_of("type"), *type,
                         {json_choice_of<transport_type>{"stdio", transport_type::stdio},
                          {"http", transport_type::http},
                          {"streamable_http", transport_type::http},
                          {"streamable-http", transport_type::http}});
    r.read("command", c.command).read("args", c.args).read("env", c.env).read("cwd", c.cwd);
    r.read("url", c.url).read("headers", c.headers).read("description", c.description);
    r.read("tool_name_prefix", c.tool_name_prefix);
    if (auto s = r.optional<double>("session_init_timeout")) {
        if (*s <= 0) throw json_error(r.path_of("session_init_timeout"), "must be positive");
        c.session_init_timeout = detail::seconds_to_ms(*s);
    }
    if (auto s = r.optional<double>("tool_call_timeout")) {
        if (*s <= 0) throw json_error(r.path_of("tool_call_timeout"), "must be positive");
        c.tool_call_timeout = detail::seconds_to_ms(*s);
    }
    // DeerFlow's routing hints and long-running task toolsets: read by DeerFlow's
    // tool router, which agentware does not have; accepted and ignored.
    r.skip("routing").skip("tools").skip("task_toolsets");
    if (r.contains("oauth"))
        throw json_error(r.path_of("oauth"), "OAuth is not supported yet; use \"headers\"");
    r.reject_unknown_keys();
    if (c.type == transport_type::stdio && c.command.empty())
        throw json_error(r.path_of("command"), "a stdio server needs a command");
    if (c.type == transport_type::http && c.url.empty())
        throw json_error(r.path_of("url"), "an http server needs a url");
    for (auto& [k, val] : c.env)
        val = detail::expand_env(val);
    for (auto& [k, val] : c.headers)
        val = detail::expand_env(val);
    return c;
}

/// The servers of an `extensions_config.json` document, in key order,
/// disabled ones included (with `enabled == false`). Keys other than
/// `mcpServers` (`skills`, `middlewares`, ...) belong to other readers.
inline std::vector<server_config> read_extensions_config(const boost::json::value& doc) {
    json_reader r(doc);
    r.skip("skills").skip("middlewares").skip("mcpInterceptors");
    std::vector<server_config> out;
    if (const auto* servers = r.find("mcpServers")) {
        if (!servers->is_object()) agentware::detail::json_type_error("mcpServers", "an object", *servers);
        for (const auto& [name, entry] : servers->get_object()) {
            const std::string key(name);
            out.push_back(read_server_config(key, entry, "mcpServers." + key));
        }
    }
    r.reject_unknown_keys();
    return out;
}

/// Reads the file `path` (JSON). Throws json_error (with the file name in
/// front) or std::runtime_error when it cannot be read.
inline std::vector<server_config> load_extensions_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    const boost::json::value doc = boost::json::parse(text.str(), ec);
    if (ec) throw std::runtime_error(path + ": not valid JSON (" + ec.message() + ")");
    try {
        return read_extensions_config(doc);
    } catch (const json_error& e) {
        throw json_error(e.path(), e.problem() + " (in " + path + ")");
    }
}

} // namespace agentware::mcp

#endif
