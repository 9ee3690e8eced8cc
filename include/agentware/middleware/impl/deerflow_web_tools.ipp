#ifndef AGENTWARE_MIDDLEWARE_IMPL_DEERFLOW_WEB_TOOLS_IPP
#define AGENTWARE_MIDDLEWARE_IMPL_DEERFLOW_WEB_TOOLS_IPP

// DeerFlow's community web tools (deerflow_web_tools.hpp): compiled once in
// <agentware/src.hpp> with AGENTWARE_SEPARATE_COMPILATION.

#include <agentware/detail/format.hpp>
#include <agentware/detail/python_json.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/middleware/deerflow_web_tools.hpp>
#include <agentware/middleware/detail/html_text.hpp>
#include <agentware/middleware/detail/tool_args.hpp>
#include <agentware/model/detail/call_control.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

namespace agentware::detail {

namespace community {

struct http_result {
    int status = 0;
    std::string body;
};

/// One request on `transport`; throws model_error for transport failures.
inline boost::asio::awaitable<http_result> send(http_transport& transport, std::string_view url_text,
                                                std::string method,
                                                std::vector<std::pair<std::string, std::string>> headers,
                                                std::string body, const std::stop_token& stop) {
    const auto sep = url_text.find("://");
    const auto path_at = url_text.find_first_of("/?", sep == std::string_view::npos ? 0 : sep + 3);
    const url where = parse_url(url_text.substr(0, path_at));
    http_request_spec spec;
    spec.method = std::move(method);
    spec.target =
        path_at == std::string_view::npos ? std::string("/") : std::string(url_text.substr(path_at));
    if (spec.target.front() == '?') spec.target.insert(0, "/");
    spec.headers = std::move(headers);
    spec.body = std::move(body);
    http_result r;
    http_response_sink sink;
    sink.on_head = [&](const http_response_head& h) { r.status = h.status; };
    sink.on_data = [&](std::string_view piece) {
        r.body.append(piece);
        return true;
    };
    auto control = std::make_shared<call_control>(co_await boost::asio::this_coro::executor);
    control->follow((co_await boost::asio::this_coro::cancellation_state));
    std::optional<std::stop_callback<stop_canceller>> on_stop;
    if (stop.stop_possible()) on_stop.emplace(stop, stop_canceller{control});
    co_await transport.post(where, spec, sink, *control);
    co_return r;
}

// DuckDuckGo answers its HTML pages to browsers.
inline constexpr const char* browser_agent = "Mozilla/5.0 (compatible; agentware)";

inline std::shared_ptr<http_transport> make_transport(std::chrono::seconds timeout, std::string proxy = {},
                                                      bool use_environment_proxy = true) {
    http_options h;
    h.connect_timeout = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
    h.first_byte_timeout = timeout;
    h.total_timeout = timeout;
    h.max_idle_connections = 0; // no socket outlives the executor of the call that opened it
    h.max_body_bytes = 8u << 20;
    h.proxy = std::move(proxy);
    h.use_environment_proxy = use_environment_proxy;
    return std::make_shared<http_transport>(std::move(h));
}

inline std::string percent_encode(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else if (c == ' ') {
            out += '+';
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

inline std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            out += static_cast<char>(std::strtol(std::string(s.substr(i + 1, 2)).c_str(), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

inline std::string trim_slash(std::string s) {
    while (!s.empty() && s.back() == '/')
        s.pop_back();
    return s;
}

/// DuckDuckGo's safe-search parameter (`kp` on the HTML page, `p` for images).
inline std::string ddg_safesearch(std::string_view level, bool images) {
    if (level == "on") return "1";
    if (level == "off") return images ? "-1" : "-2";
    return images ? "1" : "-1";
}

/// A result link of DuckDuckGo's HTML page: its redirect (`//duckduckgo.com/l/?uddg=<url>&...`)
/// unwrapped to the target.
inline std::string ddg_result_url(std::string href) {
    if (href.find("duckduckgo.com/l/?") == std::string::npos) return href;
    const auto at = href.find("uddg=");
    if (at == std::string::npos) return href;
    const auto end = href.find('&', at);
    return percent_decode(
        std::string_view(href).substr(at + 5, end == std::string::npos ? end : end - at - 5));
}

struct ddg_hit {
    std::string title, url, body;
};

/// The results of DuckDuckGo's HTML page: each `result__a` link (title and
/// URL) and the `result__snippet` after it; ads (links through y.js) left out.
inline std::vector<ddg_hit> parse_ddg_html(std::string_view page) {
    std::vector<ddg_hit> hits;
    // The element (tag and text) whose start tag holds `cls` at or after `from`.
    struct element {
        std::string_view tag, inner;
        std::size_t end;
    };
    auto find_element = [&](std::string_view cls, std::size_t from) -> std::optional<element> {
        for (std::size_t at = page.find(cls, from); at != std::string_view::npos;
             at = page.find(cls, at + 1)) {
            const auto open = page.rfind('<', at);
            const auto close = page.find('>', at);
            if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
            std::string_view tag = page.substr(open + 1, close - open - 1);
            const auto name_end = tag.find_first_of(" \t\r\n");
            const std::string_view name = tag.substr(0, name_end);
            if (html::attribute(tag.substr(name.size()), "class").find(cls) == std::string::npos) continue;
            const std::string closing = "</" + std::string(name);
            const auto inner_end = page.find(closing, close + 1);
            if (inner_end == std::string_view::npos) return std::nullopt;
            return element{tag.substr(name.size()), page.substr(close + 1, inner_end - close - 1), inner_end};
        }
        return std::nullopt;
    };
    std::size_t pos = 0;
    while (auto link = find_element("result__a", pos)) {
        pos = link->end;
        const std::string href = html::attribute(link->tag, "href");
        ddg_hit hit{html_to_text(link->inner), ddg_result_url(href), {}};
        const auto next = find_element("result__a", pos);
        if (auto snippet = find_element("result__snippet", pos);
            snippet && (!next || snippet->end < next->end)) {
            hit.body = html_to_text(snippet->inner);
            pos = snippet->end;
        }
        if (href.find("duckduckgo.com/y.js") != std::string::npos || hit.url.empty()) continue;
        hits.push_back(std::move(hit));
    }
    return hits;
}

/// The search token DuckDuckGo's page carries (`vqd="..."`, `vqd=...&`, `vqd='...'`).
inline std::string ddg_vqd(std::string_view page) {
    for (auto [start, stop] :
         {std::pair<std::string_view, char>{"vqd=\"", '"'}, {"vqd=", '&'}, {"vqd='", '\''}}) {
        const auto at = page.find(start);
        if (at == std::string_view::npos) continue;
        const auto end = page.find(stop, at + start.size());
        if (end == std::string_view::npos) continue;
        return std::string(page.substr(at + start.size(), end - at - start.size()));
    }
    return {};
}

/// The first `n` code points of UTF-8 text (Python's `text[:n]`).
inline std::string first_code_points(std::string_view s, std::size_t n) {
    std::size_t i = 0;
    for (std::size_t count = 0; i < s.size() && count < n; ++count) {
        ++i;
        while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
            ++i;
    }
    return std::string(s.substr(0, i));
}

inline std::size_t max_results_arg(const boost::json::object& args, std::optional<std::size_t> configured) {
    if (configured) return *configured;
    if (const auto* v = args.if_contains("max_results"))
        if (const auto n = v->if_int64(); n && *n > 0) return static_cast<std::size_t>(*n);
    return 5;
}

inline std::string query_arg(const boost::json::object& args) {
    const auto* q = args.if_contains("query");
    return q && q->is_string() ? std::string(q->get_string()) : std::string();
}

inline std::string optional_string_arg(const boost::json::object& args, std::string_view key) {
    const auto* v = args.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The keys every `tools:` entry has; the tool's own are read by its factory.
inline json_reader entry_reader(const boost::json::object& entry, std::string_view path) {
    json_reader r(entry, std::string(path));
    std::string ignored;
    r.read("name", ignored).read("group", ignored).read("use", ignored);
    return r;
}

inline void read_safesearch(json_reader& r, std::string& into) {
    r.read("safesearch", into);
    json_check_choice(r.path_of("safesearch"), into, {"on", "moderate", "off"});
}

} // namespace community

} // namespace agentware::detail

namespace agentware {

std::shared_ptr<tool_interface> make_ddg_web_search_tool(ddg_web_search_options options) {
    namespace c = detail::community;
    auto transport = c::make_transport(options.timeout);
    auto o = std::make_shared<const ddg_web_search_options>(std::move(options));
    // Name, description and parameters kept for parity with DeerFlow's ddg_search tool.
    return share_tool(make_tool(
        "web_search",
        "Search the web for information. Use this tool to find current information, news, articles, and "
        "facts "
        "from the internet.",
        R"({"type":"object","properties":{"query":{"type":"string","description":"Search keywords describing what you want to find. Be specific for better results."},"max_results":{"type":"integer","default":5,"description":"Maximum number of results to return. Default is 5."}},"required":["query"]})",
        [o, transport](const boost::json::object& args,
                       const tool_runtime& rt) -> boost::asio::awaitable<tool_output> {
            const std::string query = c::query_arg(args);
            const std::size_t max_results = c::max_results_arg(args, o->max_results);
            std::vector<c::ddg_hit> hits;
            std::string failure;
            try {
                const std::string form =
                    detail::format("q={}&b=&kl={}&kp={}", c::percent_encode(query),
                                   c::percent_encode(o->region), c::ddg_safesearch(o->safesearch, false));
                std::vector<std::pair<std::string, std::string>> headers;
                headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
                headers.emplace_back("User-Agent", c::browser_agent);
                auto r = co_await c::send(*transport, c::trim_slash(o->base_url) + "/html/", "POST",
                                          std::move(headers), form, rt.stop);
                if (r.status == 200)
                    hits = c::parse_ddg_html(r.body);
                else
                    failure = detail::format("HTTP {}", r.status);
            } catch (const model_error& e) {
                failure = e.what();
            }
            if (hits.size() > max_results) hits.resize(max_results);
            if (hits.empty()) {
                // DeerFlow answers a failed search as one without results (kept for parity);
                // the reason goes to the message's metadata.
                tool_output out(detail::python_json_dumps(
                    boost::json::object{{"error", "No results found"}, {"query", query}}));
                if (!failure.empty()) out.metadata["search_error"] = failure;
                co_return out;
            }
            boost::json::array results;
            for (auto& h : hits)
                results.push_back(boost::json::object{{"title", std::move(h.title)},
                                                      {"url", std::move(h.url)},
                                                      {"content", std::move(h.body)}});
            const std::size_t total = results.size();
            co_return tool_output(detail::python_json_dumps(
                boost::json::object{
                    {"query", query}, {"total_results", total}, {"results", std::move(results)}},
                2));
        }));
}

std::shared_ptr<tool_interface> make_ddg_image_search_tool(ddg_image_search_options options) {
    namespace c = detail::community;
    auto transport = c::make_transport(options.timeout);
    auto o = std::make_shared<const ddg_image_search_options>(std::move(options));
    // Name, description and parameters kept for parity with DeerFlow's image_search tool.
    return share_tool(make_tool(
        "image_search",
        "Search for images online. Use this tool BEFORE image generation to find reference images for "
        "characters, portraits, objects, scenes, or any content requiring visual accuracy.\n\n"
        "**When to use:**\n"
        "- Before generating character/portrait images: search for similar poses, expressions, styles\n"
        "- Before generating specific objects/products: search for accurate visual references\n"
        "- Before generating scenes/locations: search for architectural or environmental references\n"
        "- Before generating fashion/clothing: search for style and detail references\n\n"
        "The returned image URLs can be used as reference images in image generation to significantly "
        "improve "
        "quality.",
        R"({"type":"object","properties":{"query":{"type":"string","description":"Search keywords describing the images you want to find. Be specific for better results (e.g., \"Japanese woman street photography 1990s\" instead of just \"woman\")."},"max_results":{"type":"integer","default":5,"description":"Maximum number of images to return. Default is 5."},"size":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"Image size filter. Options: \"Small\", \"Medium\", \"Large\", \"Wallpaper\". Use \"Large\" for reference images."},"type_image":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"Image type filter. Options: \"photo\", \"clipart\", \"gif\", \"transparent\", \"line\". Use \"photo\" for realistic references."},"layout":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"Layout filter. Options: \"Square\", \"Tall\", \"Wide\". Choose based on your generation needs."}},"required":["query"]})",
        [o,
         transport](const boost::json::object& args, const tool_runtime& rt) -> boost::
                                                                                 asio::
                                                                                     awaitable<tool_output> {
                                                                                         const std::string
                                                                                             query =
                                                                                                 c::query_arg(
                                                                                                     args);
                                                                                         const std::size_t
                                                                                             max_results = c::
                                                                                                 max_results_arg(
                                                                                                     args,
                                                                                                     o->max_results);
                                                                                         const std::string base =
                                                                                             c::trim_slash(
                                                                                                 o->base_url);
                                                                                         const std::vector<
                                                                                             std::pair<
                                                                                                 std::string,
                                                                                                 std::string>>
                                                                                             headers{
                                                                                                 {"User-"
                                                                                                  "Agent",
                                                                                                  "Mozilla/"
                                                                                                  "5.0 "
                                                                                                  "(compatibl"
                                                                                                  "e; "
                                                                                                  "agentware"
                                                                                                  ")"}};
                                                                                         boost::json::array
                                                                                             results;
                                                                                         std::string failure;
                                                                                         try {
                                                                                             // The image API
                                                                                             // wants the
                                                                                             // token
                                                                                             // DuckDuckGo's
                                                                                             // search page
                                                                                             // carries.
                                                                                             auto page =
                                                                                                 co_await c::send(
                                                                                                     *transport,
                                                                                                     base +
                                                                                                         "/?"
                                                                                                         "q"
                                                                                                         "=" +
                                                                                                         c::percent_encode(
                                                                                                             query),
                                                                                                     "GET",
                                                                                                     headers,
                                                                                                     {},
                                                                                                     rt.stop);
                                                                                             const std::string
                                                                                                 vqd = c::ddg_vqd(
                                                                                                     page.body);
                                                                                             if (vqd.empty()) {
                                                                                                 failure = detail::
                                                                                                     format(
                                                                                                         "no "
                                                                                                         "sea"
                                                                                                         "rch"
                                                                                                         " to"
                                                                                                         "ken"
                                                                                                         " ("
                                                                                                         "HTT"
                                                                                                         "P "
                                                                                                         "{}"
                                                                                                         ")",
                                                                                                         page.status);
                                                                                             } else {
                                                                                                 // f: time,
                                                                                                 // size,
                                                                                                 // color,
                                                                                                 // type,
                                                                                                 // layout,
                                                                                                 // license.
                                                                                                 const std::string filters = detail::format(
                                                                                                     ",{},,{}"
                                                                                                     ",{},",
                                                                                                     c::optional_string_arg(
                                                                                                         args,
                                                                                                         "siz"
                                                                                                         "e"),
                                                                                                     c::optional_string_arg(
                                                                                                         args,
                                                                                                         "typ"
                                                                                                         "e_"
                                                                                                         "ima"
                                                                                                         "g"
                                                                                                         "e"),
                                                                                                     c::optional_string_arg(
                                                                                                         args,
                                                                                                         "lay"
                                                                                                         "ou"
                                                                                                         "t"));
                                                                                                 auto r = co_await c::send(
                                                                                                     *transport,
                                                                                                     detail::format(
                                                                                                         "{}/"
                                                                                                         "i."
                                                                                                         "js?"
                                                                                                         "l={"
                                                                                                         "}&"
                                                                                                         "o="
                                                                                                         "jso"
                                                                                                         "n&"
                                                                                                         "q={"
                                                                                                         "}&"
                                                                                                         "vqd"
                                                                                                         "={}"
                                                                                                         "&f="
                                                                                                         "{}&"
                                                                                                         "p={"
                                                                                                         "}",
                                                                                                         base,
                                                                                                         c::percent_encode(
                                                                                                             o->region),
                                                                                                         c::percent_encode(
                                                                                                             query),
                                                                                                         c::percent_encode(
                                                                                                             vqd),
                                                                                                         c::percent_encode(
                                                                                                             filters),
                                                                                                         c::ddg_safesearch(
                                                                                                             o->safesearch,
                                                                                                             true)),
                                                                                                     "GET",
                                                                                                     headers,
                                                                                                     {},
                                                                                                     rt.stop);
                                                                                                 boost::system::
                                                                                                     error_code
                                                                                                         ec;
                                                                                                 const auto doc =
                                                                                                     boost::json::
                                                                                                         parse(
                                                                                                             r.body,
                                                                                                             ec);
                                                                                                 const auto* list =
                                                                                                     !ec && doc.is_object()
                                                                                                         ? doc.get_object()
                                                                                                               .if_contains(
                                                                                                                   "results")
                                                                                                         : nullptr;
                                                                                                 if (r.status !=
                                                                                                         200 ||
                                                                                                     !list ||
                                                                                                     !list->is_array()) {
                                                                                                     failure = detail::format(
                                                                                                         "HTT"
                                                                                                         "P "
                                                                                                         "{} "
                                                                                                         "fro"
                                                                                                         "m "
                                                                                                         "the"
                                                                                                         " im"
                                                                                                         "age"
                                                                                                         " AP"
                                                                                                         "I",
                                                                                                         r.status);
                                                                                                 } else {
                                                                                                     for (
                                                                                                         const auto&
                                                                                                             item :
                                                                                                         list->get_array()) {
                                                                                                         if (results
                                                                                                                 .size() >=
                                                                                                             max_results)
                                                                                                             break;
                                                                                                         const auto* e =
                                                                                                             item.if_object();
                                                                                                         if (!e)
                                                                                                             continue;
                                                                                                         auto field = [&](std::string_view
                                                                                                                              key) {
                                                                                                             const auto* v =
                                                                                                                 e->if_contains(
                                                                                                                     key);
                                                                                                             return v && v->is_string()
                                                                                                                        ? boost::json::value(
                                                                                                                              v->get_string())
                                                                                                                        : boost::json::
                                                                                                                              value(
                                                                                                                                  "");
                                                                                                         };
                                                                                                         results
                                                                                                             .push_back(boost::json::object{
                                                                                                                 {"title",
                                                                                                                  field(
                                                                                                                      "title")},
                                                                                                                 {"image_url",
                                                                                                                  field(
                                                                                                                      "image")},
                                                                                                                 {"thumbnail_url",
                                                                                                                  field(
                                                                                                                      "thumbnail")}});
                                                                                                     }
                                                                                                 }
                                                                                             }
                                                                                         } catch (
                                                                                             const model_error&
                                                                                                 e) {
                                                                                             failure =
                                                                                                 e.what();
                                                                                         }
                                                                                         if (results
                                                                                                 .empty()) {
                                                                                             // Kept for
                                                                                             // parity with
                                                                                             // DeerFlow: a
                                                                                             // failed search
                                                                                             // reads as one
                                                                                             // without
                                                                                             // results.
                                                                                             tool_output out(
                                                                                                 detail::python_json_dumps(
                                                                                                     boost::json::object{
                                                                                                         {"er"
                                                                                                          "ro"
                                                                                                          "r",
                                                                                                          "No"
                                                                                                          " i"
                                                                                                          "ma"
                                                                                                          "ge"
                                                                                                          "s "
                                                                                                          "fo"
                                                                                                          "un"
                                                                                                          "d"},
                                                                                                         {"qu"
                                                                                                          "er"
                                                                                                          "y",
                                                                                                          query}}));
                                                                                             if (!failure
                                                                                                      .empty())
                                                                                                 out.metadata
                                                                                                     ["search"
                                                                                                      "_erro"
                                                                                                      "r"] =
                                                                                                     failure;
                                                                                             co_return out;
                                                                                         }
                                                                                         const std::size_t
                                                                                             total =
                                                                                                 results
                                                                                                     .size();
                                                                                         // Kept for parity
                                                                                         // with DeerFlow (its
                                                                                         // usage hint).
                                                                                         co_return tool_output(
                                                                                             detail::python_json_dumps(
                                                                                                 boost::json::object{
                                                                                                     {"query",
                                                                                                      query},
                                                                                                     {"total_"
                                                                                                      "result"
                                                                                                      "s",
                                                                                                      total},
                                                                                                     {"result"
                                                                                                      "s",
                                                                                                      std::move(
                                                                                                          results)},
                                                                                                     {"usage_"
                                                                                                      "hint",
                                                                                                      "Use "
                                                                                                      "the "
                                                                                                      "'image"
                                                                                                      "_url' "
                                                                                                      "values"
                                                                                                      " as "
                                                                                                      "refere"
                                                                                                      "nce "
                                                                                                      "images"
                                                                                                      " in "
                                                                                                      "image "
                                                                                                      "genera"
                                                                                                      "tion. "
                                                                                                      "Downlo"
                                                                                                      "ad "
                                                                                                      "them "
                                                                                                      "first "
                                                                                                      "if "
                                                                                                      "needed"
                                                                                                      "."}},
                                                                                                 2));
                                                                                     }));
}

std::shared_ptr<tool_interface> make_jina_web_fetch_tool(jina_web_fetch_options options) {
    namespace c = detail::community;
    auto transport = c::make_transport(options.timeout, options.proxy, options.trust_env);
    auto o = std::make_shared<const jina_web_fetch_options>(std::move(options));
    // Name, description and parameter kept for parity with DeerFlow's jina_ai web_fetch tool.
    return share_tool(make_tool(
        "web_fetch",
        "Fetch the contents of a web page at a given URL.\n"
        "Only fetch EXACT URLs that have been provided directly by the user or have been returned in results "
        "from the web_search and web_fetch tools.\n"
        "This tool can NOT access content that requires authentication, such as private Google Docs or pages "
        "behind login walls.\n"
        "Do NOT add www. to URLs that do NOT have them.\n"
        "URLs must include the schema: https://example.com is a valid URL while example.com is an invalid "
        "URL.",
        R"({"type":"object","properties":{"url":{"type":"string","description":"The URL to fetch the contents of."}},"required":["url"]})",
        [o, transport](const boost::json::object& args,
                       const tool_runtime& rt) -> boost::asio::awaitable<tool_output> {
            std::string key = o->api_key;
            if (key.empty()) key = detail::env_or_empty("JINA_API_KEY");
            std::vector<std::pair<std::string, std::string>> headers;
            headers.emplace_back("Content-Type", "application/json");
            headers.emplace_back("X-Return-Format", "html");
            headers.emplace_back("X-Timeout", std::to_string(o->timeout.count()));
            if (!key.empty()) headers.emplace_back("Authorization", "Bearer " + key);
            const std::string body =
                boost::json::serialize(boost::json::object{{"url", c::optional_string_arg(args, "url")}});
            c::http_result r;
            try {
                r = co_await c::send(*transport, c::trim_slash(o->base_url) + "/", "POST", std::move(headers),
                                     body, rt.stop);
            } catch (const model_error& e) {
                // Texts kept for parity with DeerFlow's Jina client (our error's text for Python's).
                co_return tool_output(detail::format("Error: Request to Jina API failed: {}", e.what()));
            }
            if (r.status != 200)
                co_return tool_output(
                    detail::format("Error: Jina API returned status {}: {}", r.status, r.body));
            if (r.body.find_first_not_of(" \t\r\n") == std::string::npos)
                co_return tool_output(std::string("Error: Jina API returned empty response"));
            // DeerFlow extracts the article (readability) and prints it as
            // Markdown under its title, cut at 4096 characters; ours is the
            // page's readable text (html_to_text), in the same frame.
            std::string title;
            std::string text = detail::html_to_text(r.body, &title);
            if (title.find_first_not_of(" \t\r\n") == std::string::npos) title = "Untitled";
            if (text.find_first_not_of(" \t\r\n") == std::string::npos)
                text = "No content could be extracted from this page";
            co_return tool_output(c::first_code_points(detail::format("# {}\n\n{}", title, text), 4096));
        }));
}

std::map<std::string, deerflow_tool_factory, std::less<>> deerflow_community_tools() {
    namespace c = detail::community;
    std::map<std::string, deerflow_tool_factory, std::less<>> out;
    out["deerflow.community.ddg_search.tools:web_search_tool"] = [](const boost::json::object& entry,
                                                                    std::string_view path) {
        json_reader r = c::entry_reader(entry, path);
        ddg_web_search_options o;
        o.max_results = r.optional<std::size_t>("max_results");
        std::string backend = "auto";
        // DeerFlow's DDGS backends; agentware speaks DuckDuckGo's own.
        r.read("backend", backend);
        json_check_choice(r.path_of("backend"), backend, {"auto", "duckduckgo"});
        r.read("region", o.region).read("base_url", o.base_url).read("timeout", o.timeout);
        c::read_safesearch(r, o.safesearch);
        r.reject_unknown_keys();
        return make_ddg_web_search_tool(std::move(o));
    };
    out["deerflow.community.image_search.tools:image_search_tool"] = [](const boost::json::object& entry,
                                                                        std::string_view path) {
        json_reader r = c::entry_reader(entry, path);
        ddg_image_search_options o;
        o.max_results = r.optional<std::size_t>("max_results");
        r.read("region", o.region).read("base_url", o.base_url).read("timeout", o.timeout);
        c::read_safesearch(r, o.safesearch);
        r.reject_unknown_keys();
        return make_ddg_image_search_tool(std::move(o));
    };
    out["deerflow.community.jina_ai.tools:web_fetch_tool"] = [](const boost::json::object& entry,
                                                                std::string_view path) {
        json_reader r = c::entry_reader(entry, path);
        jina_web_fetch_options o;
        r.read("timeout", o.timeout)
            .read("base_url", o.base_url)
            .read("api_key", o.api_key)
            .read("proxy", o.proxy)
            .read("trust_env", o.trust_env);
        r.reject_unknown_keys();
        if (o.timeout.count() <= 0) throw json_error(r.path_of("timeout"), "must be at least 1 second");
        return make_jina_web_fetch_tool(std::move(o));
    };
    return out;
}

} // namespace agentware

#endif
