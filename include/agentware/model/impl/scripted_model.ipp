#ifndef AGENTWARE_MODEL_IMPL_SCRIPTED_MODEL_IPP
#define AGENTWARE_MODEL_IMPL_SCRIPTED_MODEL_IPP

// The definitions of agentware/model/scripted_model.hpp's non-template members: in every translation unit
// that includes it (header-only), or once in <agentware/src.hpp>
// (AGENTWARE_SEPARATE_COMPILATION).

#include <agentware/model/scripted_model.hpp>

#include <agentware/detail/format.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

scripted_model::scripted_model(std::vector<message> answers, options opts)
    : shared_(std::make_shared<shared>(std::move(answers), opts)) {}

scripted_model scripted_model::with_failures(std::vector<scripted_step> steps, options opts) {
    std::vector<message> answers;
    std::vector<std::optional<model_error>> failures;
    answers.reserve(steps.size());
    failures.reserve(steps.size());
    for (auto& step : steps) {
        answers.push_back(std::move(step.answer));
        failures.push_back(std::move(step.failure));
    }
    scripted_model m(std::move(answers), opts);
    m.shared_->failures = std::move(failures);
    return m;
}

model_response scripted_model::invoke(const chat_request& request) {
    std::lock_guard lock(shared_->mutex);
    auto& s = *shared_;
    if (s.opts.record_requests) {
        recorded_request r{request.messages.get(), request.system_prompt, {}, request.settings};
        for (const auto& t : request.tools)
            r.tool_names.push_back(t.name);
        s.requests.push_back(std::move(r));
    }
    if (s.next == s.answers.size()) {
        if (!s.opts.cycle || s.answers.empty())
            throw model_error(
                model_error_kind::configuration,
                detail::format("scripted_model: no scripted answer left (the script has {}, this is "
                               "request {})",
                               s.answers.size(), s.served + 1));
        s.next = 0;
    }
    ++s.served;
    if (s.next < s.failures.size() && s.failures[s.next]) throw *s.failures[s.next++];
    message& answer = s.answers[s.next++];
    if (request.stream.on_text) {
        std::string text = answer.text();
        if (!text.empty()) request.stream.on_text(text);
    }
    if (request.stream.on_reasoning && !answer.reasoning().empty())
        request.stream.on_reasoning(answer.reasoning());
    // Each answer is given once unless the script cycles, so it is handed
    // over rather than copied: the model costs the loop next to nothing.
    if (s.opts.cycle) return model_response{answer, {}};
    return model_response{std::move(answer), {}};
}

std::vector<recorded_request> scripted_model::requests() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->requests;
}

std::size_t scripted_model::calls() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->served;
}

std::size_t scripted_model::remaining() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->answers.size() - shared_->next;
}

} // namespace agentware

#endif
