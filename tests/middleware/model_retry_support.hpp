#ifndef AGENTWARE_TESTS_MIDDLEWARE_MODEL_RETRY_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_MODEL_RETRY_SUPPORT_HPP

// Helpers for the model_retry and model_fallback tests: a model that fails as
// scripted, and a clock that records the waits instead of sleeping.

#include "../agent/support.hpp"

#include <agentware/middleware/model_retry.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace model_retry_test {

using namespace agentware;
using std::chrono::milliseconds;

// Fails with the scripted errors first, then answers.
struct flaky_model {
    struct shared {
        std::mutex m;
        std::deque<std::exception_ptr> failures;
        std::string answer = "fine";
        int calls = 0;
    };
    std::shared_ptr<shared> s = std::make_shared<shared>();

    flaky_model& fail(std::exception_ptr e) {
        s->failures.push_back(e);
        return *this;
    }
    flaky_model& fail_with(model_error_kind k, std::string what = "down") {
        return fail(std::make_exception_ptr(model_error(k, std::move(what))));
    }
    model_response invoke(const chat_request&) {
        std::lock_guard lock(s->m);
        ++s->calls;
        if (!s->failures.empty()) {
            auto e = s->failures.front();
            s->failures.pop_front();
            std::rethrow_exception(e);
        }
        return model_response{ai_message(s->answer), {}};
    }
};

struct fake_clock {
    std::shared_ptr<std::vector<milliseconds>> waits = std::make_shared<std::vector<milliseconds>>();
    std::function<void(milliseconds)> sleeper() {
        return [w = waits](milliseconds d) { w->push_back(d); };
    }
};

inline model_retry_options quick(fake_clock& clock) {
    model_retry_options o;
    o.sleep = clock.sleeper();
    return o;
}

} // namespace model_retry_test

#endif // AGENTWARE_TESTS_MIDDLEWARE_MODEL_RETRY_SUPPORT_HPP
