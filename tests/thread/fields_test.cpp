// DeerFlow's shared state fields: merge rules and JSON form.
#include <agentware/thread/fields.hpp>

#include "../middleware/deerflow_support.hpp"
#include "../middleware/options_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

using namespace agentware;
using dftest::fs::path;
namespace fs = std::filesystem;
namespace json = boost::json;
using namespace options_test;

TEST_CASE("sandbox merge keeps, takes, accepts equal ids and rejects a conflict", "[middleware][fields]") {
    sandbox_field::value_type cur;
    sandbox_field::merge(cur, std::nullopt);
    CHECK_FALSE(cur.has_value()); // both None

    sandbox_field::merge(cur, sandbox_state{"a"});
    REQUIRE(cur);
    CHECK(cur->sandbox_id == "a"); // existing None takes the new

    sandbox_field::merge(cur, std::nullopt);
    CHECK(cur->sandbox_id == "a"); // new None keeps

    sandbox_field::merge(cur, sandbox_state{"a"});
    CHECK(cur->sandbox_id == "a"); // equal ids: idempotent

    try {
        sandbox_field::merge(cur, sandbox_state{"b"});
        FAIL("no conflict raised");
    } catch (const state_error& e) {
        CHECK(std::string(e.what()) == "Conflicting sandbox state updates: 'a' != 'b'");
    }
    CHECK(cur->sandbox_id == "a");

    sandbox_field::value_type no_id = sandbox_state{};
    CHECK_THROWS_WITH(sandbox_field::merge(no_id, sandbox_state{"a"}),
                      "Conflicting sandbox state updates: None != 'a'");
    sandbox_field::merge(no_id, sandbox_state{}); // missing ids on both sides are equal
    CHECK_FALSE(no_id->sandbox_id);
}

TEST_CASE("a sandbox conflict in a state update is a state_error", "[middleware][fields]") {
    dftest::full_state s;
    state_update u;
    u.set<sandbox_field>(sandbox_state{"x"});
    s.apply(u);
    state_update v;
    v.set<sandbox_field>(sandbox_state{"y"});
    CHECK_THROWS_AS(s.apply(v), state_error);
    CHECK(s.get<sandbox_field>()->sandbox_id == "x");
}

TEST_CASE("artifacts merge concatenates and de-duplicates in order", "[middleware][fields]") {
    artifacts_field::value_type cur{"a", "b"};
    artifacts_field::merge(cur, {"b", "c", "a", "d", "c"});
    CHECK(cur == std::vector<std::string>{"a", "b", "c", "d"});
    artifacts_field::value_type empty;
    artifacts_field::merge(empty, {"x"});
    CHECK(empty == std::vector<std::string>{"x"});
    artifacts_field::merge(empty, {});
    CHECK(empty == std::vector<std::string>{"x"});
}

TEST_CASE("viewed_images merge adds per path, the update winning, and an empty update clears",
          "[middleware][fields]") {
    viewed_image_map cur{{"/a.png", {"image/png", 1, "/h/a.png"}}, {"/b.gif", {"image/gif", 2, "/h/b.gif"}}};
    viewed_images_field::merge(cur, viewed_image_map{{"/b.gif", {"image/gif", 3, "/h/b2.gif"}},
                                                     {"/c.jpg", {"image/jpeg", 4, "/h/c.jpg"}}});
    REQUIRE(cur.size() == 3);
    CHECK(cur.find("/b.gif")->size == 3);
    std::vector<std::string> order;
    for (const auto& [p, img] : cur)
        order.push_back(p);
    CHECK(order == std::vector<std::string>{"/a.png", "/b.gif", "/c.jpg"}); // insertion order kept
    viewed_images_field::merge(cur, viewed_image_map{});
    CHECK(cur.empty());
}

TEST_CASE("thread_data and uploaded_files are last-write fields", "[middleware][fields]") {
    dftest::full_state s;
    state_update u;
    u.set<thread_data_field>(thread_paths{"/w", "/u", "/o"});
    u.set<uploaded_files_field>(
        std::vector<uploaded_file>{{"a.txt", 3, "/mnt/user-data/uploads/a.txt", ".txt"}});
    s.apply(u);
    state_update v;
    v.set<thread_data_field>(thread_paths{"/w2", "/u2", "/o2"});
    v.set<uploaded_files_field>(std::vector<uploaded_file>{});
    s.apply(v);
    CHECK(s.get<thread_data_field>()->workspace_path == "/w2");
    CHECK(s.get<uploaded_files_field>()->empty());
}

TEST_CASE("the shared fields round-trip through JSON, unset ones as null", "[middleware][fields][json]") {
    dftest::full_state s;
    auto empty = boost::json::value_from(s).as_object();
    CHECK(empty.at("thread_data").is_null());
    CHECK(empty.at("sandbox").is_null());
    CHECK(empty.at("uploaded_files").is_null());
    CHECK(empty.at("artifacts").as_array().empty());
    CHECK(empty.at("viewed_images").as_object().empty());

    s.get<thread_data_field>() = thread_paths{"/w", "/u", "/o"};
    s.get<sandbox_field>() = sandbox_state{"local:default:t"};
    s.get<artifacts_field>() = {"/mnt/user-data/outputs/r.md"};
    s.get<uploaded_files_field>() =
        std::vector<uploaded_file>{{"a b.txt", 10, "/mnt/user-data/uploads/a b.txt", ".txt"}};
    s.get<viewed_images_field>().insert_or_assign("/mnt/user-data/workspace/z.png",
                                                  {"image/png", 7, "/h/z.png"});
    s.get<viewed_images_field>().insert_or_assign("/mnt/user-data/workspace/a.png",
                                                  {"image/png", 8, "/h/a.png"});
    auto jv = boost::json::value_from(s);
    CHECK(jv.at("sandbox") == boost::json::parse(R"({"sandbox_id":"local:default:t"})"));
    CHECK(jv.at("thread_data") ==
          boost::json::parse(R"({"workspace_path":"/w","uploads_path":"/u","outputs_path":"/o"})"));
    CHECK(jv.at("viewed_images").at("/mnt/user-data/workspace/z.png") ==
          boost::json::parse(R"({"mime_type":"image/png","size":7,"actual_path":"/h/z.png"})"));
    auto back = boost::json::value_to<dftest::full_state>(jv);
    CHECK(back == s);
    auto first = back.get<viewed_images_field>().begin()->first;
    CHECK(first == "/mnt/user-data/workspace/z.png");
    CHECK_THROWS_AS(boost::json::value_to<dftest::full_state>(boost::json::parse(R"({"sandbox":"x"})")),
                    state_error);
}

TEST_CASE("state fields read their JSON with paths in errors", "[options][json_reader]") {
    const thread_paths p{"/w", "/u", "/o"};
    CHECK(json::value_to<thread_paths>(json::value_from(p)) == p);
    CHECK(read_error<thread_paths>(R"({"workspace_path": 1})") ==
          "thread_data.workspace_path: expected a string, got 1");
    CHECK(read_error<sandbox_state>(R"({"sandbox_id": "a", "id": 2})")
              .starts_with("sandbox.id: unknown key (known: sandbox_id)"));
    CHECK(read_error<viewed_image_map>(R"({"/mnt/a.png": {"size": "big"}})") ==
          R"(viewed_images./mnt/a.png.size: expected an integer, got "big")");
    const viewed_image_map images{{"/mnt/a.png", viewed_image{"image/png", 3, "/host/a.png"}}};
    CHECK(json::value_to<viewed_image_map>(json::value_from(images)) == images);
}
