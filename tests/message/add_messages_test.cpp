// message/add_messages.hpp: the merge rule of the message list (append, replace by id, remove).
#include <agentware/message/add_messages.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace agentware;

namespace {

std::vector<message> ids_only(std::initializer_list<const char*> ids) {
    std::vector<message> out;
    for (const char* id : ids) {
        message m = human_message(std::string("text of ") + id);
        m.id = id;
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<std::string> ids_of(const std::vector<message>& list) {
    std::vector<std::string> out;
    for (const message& m : list)
        out.push_back(m.id);
    return out;
}

} // namespace

TEST_CASE("add_messages gives messages without id a fresh id and appends them", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    add_messages(list, {human_message("one"), ai_message("two")});
    REQUIRE(list.size() == 3);
    CHECK(list[1].text() == "one");
    CHECK(list[2].text() == "two");
    CHECK(list[1].id.rfind("msg-", 0) == 0);
    CHECK(list[2].id.rfind("msg-", 0) == 0);
    CHECK(list[1].id != list[2].id);
}

TEST_CASE("add_messages replaces a message with the same id in place", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b", "c"});
    message edited = ai_message("edited");
    edited.id = "b";
    message fresh = human_message("new");
    fresh.id = "d";
    add_messages(list, {edited, fresh});
    CHECK(ids_of(list) == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(list[1] == edited);
    CHECK(list[3].text() == "new");
}

TEST_CASE("add_messages finds ids correctly once it switches to a hash index", "[message][add_messages]") {
    std::vector<message> list;
    for (int i = 0; i < 100; ++i) {
        message m = human_message("v1");
        m.id = "id" + std::to_string(i);
        list.push_back(m);
    }
    std::vector<message> update;
    for (int i = 0; i < 100; i += 2) { // 50 replacements, far beyond the linear-search budget
        message m = ai_message("v2");
        m.id = "id" + std::to_string(i);
        update.push_back(m);
    }
    message extra = human_message("extra");
    extra.id = "id100";
    update.push_back(extra);
    message extra_again = human_message("extra v2"); // hits the id appended within this update
    extra_again.id = "id100";
    update.push_back(extra_again);

    add_messages(list, update);
    REQUIRE(list.size() == 101);
    for (int i = 0; i < 100; ++i) {
        CHECK(list[static_cast<std::size_t>(i)].id == "id" + std::to_string(i));
        CHECK(list[static_cast<std::size_t>(i)].text() == (i % 2 == 0 ? "v2" : "v1"));
    }
    CHECK(list[100].text() == "extra v2");
}

TEST_CASE("add_messages deletes by id with remove markers", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b", "c"});
    add_messages(list, {remove_message("a"), remove_message("c")});
    CHECK(ids_of(list) == std::vector<std::string>{"b"});
}

TEST_CASE("add_messages can remove a message added earlier in the same update", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    std::vector<message> update = ids_only({"b"});
    update.push_back(remove_message("b"));
    add_messages(list, update);
    CHECK(ids_of(list) == std::vector<std::string>{"a"});
}

TEST_CASE("add_messages keeps a message that is removed and then sent again", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    message again = ai_message("back");
    again.id = "a";
    add_messages(list, {remove_message("a"), again});
    CHECK(ids_of(list) == std::vector<std::string>{"a", "b"});
    CHECK(list[0].text() == "back");
}

TEST_CASE("add_messages rejects removing an unknown id and leaves the list unchanged",
          "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    const std::vector<message> before = list;
    try {
        add_messages(list, {human_message("would be appended"), remove_message("a"), remove_message("nope")});
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("\"nope\""));
    }
    CHECK(list == before);

    CHECK_THROWS_AS(add_messages(list, {remove_message("")}), std::invalid_argument);
    CHECK(list == before);
}

TEST_CASE("add_messages with remove_all replaces the list by the rest of the update",
          "[message][add_messages]") {
    std::vector<message> list = ids_only({"a", "b"});
    message keep = human_message("summary");
    keep.id = "s";
    add_messages(
        list, {human_message("dropped: before the marker"), remove_all_messages(), keep, ai_message("next")});
    REQUIRE(list.size() == 2);
    CHECK(list[0] == keep);
    CHECK(list[1].text() == "next");
    CHECK_FALSE(list[1].id.empty());

    add_messages(list, {remove_all_messages()});
    CHECK(list.empty());
}

TEST_CASE("add_messages after remove_all cannot remove messages of the old list", "[message][add_messages]") {
    std::vector<message> list = ids_only({"a"});
    CHECK_THROWS_AS(add_messages(list, {remove_all_messages(), remove_message("a")}), std::invalid_argument);
    CHECK(ids_of(list) == std::vector<std::string>{"a"});
}
