#ifndef AGENTWARE_MIDDLEWARE_TOOL_RESULT_SANITIZATION_HPP
#define AGENTWARE_MIDDLEWARE_TOOL_RESULT_SANITIZATION_HPP

// tool_result_sanitization: results of the tools that bring in text from the
// web have the prompt's own tags escaped and the user-input boundary tokens
// defused before the model reads them (DeerFlow's
// ToolResultSanitizationMiddleware). Same one-pass neutraliser as
// input_sanitization; no framing. The stored tool message is the sanitised one.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/untrusted_text.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct tool_result_sanitization_options {
    /// The tools whose results are sanitised (DeerFlow's web tools).
    std::vector<std::string> tools{"web_fetch", "web_search", "image_search", "web_capture"};

    static constexpr std::string_view config_section = "tool_result_sanitization";
    friend bool operator==(const tool_result_sanitization_options&,
                           const tool_result_sanitization_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                       const tool_result_sanitization_options& o) {
    boost::json::array tools;
    for (const auto& t : o.tools)
        tools.emplace_back(t);
    jv = boost::json::object{{"tools", std::move(tools)}};
}
inline tool_result_sanitization_options
tag_invoke(boost::json::value_to_tag<tool_result_sanitization_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(tool_result_sanitization_options::config_section));
    tool_result_sanitization_options o;
    r.read("tools", o.tools).reject_unknown_keys();
    return o;
}

struct tool_result_sanitization {
    tool_result_sanitization_options options;

    tool_result_sanitization() = default;
    explicit tool_result_sanitization(tool_result_sanitization_options o) : options(std::move(o)) {}

    bool applies_to(std::string_view tool) const {
        return std::find(options.tools.begin(), options.tools.end(), tool) != options.tools.end();
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (!applies_to(req.call->name)) return next(req);
        return map_response(req, next, [](tool_response r) {
            sanitize(r.msg);
            return r;
        });
    }

    /// Neutralises every text block of `m`; true when one changed.
    static bool sanitize(message& m) {
        bool changed = false;
        for (auto& b : m.content)
            if (b.is_text()) changed = detail::neutralize_in_place(b.text) || changed;
        return changed;
    }
};

} // namespace agentware

#endif
