#ifndef AGENTWARE_MODEL_SCRIPTED_MODEL_HPP
#define AGENTWARE_MODEL_SCRIPTED_MODEL_HPP

#include <agentware/detail/config.hpp>
#include <agentware/model/chat_model.hpp>

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
    AGENTWARE_DECL scripted_model(std::vector<message> answers, options opts);

    /// A script whose steps may fail: a step with a `failure` throws it
    /// (after recording the request) instead of answering.
    static scripted_model with_failures(std::vector<scripted_step> steps) {
        return with_failures(std::move(steps), options{});
    }
    AGENTWARE_DECL static scripted_model with_failures(std::vector<scripted_step> steps, options opts);

    AGENTWARE_DECL model_response invoke(const chat_request& request);

    /// Every request so far (empty when recording is off).
    AGENTWARE_DECL std::vector<recorded_request> requests() const;
    /// How many answers were given.
    AGENTWARE_DECL std::size_t calls() const;
    /// How many scripted answers are still unused (0 in cycle mode at the end of a lap).
    AGENTWARE_DECL std::size_t remaining() const;

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

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/model/impl/scripted_model.ipp>
#endif

#endif
