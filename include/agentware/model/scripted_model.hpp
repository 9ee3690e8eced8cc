#ifndef AGENTWARE_MODEL_SCRIPTED_MODEL_HPP
#define AGENTWARE_MODEL_SCRIPTED_MODEL_HPP

#include <agentware/detail/format.hpp>
#include <agentware/model/chat_model.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agentware {

/// A request as the scripted model saw it (a deep copy, unlike chat_request).
struct recorded_request {
    std::vector<message> messages;
    std::string system_prompt;
    std::vector<std::string> tool_names;
    model_settings settings;
};

/// One step of a script: an answer, or a failure the model throws in its
/// place (a provider error scripted for a test or a replay).
struct scripted_step {
    message answer;
    std::optional<model_error> failure;
};

/// A chat model that answers with prepared ai messages, in order, and records
/// every request it is given: for tests, examples and replaying conversations.
///
/// Copies share the script and the records, so a test can keep a copy while the
/// agent owns another. Safe to call from several threads.
class scripted_model {
public:
    struct options {
        bool record_requests = true; ///< off for benchmarks: a record copies the whole history
        bool cycle = false;          ///< start again at the first answer instead of running out
    };

    explicit scripted_model(std::vector<message> answers) : scripted_model(std::move(answers), options{}) {}
    scripted_model(std::vector<message> answers, options opts)
        : shared_(std::make_shared<shared>(std::move(answers), opts)) {}

    /// A script whose steps may fail: a step with a `failure` throws it
    /// (after recording the request) instead of answering.
    static scripted_model with_failures(std::vector<scripted_step> steps) {
        return with_failures(std::move(steps), options{});
    }
    static scripted_model with_failures(std::vector<scripted_step> steps, options opts) {
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

    model_response invoke(const chat_request& request) {
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

    /// Every request so far (empty when recording is off).
    std::vector<recorded_request> requests() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->requests;
    }
    /// How many answers were given.
    std::size_t calls() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->served;
    }
    /// How many scripted answers are still unused (0 in cycle mode at the end of a lap).
    std::size_t remaining() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->answers.size() - shared_->next;
    }

private:
    struct shared {
        shared(std::vector<message> a, options o) : answers(std::move(a)), opts(o) {}
        mutable std::mutex mutex;
        std::vector<message> answers;
        std::vector<std::optional<model_error>> failures; ///< empty, or one per answer
        options opts;
        std::size_t next = 0;
        std::size_t served = 0;
        std::vector<recorded_request> requests;
    };
    std::shared_ptr<shared> shared_;
};

static_assert(chat_model<scripted_model>);

} // namespace agentware

#endif
