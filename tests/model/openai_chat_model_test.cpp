// The OpenAI-compatible client against a local scripted server: answers,
// streams, retries, timeouts, drops, cancellation, keep-alive, concurrency.

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/model_retry.hpp>
#include <agentware/model/openai_chat_model.hpp>

#include "../support/openai_fixtures.hpp"
#include "../support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace json = boost::json;
using namespace agentware;
using namespace agentware::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* key_variable = "AGENTWARE_TEST_OPENAI_KEY";
constexpr const char* test_key = "sk-test-0123456789abcdef";

openai_config config_for(const scripted_http_server& server) {
    ::setenv(key_variable, test_key, 1);
    openai_config c;
    c.base_url = server.base_url();
    c.model = "gpt-test";
    c.api_key_env = key_variable;
    c.http.connect_timeout = 500ms;
    c.http.first_byte_timeout = 300ms;
    c.http.total_timeout = 3s;
    c.retry.initial_backoff = 5ms;
    c.retry.max_backoff = 20ms;
    return c;
}

chat_request hello() {
    chat_request r;
    r.messages = cow_vector<message>(std::vector<message>{human_message("hello")});
    return r;
}

/// The error a call throws.
model_error error_of(openai_chat_model& m, const chat_request& r) {
    try {
        (void)m.invoke(r);
    } catch (const model_error& e) {
        return e;
    }
    FAIL("the call did not throw model_error");
    throw std::logic_error("unreachable");
}

std::vector<std::string> sse_pieces(const std::vector<std::string>& datas) {
    std::vector<std::string> out;
    for (const auto& d : datas)
        out.push_back("data: " + d + "\n\n");
    return out;
}

std::string joined_sse(const std::vector<std::string>& datas) {
    std::string out;
    for (const auto& p : sse_pieces(datas))
        out += p;
    return out;
}

} // namespace

TEST_CASE("openai client: a plain answer, and the request it sent", "[client][openai]") {
    scripted_http_server server;
    server.push(scripted_response::json(openai_plain_answer));
    openai_chat_model model(config_for(server));

    chat_request r = hello();
    r.system_prompt = "be kind";
    r.settings.temperature = 0.1;
    const model_response answer = model.invoke(r);
    CHECK(answer.ai.text() == "Hello! How can I help?");
    CHECK(answer.usage.total_tokens == 29);

    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/v1/chat/completions");
    CHECK(requests[0].header("authorization") == std::string("Bearer ") + test_key);
    CHECK(requests[0].header("content-type") == "application/json");
    const json::value body = requests[0].json();
    CHECK(body.at("model") == "gpt-test");
    CHECK(body.at("temperature") == 0.1);
    CHECK(body.at("messages").as_array().size() == 2);
    CHECK_FALSE(body.as_object().contains("stream"));
}

TEST_CASE("openai client: localhost names reach the loopback without the resolver", "[client][openai]") {
    CHECK(detail::is_localhost_name("localhost"));
    CHECK(detail::is_localhost_name("LocalHost."));
    CHECK(detail::is_localhost_name("ollama.localhost"));
    CHECK_FALSE(detail::is_localhost_name("localhost.example.com"));
    CHECK_FALSE(detail::is_localhost_name("mylocalhost"));
    CHECK_FALSE(detail::is_localhost_name("127.0.0.1"));
    // A name under localhost is in no /etc/hosts: the system resolver would ask DNS and fail.
    scripted_http_server server;
    server.push(scripted_response::json(openai_plain_answer));
    openai_config c = config_for(server);
    c.base_url = "http://agentware-test.localhost:" + std::to_string(server.port()) + "/v1";
    openai_chat_model model(c);
    CHECK(model.invoke(hello()).ai.text() == "Hello! How can I help?");
    CHECK(server.requests().at(0).header("host") ==
          "agentware-test.localhost:" + std::to_string(server.port()));
}

TEST_CASE("openai client: a streamed answer arrives in deltas and is assembled", "[client][openai][stream]") {
    scripted_http_server server;
    auto response = scripted_response::sse(sse_pieces(openai_stream_chunks()));
    response.delay_between = 2ms;
    server.push(response);
    openai_chat_model model(config_for(server));

    std::vector<std::string> texts, thoughts;
    chat_request r = hello();
    r.stream.on_text = [&](std::string_view d) { texts.emplace_back(d); };
    r.stream.on_reasoning = [&](std::string_view d) { thoughts.emplace_back(d); };
    const model_response answer = model.invoke(r);
    CHECK(texts == std::vector<std::string>{"Caf\xC3\xA9 ", "time \xE2\x98\x83."});
    CHECK(thoughts == std::vector<std::string>{"Let me ", "think."});
    REQUIRE(answer.ai.tool_calls.size() == 2);
    CHECK(answer.ai.tool_calls[0].args == json::object{{"city", "Paris"}});
    CHECK(answer.usage == token_usage{11, 22, 33});

    const json::value body = server.requests().at(0).json();
    CHECK(body.at("stream") == true);
    CHECK(body.at("stream_options").at("include_usage") == true);
    CHECK(server.requests().at(0).header("accept") == "text/event-stream");
}

TEST_CASE("openai client: a server that ignores stream still feeds the callback",
          "[client][openai][stream]") {
    scripted_http_server server;
    server.push(scripted_response::json(openai_plain_answer));
    openai_chat_model model(config_for(server));
    std::string text;
    chat_request r = hello();
    r.stream.on_text = [&](std::string_view d) { text += d; };
    CHECK(model.invoke(r).ai.text() == text);
    CHECK(text == "Hello! How can I help?");
}

TEST_CASE("openai client: keep-alive reuses one connection", "[client][openai]") {
    scripted_http_server server;
    for (int i = 0; i < 3; ++i)
        server.push(scripted_response::json(openai_plain_answer));
    openai_chat_model model(config_for(server));
    for (int i = 0; i < 3; ++i)
        CHECK(model.invoke(hello()).ai.text() == "Hello! How can I help?");
    CHECK(server.connections() == 1);

    // A kept-alive connection the server closed is replaced without an error.
    server.push(scripted_response::json(openai_plain_answer).header("Connection", "close"));
    server.push(scripted_response::json(openai_plain_answer));
    CHECK_NOTHROW(model.invoke(hello()));
    CHECK_NOTHROW(model.invoke(hello()));
    CHECK(server.connections() == 2);
}

TEST_CASE("openai client: 429 with Retry-After, then success", "[client][openai][retry]") {
    scripted_http_server server;
    server.push(
        scripted_response::json(
            R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}})",
            429)
            .header("Retry-After", "0.05"));
    server.push(
        scripted_response::json(R"({"error":{"message":"slow down"}})", 429).header("retry-after-ms", "30"));
    server.push(scripted_response::json(openai_plain_answer));
    openai_config c = config_for(server);
    c.retry.initial_backoff = 2s; // would be far too slow: the server's delay must win
    openai_chat_model model(c);
    const auto start = std::chrono::steady_clock::now();
    CHECK(model.invoke(hello()).ai.text() == "Hello! How can I help?");
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(server.request_count() == 3);
    CHECK(took >= 80ms);
    CHECK(took < 1500ms);
}

TEST_CASE("openai client: a Retry-After beyond the limit ends the retries", "[client][openai][retry]") {
    scripted_http_server server;
    server.push(
        scripted_response::json(R"({"error":{"message":"quota"}})", 429).header("Retry-After", "3600"));
    openai_chat_model model(config_for(server));
    const model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::rate_limited);
    CHECK(e.retry_after() == std::chrono::milliseconds(3600000));
    CHECK(server.request_count() == 1);
}

TEST_CASE("openai client: 500 twice, then success, 5xx past the retry budget fails",
          "[client][openai][retry]") {
    scripted_http_server server;
    server.push(scripted_response::json(R"({"error":{"message":"boom"}})", 500));
    server.push(scripted_response::json("<html>bad gateway</html>", 502));
    server.push(scripted_response::json(openai_plain_answer));
    openai_chat_model model(config_for(server));
    CHECK(model.invoke(hello()).ai.text() == "Hello! How can I help?");
    CHECK(server.request_count() == 3);

    for (int i = 0; i < 4; ++i)
        server.push(scripted_response::json(R"({"error":{"message":"still down"}})", 503));
    const model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::server);
    CHECK(e.http_status() == 503);
    CHECK(e.provider_message() == "still down");
    CHECK(server.request_count() == 3 + 4);
}

TEST_CASE("openai client: a request's client_max_retries caps the client's own retries",
          "[client][openai][retry]") {
    // llm_error_handling sets 0 on the calls it wraps (it retries them itself):
    // three middleware attempts then reach a failing provider three times, not twelve.
    scripted_http_server server;
    for (int i = 0; i < 8; ++i)
        server.push(scripted_response::json(R"({"error":{"message":"down"}})", 503));
    openai_chat_model model(config_for(server)); // max_retries 3: four tries alone
    chat_request once = hello();
    once.client_max_retries = 0;
    CHECK(error_of(model, once).http_status() == 503);
    CHECK(server.request_count() == 1);
    chat_request twice = hello();
    twice.client_max_retries = 1;
    error_of(model, twice);
    CHECK(server.request_count() == 1 + 2);
    chat_request more = hello();
    more.client_max_retries = 10; // a cap, never more than the client's policy
    error_of(model, more);
    CHECK(server.request_count() == 1 + 2 + 4);
}

TEST_CASE("openai client under model_retry: N attempts are N provider calls", "[client][openai][retry]") {
    // model_retry sets client_max_retries = 0 on the calls it wraps, as
    // llm_error_handling does: its retries do not multiply with the client's.
    scripted_http_server server;
    for (int i = 0; i < 8; ++i)
        server.push(scripted_response::json(R"({"error":{"message":"down"}})", 503));
    auto alone = make_agent(openai_chat_model(config_for(server)), tool_set{});
    CHECK(alone.invoke("go").reason == agentware::stop_reason::error);
    CHECK(server.request_count() == 4); // the client alone: 1 + its 3 retries
    model_retry_options o;              // 2 retries: 3 attempts
    int waits = 0;
    o.sleep = [&](std::chrono::milliseconds) { ++waits; };
    auto a = make_agent(openai_chat_model(config_for(server)), tool_set{}, model_retry(o));
    const auto r = a.invoke("go");
    REQUIRE(r.reason == agentware::stop_reason::finished);
    CHECK(r.answer().starts_with("Model call failed after 3 attempts with model_error"));
    CHECK(server.request_count() == 4 + 3); // not 4 + 12
    CHECK(waits == 2);
}

TEST_CASE("openai client: 401, 400, 404 and context length are not retried", "[client][openai][errors]") {
    scripted_http_server server;
    openai_chat_model model(config_for(server));

    server.push(scripted_response::json(std::string(R"({"error":{"message":"Incorrect API key provided: )") +
                                            test_key +
                                            R"(.","type":"invalid_request_error","code":"invalid_api_key"}})",
                                        401));
    model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::authentication);
    CHECK(e.http_status() == 401);
    CHECK(std::string(e.what()).find(test_key) == std::string::npos);
    CHECK(e.provider_message().find(test_key) == std::string::npos);
    CHECK(server.request_count() == 1);

    server.push(scripted_response::json(
        R"({"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","param":"temperature","code":null}})",
        400));
    e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::bad_request);
    CHECK(e.provider_message() == "Invalid value for 'temperature'");
    CHECK(std::string(e.what()) == "openai: HTTP 400 (bad_request): Invalid value for 'temperature'");

    server.push(
        scripted_response::json(R"({"error":"model \"nope\" not found, try pulling it first"})", 404));
    CHECK(error_of(model, hello()).kind() == model_error_kind::bad_request);

    server.push(scripted_response::json(
        R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
        400));
    e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::context_length_exceeded);
    CHECK(server.request_count() == 4);
}

TEST_CASE("openai client: a stalled server times out", "[client][openai][timeout]") {
    scripted_http_server server;
    openai_config c = config_for(server);
    c.retry = retry_policy::none();
    openai_chat_model model(c);

    scripted_response stall;
    stall.stall = true;
    server.push(stall);
    auto start = std::chrono::steady_clock::now();
    model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::timeout);
    CHECK(std::chrono::steady_clock::now() - start < 2s);

    // A stream that goes silent part-way times out too, and no half message comes back.
    auto stream = scripted_response::sse(
        sse_pieces({R"({"choices":[{"index":0,"delta":{"content":"partial"}}]})", "[DONE]"}));
    stream.delay_between = 1s;
    server.push(stream);
    chat_request r = hello();
    std::string seen;
    r.stream.on_text = [&](std::string_view d) { seen += d; };
    start = std::chrono::steady_clock::now();
    e = error_of(model, r);
    CHECK(e.kind() == model_error_kind::timeout);
    CHECK(seen == "partial");
    CHECK(std::chrono::steady_clock::now() - start < 900ms);
}

TEST_CASE("openai client: the total timeout bounds a slow stream", "[client][openai][timeout]") {
    scripted_http_server server;
    openai_config c = config_for(server);
    c.retry = retry_policy::none();
    c.http.total_timeout = 250ms;
    openai_chat_model model(c);
    std::vector<std::string> many(50, R"({"choices":[{"index":0,"delta":{"content":"x"}}]})");
    auto stream = scripted_response::sse(sse_pieces(many));
    stream.delay_between = 20ms; // each gap is within first_byte_timeout, the sum is not
    server.push(stream);
    chat_request r = hello();
    r.stream.on_text = [](std::string_view) {};
    const model_error e = error_of(model, r);
    CHECK(e.kind() == model_error_kind::timeout);
    CHECK(std::string(e.what()).find("total timeout") != std::string::npos);
}

TEST_CASE("openai client: a connection dropped mid-stream is an error, never a half message",
          "[client][openai][stream]") {
    scripted_http_server server;
    openai_chat_model model(config_for(server));
    auto stream = scripted_response::sse(sse_pieces(openai_stream_chunks()));
    stream.drop_after = 700;
    server.push(stream);
    chat_request r = hello();
    r.stream.on_text = [](std::string_view) {};
    const model_error e = error_of(model, r);
    CHECK(e.kind() == model_error_kind::connection);
    CHECK(server.request_count() == 1); // text was delivered: not retried

    // Dropped before any delta: retried, and the retry succeeds.
    auto early = scripted_response::sse(sse_pieces(openai_stream_chunks()));
    early.drop_after = 10;
    server.push(early);
    server.push(scripted_response::sse(sse_pieces(openai_stream_chunks())));
    CHECK(model.invoke(r).ai.tool_calls.size() == 2);
}

TEST_CASE("openai client: a server that keeps the body open after [DONE] does not hold the call",
          "[client][openai][stream]") {
    scripted_http_server server;
    openai_chat_model model(config_for(server));
    auto lingering = scripted_response::sse({joined_sse(openai_stream_chunks()), ": still here\n\n"});
    lingering.delay_between = 1s;
    server.push(lingering);
    chat_request r = hello();
    r.stream.on_text = [](std::string_view) {};
    const auto start = std::chrono::steady_clock::now();
    CHECK(model.invoke(r).ai.tool_calls.size() == 2);
    CHECK(std::chrono::steady_clock::now() - start < 250ms);
    // That connection is not reused: the next call opens a new one.
    server.push(scripted_response::json(openai_plain_answer));
    CHECK_NOTHROW(model.invoke(hello()));
    CHECK(server.connections() == 2);
}

TEST_CASE("openai client: a stream cut at every byte offset fails or returns the whole answer",
          "[client][openai][stream]") {
    scripted_http_server server;
    openai_config c = config_for(server);
    c.retry = retry_policy::none();
    openai_chat_model model(c);

    const std::vector<std::string> chunks{
        R"({"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"H\u00e9"}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a\""}}]}}]})",
        R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]})",
        R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})", "[DONE]"};
    const auto pieces = sse_pieces(chunks);
    std::size_t encoded = 5; // the final "0\r\n\r\n"
    for (const auto& p : pieces)
        encoded += fmt::format("{:x}\r\n", p.size()).size() + p.size() + 2;

    chat_request r = hello();
    r.stream.on_text = [](std::string_view) {};
    std::size_t failures = 0, successes = 0;
    for (std::size_t cut = 0; cut < encoded; ++cut) {
        auto s = scripted_response::sse(pieces);
        s.drop_after = cut;
        server.push(s);
        try {
            const model_response a = model.invoke(r);
            ++successes;
            CHECK(a.ai.text() == "H\xC3\xA9");
            REQUIRE(a.ai.tool_calls.size() == 1);
            CHECK(a.ai.tool_calls[0].args == json::object{{"a", 1}});
        } catch (const model_error& e) {
            ++failures;
            const bool expected =
                e.kind() == model_error_kind::connection || e.kind() == model_error_kind::invalid_response;
            CHECK(expected);
        }
    }
    CHECK(failures > 0);
    CHECK(successes > 0); // cuts after the finish chunk lose nothing
    CHECK(server.request_count() == encoded);
}

TEST_CASE("openai client: invalid JSON and unexpected shapes are invalid_response",
          "[client][openai][errors]") {
    scripted_http_server server;
    openai_chat_model model(config_for(server));
    server.push(scripted_response::json("{\"choices\": [ {\"message\": "));
    CHECK(error_of(model, hello()).kind() == model_error_kind::invalid_response);
    server.push(scripted_response::json(R"({"object":"list","data":[]})"));
    CHECK(error_of(model, hello()).kind() == model_error_kind::invalid_response);

    chat_request r = hello();
    r.stream.on_text = [](std::string_view) {};
    server.push(scripted_response::sse(
        {"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n", "data: {oops\n\n"}));
    CHECK(error_of(model, r).kind() == model_error_kind::invalid_response);
    server.push(scripted_response::sse(
        {"data: {\"error\":{\"message\":\"prompt is too long\",\"type\":\"invalid_request_error\"}}\n\n"}));
    CHECK(error_of(model, r).kind() == model_error_kind::context_length_exceeded);
    CHECK(server.pending() == 0);
}

TEST_CASE("openai client: connection refused is retried, then a connection error",
          "[client][openai][errors]") {
    unsigned short port = 0;
    {
        scripted_http_server gone;
        port = gone.port();
    }
    ::setenv(key_variable, test_key, 1);
    openai_config c;
    c.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    c.model = "m";
    c.api_key_env = key_variable;
    c.retry.initial_backoff = 1ms;
    c.retry.max_retries = 2;
    openai_chat_model model(c);
    const model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::connection);
    CHECK(std::string(e.what()).find("127.0.0.1") != std::string::npos);
}

TEST_CASE("openai client: configuration errors name what is missing", "[client][openai][config]") {
    ::unsetenv("AGENTWARE_TEST_UNSET_KEY");
    openai_config c;
    c.model = "m";
    c.api_key_env = "AGENTWARE_TEST_UNSET_KEY";
    try {
        openai_chat_model m(c);
        FAIL("no error");
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::configuration);
        CHECK(std::string(e.what()).find("AGENTWARE_TEST_UNSET_KEY") != std::string::npos);
    }
    c.api_key_env = "";
    c.base_url = "ftp://example.com";
    CHECK_THROWS_AS(openai_chat_model(c), model_error);
    c.base_url = "http://localhost:11434/v1";
    CHECK_NOTHROW(openai_chat_model(c)); // local servers need no key
}

TEST_CASE("openai client: cancel() from another thread stops a blocking call promptly",
          "[client][openai][cancel]") {
    scripted_http_server server;
    openai_chat_model model(config_for(server));
    scripted_response stall;
    stall.stall = true;
    server.push(stall);

    openai_config c = config_for(server);
    std::thread canceller([&] {
        std::this_thread::sleep_for(50ms);
        model.cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    const model_error e = error_of(model, hello());
    canceller.join();
    CHECK(e.kind() == model_error_kind::cancelled);
    CHECK(std::chrono::steady_clock::now() - start < 250ms);

    // A std::stop_token cancels one call, also while it waits to retry.
    server.push(scripted_response::json("{}", 503).header("Retry-After", "10"));
    openai_config slow = config_for(server);
    slow.retry.max_retry_after = std::chrono::milliseconds(60000);
    openai_chat_model model2(slow);
    std::stop_source source;
    std::thread stopper([&] {
        std::this_thread::sleep_for(50ms);
        source.request_stop();
    });
    try {
        (void)model2.invoke(hello(), source.get_token());
        FAIL("no error");
    } catch (const model_error& e2) {
        CHECK(e2.kind() == model_error_kind::cancelled);
    }
    stopper.join();
}

TEST_CASE("openai client: many concurrent async calls share one io_context", "[client][openai][async]") {
    scripted_http_server server;
    constexpr int calls = 8;
    for (int i = 0; i < calls; ++i) {
        auto s = scripted_response::sse(sse_pieces(openai_stream_chunks()));
        s.delay_between = 1ms;
        server.push(s);
    }
    boost::asio::io_context io; // before the model: its idle connections are bound to the context
    openai_chat_model model(config_for(server));
    int done = 0;
    std::vector<std::string> texts(calls);
    std::vector<chat_request> requests(calls, hello());
    for (int i = 0; i < calls; ++i) {
        requests[i].stream.on_text = [&texts, i](std::string_view d) { texts[i] += d; };
        boost::asio::co_spawn(io, model.async_invoke(requests[i]),
                              [&](std::exception_ptr e, model_response r) {
                                  CHECK(e == nullptr);
                                  CHECK(r.ai.tool_calls.size() == 2);
                                  ++done;
                              });
    }
    io.run();
    CHECK(done == calls);
    for (const auto& t : texts)
        CHECK(t == "Caf\xC3\xA9 time \xE2\x98\x83.");
    model.close_idle_connections();
}

TEST_CASE("openai client: Asio cancellation of the awaiting coroutine cancels the call",
          "[client][openai][async][cancel]") {
    scripted_http_server server;
    scripted_response stall;
    stall.stall = true;
    server.push(stall);
    openai_chat_model model(config_for(server));
    boost::asio::io_context io;
    boost::asio::cancellation_signal signal;
    std::exception_ptr error;
    const chat_request r = hello();
    boost::asio::co_spawn(io, model.async_invoke(r),
                          boost::asio::bind_cancellation_slot(
                              signal.slot(), [&](std::exception_ptr e, model_response) { error = e; }));
    boost::asio::steady_timer timer(io, 50ms);
    timer.async_wait(
        [&](boost::system::error_code) { signal.emit(boost::asio::cancellation_type::terminal); });
    const auto start = std::chrono::steady_clock::now();
    io.run();
    CHECK(std::chrono::steady_clock::now() - start < 250ms);
    REQUIRE(error != nullptr);
    try {
        std::rethrow_exception(error);
    } catch (const model_error& e) {
        CHECK(e.kind() == model_error_kind::cancelled);
    }
    model.close_idle_connections();
}

TEST_CASE("openai client: HTTPS goes through HTTPS_PROXY with CONNECT", "[client][openai][proxy]") {
    scripted_http_server proxy;
    proxy.push(scripted_response::json("", 403));
    ::setenv(key_variable, test_key, 1);
    openai_config c;
    c.base_url = "https://api.example.com/v1";
    c.model = "m";
    c.api_key_env = key_variable;
    c.http.proxy = "http://user:pw@127.0.0.1:" + std::to_string(proxy.port());
    c.retry = retry_policy::none();
    openai_chat_model model(c);
    const model_error e = error_of(model, hello());
    CHECK(e.kind() == model_error_kind::connection);
    CHECK(std::string(e.what()).find("refused the tunnel") != std::string::npos);
    const auto seen = proxy.requests();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].method == "CONNECT");
    CHECK(seen[0].target == "api.example.com:443");
    CHECK(seen[0].header("proxy-authorization") == "Basic dXNlcjpwdw==");
    CHECK(seen[0].header("authorization").empty()); // the key never goes to the proxy

    CHECK(detail::no_proxy_covers("localhost, .internal.net,example.com:443", "api.internal.net"));
    CHECK(detail::no_proxy_covers("example.com", "example.com"));
    CHECK_FALSE(detail::no_proxy_covers("example.com", "badexample.com"));
    CHECK(detail::no_proxy_covers("*", "anything"));
}
