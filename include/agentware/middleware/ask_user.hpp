#ifndef AGENTWARE_MIDDLEWARE_ASK_USER_HPP
#define AGENTWARE_MIDDLEWARE_ASK_USER_HPP

// ask_user: the Swift DeepAgents AskUserMiddleware. It offers the model an
// `ask_user` tool for a question to the user in the middle of a run. With a
// handler, the call waits for the handler's answer and the run goes on; with
// none, the run pauses (interrupt, payload {"type": "ask_user", "question":
// ...}) and the resume value is the answer (a string, or {"answer": "..."}).

#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct ask_user_options {
    /// Answers a question in process (the tool call waits for it). Unset: the run pauses.
    std::function<std::string(std::string_view question)> handler;
};

class ask_user {
public:
    static constexpr std::string_view tool_name = "ask_user";
    static constexpr std::string_view tool_description =
        "Ask the user a question and wait for the answer. Use it when you need information or a decision "
        "only the user can give; ask one clear question at a time.";

    ask_user() = default;
    explicit ask_user(ask_user_options o) : options_(std::move(o)) {}

    std::vector<std::shared_ptr<tool_interface>> tools() const {
        return {share_tool(make_tool(
            std::string(tool_name), std::string(tool_description),
            R"({"type":"object","properties":{"question":{"type":"string","description":"The question for the user."}},"required":["question"]})",
            [handler = options_.handler](const boost::json::object& args,
                                         const tool_runtime& rt) -> std::string {
                const std::string question(args.at("question").as_string());
                if (handler) return handler(question);
                return answer_text(
                    rt.interrupt(boost::json::object{{"type", "ask_user"}, {"question", question}}));
            }))};
    }

    /// The answer in a resume value: a string, or the string at "answer".
    static std::string answer_text(const boost::json::value& v) {
        if (v.is_string()) return std::string(v.get_string());
        if (const auto* o = v.if_object())
            if (const auto* a = o->if_contains("answer"); a && a->is_string())
                return std::string(a->get_string());
        return boost::json::serialize(v);
    }

private:
    ask_user_options options_;
};

} // namespace agentware

#endif
