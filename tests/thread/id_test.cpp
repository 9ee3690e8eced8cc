// thread/id.hpp: which thread ids are valid, and the message an invalid one gets.
#include <agentware/thread/id.hpp>

#include "../agent/checkpointer_support.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

using namespace agentware;
using namespace std::string_literals;
using checkpointer_test::hostile_ids;

TEST_CASE("valid thread ids are 1 to 64 letters, digits, underscores and dashes",
          "[checkpointer][thread_id]") {
    for (const std::string id :
         {"a", "Z", "0", "_", "-", "thread-1", "user_42", "550e8400-e29b-41d4-a716-446655440000"}) {
        INFO(id);
        CHECK(is_valid_thread_id(id));
        CHECK_NOTHROW(validate_thread_id(id));
    }
    CHECK(is_valid_thread_id(std::string(64, 'x')));
    STATIC_REQUIRE(is_valid_thread_id("abc"));
    STATIC_REQUIRE(!is_valid_thread_id("a/b"));
    for (const auto& id : hostile_ids) {
        INFO(id);
        CHECK_FALSE(is_valid_thread_id(id));
        CHECK_THROWS_AS(validate_thread_id(id), std::invalid_argument);
    }
}

TEST_CASE("invalid thread id messages quote the id safely and state the rule", "[checkpointer][thread_id]") {
    const auto message = [](std::string_view id) {
        try {
            validate_thread_id(id);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no exception");
    };
    CHECK(message("../x") ==
          R"(invalid thread id "../x": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-')");
    CHECK(message("") ==
          R"(invalid thread id "" (empty): use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-')");
    // Control characters are escaped so the message stays one printable line.
    CHECK(message("a\0b\n"s) ==
          R"(invalid thread id "a\x00b\n": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-')");
    CHECK(message("say \"hi\"").find(R"("say \"hi\"")") != std::string::npos);
    // Long ids are cut, with their length given.
    const std::string long_message = message(std::string(5000, 'a'));
    CHECK(long_message.size() < 200);
    CHECK(long_message.find("aaaa\"... (5000 bytes long): use 1 to 64") != std::string::npos);
}
