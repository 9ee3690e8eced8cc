#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_WEB_HPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_WEB_HPP

// web_tools: the Swift catalog's `web` capability. Two tools, both HTTP(S)
// GET on the project's HTTP transport (its TLS, proxy and timeouts):
// `fetch` returns a page's readable text (HTML reduced to text), `curl` the
// response as received (status, headers, body). Bodies are read up to a byte
// limit, calls are bounded in time, redirects are followed a few times, and
// hosts can be allowed or blocked by name. The tools are asynchronous: in
// async_run a slow server holds no thread.
//
// Beast and OpenSSL are in the implementation (capabilities/impl/web.ipp): with
// AGENTWARE_SEPARATE_COMPILATION this header includes neither.

#include <agentware/detail/config.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/capabilities/host_capability.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

class http_transport;

struct web_tools_options {
    std::chrono::seconds timeout{30};     ///< one request, from connecting to its last byte
    std::size_t max_bytes = 5u << 20;     ///< of a body; the rest is not read
    std::size_t max_output_chars = 30000; ///< what a tool returns; longer text is cut at the end
    std::size_t max_redirects = 5;
    /// Host names the tools may reach (a name also covers its subdomains);
    /// empty: any host not blocked.
    std::vector<std::string> allowed_hosts;
    std::vector<std::string> blocked_hosts; ///< never reached (subdomains too)
    std::string user_agent = "agentware-web/1";
    std::string ca_file; ///< an extra CA bundle in PEM (company gateways, tests)

    static constexpr std::string_view config_section = "web";
    friend bool operator==(const web_tools_options&, const web_tools_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const web_tools_options& o) {
    jv = boost::json::object{{"timeout", o.timeout.count()},
                             {"max_bytes", o.max_bytes},
                             {"max_output_chars", o.max_output_chars},
                             {"max_redirects", o.max_redirects},
                             {"allowed_hosts", boost::json::value_from(o.allowed_hosts)},
                             {"blocked_hosts", boost::json::value_from(o.blocked_hosts)},
                             {"user_agent", o.user_agent},
                             {"ca_file", o.ca_file}};
}

inline web_tools_options tag_invoke(boost::json::value_to_tag<web_tools_options>,
                                    const boost::json::value& jv) {
    json_reader r(jv, std::string(web_tools_options::config_section));
    web_tools_options o;
    r.read("timeout", o.timeout)
        .read("max_bytes", o.max_bytes)
        .read("max_output_chars", o.max_output_chars)
        .read("max_redirects", o.max_redirects)
        .read("allowed_hosts", o.allowed_hosts)
        .read("blocked_hosts", o.blocked_hosts)
        .read("user_agent", o.user_agent)
        .read("ca_file", o.ca_file)
        .reject_unknown_keys();
    if (o.timeout.count() <= 0) throw json_error(r.path_of("timeout"), "must be at least 1 second");
    if (o.max_bytes == 0) throw json_error(r.path_of("max_bytes"), "must be at least 1");
    return o;
}

namespace detail {

/// What both tools share: the options and one transport (which keeps no idle
/// connection, so no socket outlives the executor of the call that opened it).
struct web_context {
    web_tools_options options;
    std::shared_ptr<http_transport> transport;
};

AGENTWARE_DECL std::shared_ptr<const web_context> make_web_context(web_tools_options options);
AGENTWARE_DECL boost::asio::awaitable<tool_output>
web_fetch(std::shared_ptr<const web_context> ctx, const boost::json::object& args, const tool_runtime& rt);
AGENTWARE_DECL boost::asio::awaitable<tool_output>
web_curl(std::shared_ptr<const web_context> ctx, const boost::json::object& args, const tool_runtime& rt);

} // namespace detail

/// The `web` capability: `fetch` and `curl`.
class web_tools : public detail::host_capability<web_tools_options> {
public:
    using options_type = web_tools_options;
    static constexpr std::string_view capability_id = "web"; ///< in the capability catalog

    web_tools() : web_tools(web_tools_options{}) {}
    explicit web_tools(web_tools_options o) {
        options_ = o;
        auto ctx = detail::make_web_context(std::move(o));
        tools_.push_back(share_tool(make_tool(
            "fetch",
            "Fetches a web page with an HTTP(S) GET and returns its readable text: HTML is reduced to its "
            "text, with links kept; other text (JSON, plain text, XML) comes back as it is.",
            R"({"type":"object","properties":{"url":{"type":"string","description":"The http:// or https:// URL."}},"required":["url"]})",
            [ctx](const boost::json::object& args, const tool_runtime& rt) {
                return detail::web_fetch(ctx, args, rt);
            })));
        tools_.push_back(share_tool(make_tool(
            "curl",
            "Sends an HTTP(S) GET and returns the response as received: the status, the headers and the "
            "body.",
            R"({"type":"object","properties":{"url":{"type":"string","description":"The http:// or https:// URL."},"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra request headers."}},"required":["url"]})",
            [ctx](const boost::json::object& args, const tool_runtime& rt) {
                return detail::web_curl(ctx, args, rt);
            })));
    }
};

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/middleware/capabilities/impl/web.ipp>
#endif

#endif
