// A coroutine node hook yields void, jump_to or hook_result; anything else is an error.
#include <agentware/core.hpp>

#include <boost/asio/awaitable.hpp>

struct state {};
struct runtime {};
struct bad_coroutine_before_model {
    boost::asio::awaitable<int> before_model(state&, runtime&);
};

void use() {
    agentware::pipeline<bad_coroutine_before_model> p;
    state s;
    runtime rt;
    p.before_model(s, rt, [](auto) { return 0; });
}
