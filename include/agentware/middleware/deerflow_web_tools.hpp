#ifndef AGENTWARE_MIDDLEWARE_DEERFLOW_WEB_TOOLS_HPP
#define AGENTWARE_MIDDLEWARE_DEERFLOW_WEB_TOOLS_HPP

// DeerFlow's community web tools, as its stock config.yaml names them in
// `tools:` (docs/tools.md): `web_search` on DuckDuckGo, `web_fetch` on Jina
// Reader, `image_search` on DuckDuckGo's images. Real HTTP clients on the
// project's transport; the tool names, descriptions, parameters and answers
// are DeerFlow's (kept for parity), the code is ours. Every base URL can be
// overridden (`base_url` in the tool's entry), which is how the tests point
// them at a server on 127.0.0.1; keys come from the environment.
//
// deerflow_community_tools() maps DeerFlow's `use:` names to factories that
// read a `tools:` entry; make_lead_agent takes them in
// lead_agent_setup::tool_factories.
//
// Beast and OpenSSL are in the implementation (impl/deerflow_web_tools.ipp):
// with AGENTWARE_SEPARATE_COMPILATION this header includes neither.

#include <agentware/detail/config.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace agentware {

/// `deerflow.community.ddg_search.tools:web_search_tool`.
struct ddg_web_search_options {
    /// Results per search; set, it wins over the model's `max_results` (as
    /// DeerFlow's config does).
    std::optional<std::size_t> max_results;
    std::string region = "wt-wt";                         ///< DuckDuckGo's `kl`
    std::string safesearch = "moderate";                  ///< on, moderate, off
    std::string base_url = "https://html.duckduckgo.com"; ///< its HTML results page
    std::chrono::seconds timeout{30};
};

/// `deerflow.community.image_search.tools:image_search_tool`.
struct ddg_image_search_options {
    std::optional<std::size_t> max_results; ///< wins over the model's, as above
    std::string region = "wt-wt";
    std::string safesearch = "moderate";
    std::string base_url = "https://duckduckgo.com"; ///< its token page and its `i.js` image API
    std::chrono::seconds timeout{30};
};

/// `deerflow.community.jina_ai.tools:web_fetch_tool`.
struct jina_web_fetch_options {
    std::chrono::seconds timeout{10};           ///< the request's, and Jina's X-Timeout
    std::string base_url = "https://r.jina.ai"; ///< the reader's endpoint
    std::string api_key;                        ///< empty: $JINA_API_KEY, if set (higher rate limits)
    std::string proxy;                          ///< an http:// proxy for https:// targets
    bool trust_env = true;                      ///< HTTPS_PROXY / NO_PROXY from the environment
};

AGENTWARE_DECL std::shared_ptr<tool_interface> make_ddg_web_search_tool(ddg_web_search_options options = {});
AGENTWARE_DECL std::shared_ptr<tool_interface>
make_ddg_image_search_tool(ddg_image_search_options options = {});
AGENTWARE_DECL std::shared_ptr<tool_interface> make_jina_web_fetch_tool(jina_web_fetch_options options = {});

/// Makes a tool from its `tools:` entry; `path` names the entry in errors
/// (`tools[0].max_results: expected an integer, got "five"`). Throws json_error.
using deerflow_tool_factory =
    std::function<std::shared_ptr<tool_interface>(const boost::json::object& entry, std::string_view path)>;

/// The `use:` names of DeerFlow's community tools that agentware implements,
/// with their factories. An entry's keys besides name, group and use are the
/// tool's settings; an unknown one is an error naming it.
AGENTWARE_DECL std::map<std::string, deerflow_tool_factory, std::less<>> deerflow_community_tools();

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/middleware/impl/deerflow_web_tools.ipp>
#endif

#endif
