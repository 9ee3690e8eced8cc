#ifndef AGENTWARE_MIDDLEWARE_CAPABILITIES_IMPL_WEB_IPP
#define AGENTWARE_MIDDLEWARE_CAPABILITIES_IMPL_WEB_IPP

// The web capability's requests (capabilities/web.hpp): compiled once in
// <agentware/src.hpp> with AGENTWARE_SEPARATE_COMPILATION.

#include <agentware/detail/format.hpp>
#include <agentware/message/detail/output_limits.hpp>
#include <agentware/middleware/capabilities/web.hpp>
#include <agentware/middleware/detail/html_text.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/model/detail/call_control.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/http_transport.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <stop_token>

namespace agentware::detail {

namespace web {

struct response {
    std::string url; ///< after redirects
    int status = 0;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool truncated = false; ///< the body was longer than max_bytes
};

/// A problem the model can act on; its text is the tool's answer.
struct refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline bool host_matches(std::string_view host, std::string_view rule) {
    auto lower = [](std::string_view s) {
        std::string out(s);
        std::transform(out.begin(), out.end(), out.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        while (!out.empty() && out.back() == '.')
            out.pop_back();
        return out;
    };
    const std::string h = lower(host);
    std::string r = lower(rule);
    if (r.starts_with("*.")) r.erase(0, 2);
    if (r.empty()) return false;
    return h == r || (h.size() > r.size() && h.ends_with(r) && h[h.size() - r.size() - 1] == '.');
}

inline void check_host(const web_tools_options& o, const std::string& host, std::string_view url) {
    for (const auto& rule : o.blocked_hosts)
        if (host_matches(host, rule)) throw refusal(detail::format("Error: {} is a blocked host", host));
    if (o.allowed_hosts.empty()) return;
    for (const auto& rule : o.allowed_hosts)
        if (host_matches(host, rule)) return;
    throw refusal(detail::format("Error: {} is not among the hosts these tools may reach ({})", host, url));
}

/// The URL split into what the transport connects to and the request target
/// (path and query; the fragment is the browser's and is dropped).
struct target {
    url where;
    std::string path;
};

inline target split(std::string_view text) {
    if (text.size() > 8192) throw refusal("Error: the URL is too long");
    for (char c : text)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F)
            throw refusal("Error: the URL contains white space or a control character");
    if (const auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    const auto sep = text.find("://");
    if (sep == std::string_view::npos)
        throw refusal(detail::format("Error: {} is not an http:// or https:// URL", text));
    const auto path_at = text.find_first_of("/?", sep + 3);
    std::string authority_only(text.substr(0, path_at));
    target t;
    try {
        t.where = parse_url(authority_only);
    } catch (const model_error&) {
        throw refusal(detail::format("Error: {} is not an http:// or https:// URL", text));
    }
    if (!t.where.userinfo.empty()) throw refusal("Error: URLs with credentials are not fetched");
    t.path = path_at == std::string_view::npos ? std::string("/") : std::string(text.substr(path_at));
    if (t.path.front() == '?') t.path.insert(0, "/");
    return t;
}

/// `location` (a redirect's) against the URL it came from.
inline std::string resolve(const target& from, std::string_view location) {
    if (location.find("://") != std::string_view::npos) return std::string(location);
    const std::string origin = from.where.scheme + "://" + from.where.authority();
    if (location.starts_with("//")) return from.where.scheme + ":" + std::string(location);
    if (location.starts_with('/')) return origin + std::string(location);
    std::string base = from.path.substr(0, from.path.find('?'));
    base.erase(base.rfind('/') + 1);
    return origin + base + std::string(location);
}

inline bool is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

inline bool header_name_ok(std::string_view n) {
    if (n.empty() || n.size() > 256) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos))
            return false;
    return true;
}

inline boost::asio::awaitable<response> get(const web_context& ctx, std::string url,
                                            std::vector<std::pair<std::string, std::string>> headers,
                                            const std::stop_token& stop) {
    const auto& o = ctx.options;
    response r;
    for (std::size_t hop = 0;; ++hop) {
        const target t = split(url);
        check_host(o, t.where.host, url);
        http_request_spec spec;
        spec.method = "GET";
        spec.target = t.path;
        spec.headers.emplace_back("User-Agent", o.user_agent);
        spec.headers.emplace_back("Accept", "text/html,application/xhtml+xml,text/*;q=0.9,*/*;q=0.8");
        for (const auto& h : headers)
            spec.headers.push_back(h);

        r = response{};
        r.url = url.substr(0, url.find('#'));
        http_response_sink sink;
        sink.on_head = [&](const http_response_head& h) {
            r.status = h.status;
            r.content_type = h.content_type;
            r.headers = h.headers;
        };
        sink.on_data = [&](std::string_view piece) {
            const std::size_t room = o.max_bytes - std::min(o.max_bytes, r.body.size());
            r.body.append(piece.substr(0, room));
            if (piece.size() > room) {
                r.truncated = true;
                return false;
            }
            return true;
        };
        auto control = std::make_shared<call_control>(co_await boost::asio::this_coro::executor);
        control->follow((co_await boost::asio::this_coro::cancellation_state));
        std::optional<std::stop_callback<stop_canceller>> on_stop;
        if (stop.stop_possible()) on_stop.emplace(stop, stop_canceller{control});
        try {
            co_await ctx.transport->post(t.where, spec, sink, *control);
        } catch (const model_error& e) {
            throw refusal(detail::format("Error: GET {} failed: {}", url, e.what()));
        }
        if (!is_redirect(r.status)) co_return r;
        std::string location;
        for (const auto& [n, v] : r.headers)
            if (n.size() == 8 && std::equal(n.begin(), n.end(), "location", [](char a, char b) {
                    return std::tolower(static_cast<unsigned char>(a)) == b;
                }))
                location = v;
        if (location.empty()) co_return r;
        if (hop >= o.max_redirects)
            throw refusal(detail::format("Error: {} redirected more than {} times", r.url, o.max_redirects));
        url = resolve(t, location);
    }
}

inline std::string lower_media_type(std::string_view content_type) {
    std::string t(content_type.substr(0, content_type.find(';')));
    std::transform(t.begin(), t.end(), t.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    while (!t.empty() && t.back() == ' ')
        t.pop_back();
    return t;
}

inline bool is_html(std::string_view type) { return type == "text/html" || type == "application/xhtml+xml"; }

inline bool is_text(std::string_view type) {
    return type.empty() || type.starts_with("text/") || type == "application/json" ||
           type == "application/xml" || type == "application/javascript" || type == "application/x-ndjson" ||
           type.ends_with("+json") || type.ends_with("+xml");
}

inline std::string note_truncated(const web_context& ctx, const response& r) {
    return r.truncated ? detail::format("\n[the body is longer than {} bytes; the rest was not read]",
                                        ctx.options.max_bytes)
                       : std::string();
}

inline std::string url_arg(const boost::json::object& args) {
    std::optional<arg_error> err;
    auto url = string_arg(args, "url", true, err);
    if (err) throw refusal(err->text);
    return *url;
}

} // namespace web

std::shared_ptr<const web_context> make_web_context(web_tools_options options) {
    http_options h;
    h.connect_timeout = std::min<std::chrono::milliseconds>(options.timeout, std::chrono::seconds(10));
    h.first_byte_timeout = options.timeout;
    h.total_timeout = options.timeout;
    h.max_idle_connections = 0;
    h.ca_file = options.ca_file;
    auto transport = std::make_shared<http_transport>(std::move(h));
    return std::make_shared<const web_context>(web_context{std::move(options), std::move(transport)});
}

boost::asio::awaitable<tool_output> web_fetch(std::shared_ptr<const web_context> ctx,
                                              const boost::json::object& args, const tool_runtime& rt) {
    try {
        web::response r = co_await web::get(*ctx, web::url_arg(args), {}, rt.stop);
        const std::string type = web::lower_media_type(r.content_type);
        if (r.status < 200 || r.status >= 300) {
            std::string excerpt = web::is_html(type) ? html_to_text(r.body) : r.body;
            if (!is_utf8_text(excerpt)) excerpt.clear();
            co_return tool_output::error(detail::format("Error: HTTP {} from {}{}{}", r.status, r.url,
                                                        excerpt.empty() ? "" : "\n",
                                                        head_truncate(excerpt, 500, "")));
        }
        if (!web::is_text(type) && !web::is_html(type))
            co_return tool_output::error(detail::format("Error: {} is {}, not text", r.url, r.content_type));
        std::string title;
        std::string text = web::is_html(type) ? html_to_text(r.body, &title) : r.body;
        if (!is_utf8_text(text))
            co_return tool_output::error(detail::format("Error: {} is not UTF-8 text", r.url));
        std::string out = detail::format("URL: {}\n", r.url);
        if (!title.empty()) out += detail::format("Title: {}\n", title);
        out += "\n" + text + web::note_truncated(*ctx, r);
        tool_output o(head_truncate(out, ctx->options.max_output_chars, "The page goes on."));
        o.metadata["status"] = r.status;
        o.metadata["url"] = r.url;
        co_return o;
    } catch (const web::refusal& e) {
        co_return tool_output::error(e.what());
    }
}

boost::asio::awaitable<tool_output> web_curl(std::shared_ptr<const web_context> ctx,
                                             const boost::json::object& args, const tool_runtime& rt) {
    try {
        std::string url = web::url_arg(args);
        std::vector<std::pair<std::string, std::string>> headers;
        if (const auto* h = args.if_contains("headers"); h != nullptr && !h->is_null()) {
            if (!h->is_object()) throw web::refusal("Error: headers must be an object of strings");
            for (const auto& [name, value] : h->get_object()) {
                if (!value.is_string()) throw web::refusal("Error: headers must be an object of strings");
                const std::string_view n = name;
                const std::string_view v = value.get_string();
                if (!web::header_name_ok(n))
                    throw web::refusal(detail::format("Error: \"{}\" is not a header name", n));
                if (v.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
                    throw web::refusal(detail::format("Error: the value of header {} has a line break", n));
                for (std::string_view fixed : {"host", "content-length", "transfer-encoding", "connection"})
                    if (html::iequals(n, fixed))
                        throw web::refusal(detail::format("Error: the {} header is set by the tool", n));
                headers.emplace_back(std::string(n), std::string(v));
            }
        }
        web::response r = co_await web::get(*ctx, std::move(url), std::move(headers), rt.stop);
        std::string out = detail::format("HTTP {}\n", r.status);
        for (const auto& [n, v] : r.headers)
            out += detail::format("{}: {}\n", n, v);
        out += "\n";
        if (is_utf8_text(r.body))
            out += r.body + web::note_truncated(*ctx, r);
        else
            out += detail::format("[{} bytes of {}, not shown]", r.body.size(),
                                  r.content_type.empty() ? std::string("binary data") : r.content_type);
        tool_output o(head_truncate(out, ctx->options.max_output_chars, "The response goes on."));
        o.metadata["status"] = r.status;
        o.metadata["url"] = r.url;
        co_return o;
    } catch (const web::refusal& e) {
        co_return tool_output::error(e.what());
    }
}

} // namespace agentware::detail

#endif
