// input_sanitization must be the outermost wrap_model_call: a middleware that
// wraps the model call may not stand before it.
#include <agentware/core.hpp>
#include <agentware/middleware/input_sanitization.hpp>

struct retries_model_calls {
    auto wrap_model_call(auto& req, auto&& next) { return next(req); }
};

agentware::pipeline<retries_model_calls, agentware::input_sanitization> p;
