// model/token_counter.hpp: token estimates, and the provider's figures where an answer reported them.
#include <agentware/model/token_counter.hpp>

#include <agentware/message.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace agentware;

TEST_CASE("token counter: estimates, and the provider's usage where reported", "[tokens]") {
    const token_counter counter;
    CHECK(counter.estimate("") == 0);
    CHECK(counter.estimate("abcd") == 1);
    CHECK(counter.estimate("abcde") == 2);
    CHECK(counter.estimate(human_message(std::string(400, 'x'))) == 103);
    CHECK(counter.estimate(human_message({image_block("https://x/y.png")})) == 3 + 765);

    std::vector<message> history{system_message(std::string(40, 's')), human_message(std::string(80, 'h'))};
    const std::uint64_t estimated = counter.count(history);
    CHECK(estimated == (3 + 10) + (3 + 20));

    message answer = ai_message(std::string(40, 'a'));
    answer.provider.set_usage(token_usage{1000, 50, 1050});
    history.push_back(answer);
    history.push_back(human_message(std::string(8, 'q')));
    CHECK(counter.count(history) == 1050 + 3 + 2);
    CHECK(count_tokens(history) == counter.count(history));
    CHECK(token_counter::reported_tokens(answer) == std::optional<std::uint64_t>(1050));
    CHECK_FALSE(token_counter::reported_tokens(history[1]));

    token_counter dense(token_estimate_options{2.0, 0, 100});
    CHECK(dense.estimate(human_message("abcd")) == 2);
}
