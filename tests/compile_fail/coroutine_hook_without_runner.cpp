// A chain with a coroutine node hook needs a runner to await it.
#include <agentware/core.hpp>

#include <boost/asio/awaitable.hpp>

struct state {};
struct runtime {};
struct awaits_after_model {
    boost::asio::awaitable<void> after_model(state&, runtime&);
};

void use() {
    agentware::pipeline<awaits_after_model> p;
    state s;
    runtime rt;
    p.after_model(s, rt);
}
