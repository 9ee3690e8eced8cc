// model/any_chat_model.hpp: a chat model whose type is chosen at run time.
#include <agentware/model/any_chat_model.hpp>

#include <agentware/model/openai_chat_model.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <string>

using namespace agentware;
using model_test::ask;

namespace {

struct echo_model {
    model_response invoke(const chat_request& r) {
        return {ai_message("echo: " + r.messages.back().text()), {1, 2, 3}};
    }
};

} // namespace

TEST_CASE("any_chat_model: wraps a blocking-only model for the async loop too", "[any_chat_model]") {
    any_chat_model m(echo_model{}, model_info{"echo", "test", "echo-1"});
    CHECK(m.invoke(ask("x")).ai.text() == "echo: x");
    CHECK(m.info().name == "echo");
    CHECK(m.target<echo_model>() != nullptr);
    CHECK(m.target<openai_chat_model>() == nullptr);
    m.cancel(); // no cancel(): nothing happens

    boost::asio::io_context io;
    std::string got;
    const chat_request r = ask("y");
    boost::asio::co_spawn(io, m.async_invoke(r),
                          [&](std::exception_ptr, model_response resp) { got = resp.ai.text(); });
    io.run();
    CHECK(got == "echo: y");
}
