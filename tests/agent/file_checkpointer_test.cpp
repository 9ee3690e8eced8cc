// agent/file_checkpointer.hpp: the on-disk checkpointer: round trips, continuing threads,
// hostile ids, corrupt files, crashes mid-write and concurrent writers.

#include <agentware/agent/file_checkpointer.hpp>

#include "checkpointer_support.hpp"

#include <catch2/catch.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace agentware;
using namespace std::string_literals;
using checkpointer_test::hostile_ids;
using checkpointer_test::sample_state;

namespace {

/// A fresh, uniquely named directory under the system's temp directory,
/// removed with everything in it at the end of the test.
class temp_dir {
public:
    temp_dir() {
        static std::atomic<int> counter{0};
        std::random_device rd;
        path_ = fs::temp_directory_path() / ("agentware-checkpointer-" + std::to_string(::getpid()) + "-" +
                                             std::to_string(counter++) + "-" + std::to_string(rd()));
        fs::create_directories(path_);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() {
        std::error_code ec;
        fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

void write_file(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("file checkpointer round-trips states through one JSON file per thread", "[checkpointer][file]") {
    temp_dir dir;
    file_checkpointer cp(dir.path());
    CHECK(cp.directory() == dir.path());
    CHECK_FALSE(cp.load("t1").has_value());

    json::object tricky;
    tricky["unicode"] = "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80";
    tricky["not_utf8"] = "\xff\xfe raw bytes";
    tricky["controls"] = "line\nbreak\ttab\x01 nul\0end"s;
    tricky["big"] = std::uint64_t{18446744073709551615ull};
    tricky["negative"] = std::int64_t{-9223372036854775807ll - 1};
    tricky["real"] = 0.1;
    tricky["empty"] = json::object{};
    json::value deep = 1;
    for (int i = 0; i < 200; ++i)
        deep = json::array{std::move(deep)}; // deeper than Boost's default limit of 32
    tricky["deep"] = std::move(deep);

    cp.save("t1", sample_state(3));
    cp.save("tricky", tricky);
    CHECK(cp.load("t1") == std::optional<json::value>(sample_state(3)));
    CHECK(cp.load("tricky") == std::optional<json::value>(tricky));

    CHECK(cp.path_of("t1") == dir.path() / "t1.json");
    CHECK(json::parse(read_file(dir.path() / "t1.json")) == sample_state(3));
    CHECK(entries(dir.path()) == std::vector<std::string>{"t1.json", "tricky.json"}); // no temporaries left
    CHECK(cp.list() == std::vector<std::string>{"t1", "tricky"});

    CHECK(cp.erase("t1"));
    CHECK_FALSE(cp.erase("t1"));
    CHECK_FALSE(cp.load("t1").has_value());
    CHECK(entries(dir.path()) == std::vector<std::string>{"tricky.json"});
}

TEST_CASE("file checkpointer continues a thread from another instance", "[checkpointer][file]") {
    temp_dir dir;
    file_checkpointer{dir.path()}.save("conversation", sample_state(0));

    // A new process would do exactly this: a fresh checkpointer on the same directory.
    file_checkpointer later(dir.path());
    json::value state = *later.load("conversation");
    state.as_object()["messages"].as_array().push_back(json::object{{"role", "user"}, {"content", "turn 1"}});
    state.as_object()["turn"] = 1;
    later.save("conversation", state);

    CHECK(file_checkpointer(dir.path()).load("conversation") == std::optional<json::value>(sample_state(1)));
}

TEST_CASE("file checkpointer creates its directory on the first save only", "[checkpointer][file]") {
    temp_dir dir;
    const fs::path nested = dir.path() / "a" / "b" / "threads";
    file_checkpointer cp(nested);
    CHECK_FALSE(fs::exists(nested));
    CHECK_FALSE(cp.load("t").has_value());
    CHECK(cp.list().empty());
    CHECK_FALSE(cp.erase("t"));
    CHECK(cp.remove_stale_temporaries(std::chrono::seconds(0)) == 0);
    CHECK_FALSE(fs::exists(nested));

    cp.save("t", json::value(42));
    CHECK(fs::is_directory(nested));
    CHECK(cp.load("t") == std::optional<json::value>(42));
    CHECK_THROWS_AS(file_checkpointer(""), std::invalid_argument);
}

TEST_CASE("file checkpointer rejects hostile thread ids before touching the disk", "[checkpointer][file]") {
    temp_dir dir;
    const fs::path store = dir.path() / "store";
    fs::create_directories(store);
    file_checkpointer existing(store);
    file_checkpointer missing(dir.path() / "never-created");

    for (const auto& id : hostile_ids) {
        INFO(id);
        for (file_checkpointer* cp : {&existing, &missing}) {
            CHECK_THROWS_AS(cp->save(id, json::value(1)), std::invalid_argument);
            CHECK_THROWS_AS(cp->load(id), std::invalid_argument);
            CHECK_THROWS_AS(cp->erase(id), std::invalid_argument);
            CHECK_THROWS_AS(cp->path_of(id), std::invalid_argument);
        }
    }
    CHECK_THROWS_WITH(existing.save("../escape", json::value(1)), Catch::Contains("\"../escape\""));
    // Nothing was written anywhere: not in the store, not beside it, no directory created.
    CHECK(entries(store).empty());
    CHECK(entries(dir.path()) == std::vector<std::string>{"store"});
    CHECK(existing.list().empty());
}

TEST_CASE("file checkpointer reports a file that is not JSON as checkpoint_error", "[checkpointer][file]") {
    temp_dir dir;
    file_checkpointer cp(dir.path());
    const std::string file = (dir.path() / "broken.json").string();

    write_file(dir.path() / "broken.json", R"({"messages": [tru]})");
    CHECK_THROWS_AS(cp.load("broken"), checkpoint_error);
    CHECK_THROWS_WITH(cp.load("broken"), Catch::Contains(file) && Catch::Contains("not valid JSON") &&
                                             Catch::Contains("syntax error"));

    write_file(dir.path() / "broken.json", R"({"messages": [{"role":)"); // cut short by a non-atomic writer
    CHECK_THROWS_WITH(cp.load("broken"), Catch::Contains("incomplete JSON"));

    write_file(dir.path() / "broken.json", "");
    CHECK_THROWS_AS(cp.load("broken"), checkpoint_error);
    CHECK_THROWS_WITH(cp.load("broken"), Catch::Contains(file));

    write_file(dir.path() / "broken.json", R"({"a":1} trailing)");
    CHECK_THROWS_AS(cp.load("broken"), checkpoint_error);

    write_file(dir.path() / "broken.json", "\x00\x01\x02"s);
    CHECK_THROWS_AS(cp.load("broken"), checkpoint_error);

    // The broken thread does not affect others, and saving over it repairs it.
    cp.save("fine", json::value("ok"));
    CHECK(cp.load("fine") == std::optional<json::value>("ok"));
    cp.save("broken", json::value("repaired"));
    CHECK(cp.load("broken") == std::optional<json::value>("repaired"));
}

TEST_CASE("a crash mid-write leaves the previous state loadable", "[checkpointer][file]") {
    temp_dir dir;
    file_checkpointer cp(dir.path());
    cp.save("t", sample_state(1));

    // What a writer killed before its rename leaves behind: a partial temporary,
    // and a complete one that was never renamed (with a different pid).
    write_file(dir.path() / ".t.json.99999-1-7.tmp", R"({"messages":[{"role":"us)");
    write_file(dir.path() / ".t.json.99998-2-3.tmp", boost::json::serialize(sample_state(5)));
    // A stray file that is not a checkpoint at all.
    write_file(dir.path() / "notes.txt", "hello");

    CHECK(cp.load("t") == std::optional<json::value>(sample_state(1)));
    CHECK(cp.list() == std::vector<std::string>{"t"});

    // Saving again still works and leaves no new temporaries.
    cp.save("t", sample_state(2));
    CHECK(cp.load("t") == std::optional<json::value>(sample_state(2)));
    CHECK(entries(dir.path()).size() == 4);

    // Young temporaries are kept (a save may still be running); old ones go.
    CHECK(cp.remove_stale_temporaries(std::chrono::hours(1)) == 0);
    CHECK(cp.remove_stale_temporaries(std::chrono::seconds(0)) == 2);
    CHECK(entries(dir.path()) == std::vector<std::string>{"notes.txt", "t.json"});
    CHECK(cp.load("t") == std::optional<json::value>(sample_state(2)));
}

TEST_CASE("a writer killed at a random moment never leaves a torn checkpoint", "[checkpointer][file]") {
    temp_dir dir;
    file_checkpointer cp(dir.path());
    cp.save("t", json::object{{"seq", -1}, {"pad", ""}});
    std::mt19937 rng(12345);
    std::int64_t last_seq = -1;
    for (int round = 0; round < 5; ++round) {
        const ::pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // The child saves states of varying sizes until it is killed.
            try {
                file_checkpointer writer(dir.path());
                for (int i = 0;; ++i)
                    writer.save(
                        "t",
                        json::object{{"seq", i},
                                     {"pad", std::string(static_cast<std::size_t>(i * 7919 % 50000), 'z')}});
            } catch (...) {
            }
            ::_exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 80));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

        const auto state = cp.load("t");
        REQUIRE(state.has_value());
        const auto seq = json::value_to<std::int64_t>(state->at("seq"));
        last_seq = std::max(last_seq, seq);
        CHECK(state->at("pad").as_string().size() ==
              (seq < 0 ? 0u : static_cast<std::size_t>(seq * 7919 % 50000)));
        CHECK(cp.list() == std::vector<std::string>{"t"});
        // At most the one temporary of the interrupted save is left over.
        CHECK(entries(dir.path()).size() <= 2);
        cp.remove_stale_temporaries(std::chrono::seconds(0));
        CHECK(entries(dir.path()) == std::vector<std::string>{"t.json"});
    }
    CHECK(last_seq > 0); // the children did get to write
}

TEST_CASE("file checkpointer reports I/O errors as checkpoint_error naming the path",
          "[checkpointer][file]") {
    temp_dir dir;

    SECTION("the directory path is a regular file") {
        const fs::path not_a_dir = dir.path() / "plain-file";
        write_file(not_a_dir, "x");
        file_checkpointer cp(not_a_dir);
        CHECK_THROWS_AS(cp.save("t", json::value(1)), checkpoint_error);
        CHECK_THROWS_WITH(cp.save("t", json::value(1)), Catch::Contains(not_a_dir.string()));
        CHECK_THROWS_AS(cp.load("t"), checkpoint_error);
        CHECK_THROWS_WITH(cp.load("t"), Catch::Contains("Not a directory"));
        CHECK_THROWS_AS(cp.list(), checkpoint_error);
        CHECK(read_file(not_a_dir) == "x");
    }
    SECTION("a thread's file is a directory") {
        fs::create_directories(dir.path() / "t.json");
        file_checkpointer cp(dir.path());
        CHECK_THROWS_WITH(cp.load("t"), Catch::Contains((dir.path() / "t.json").string()) &&
                                            Catch::Contains("Is a directory"));
        CHECK_THROWS_AS(cp.save("t", json::value(1)), checkpoint_error);
        // The failed save cleaned up its temporary file.
        CHECK(entries(dir.path()) == std::vector<std::string>{"t.json"});
    }
    SECTION("the directory is not writable") {
        if (::geteuid() == 0) return; // root writes anyway
        const fs::path locked = dir.path() / "locked";
        fs::create_directories(locked);
        fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
        file_checkpointer cp(locked);
        CHECK_THROWS_WITH(cp.save("t", json::value(1)),
                          Catch::Contains(locked.string()) && Catch::Contains("Permission denied"));
        fs::permissions(locked, fs::perms::owner_all);
    }
}

TEST_CASE("concurrent saves to one thread leave one complete written state",
          "[checkpointer][file][concurrency]") {
    temp_dir dir;
    file_checkpointer cp(dir.path());
    constexpr int writers = 8;
    constexpr int saves = 200;
    std::atomic<int> bad_loads{0};
    std::atomic<bool> done{false};

    // States of varying sizes, so a torn write would show as invalid JSON.
    const auto state_of = [](int w, int i) {
        return json::value(
            json::object{{"writer", w},
                         {"seq", i},
                         {"pad", std::string(static_cast<std::size_t>((w * 131 + i * 17) % 4000), 'x')}});
    };
    std::thread reader([&] {
        while (!done.load()) {
            try {
                const auto got = cp.load("shared");
                if (got && !(got->is_object() && got->as_object().contains("seq"))) ++bad_loads;
            } catch (const std::exception&) {
                ++bad_loads;
            }
        }
    });
    std::vector<std::thread> threads;
    std::atomic<int> failed_saves{0};
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            for (int i = 0; i < saves; ++i) {
                try {
                    cp.save("shared", state_of(w, i));
                } catch (const std::exception&) {
                    ++failed_saves;
                }
            }
        });
    }
    for (auto& t : threads)
        t.join();
    done = true;
    reader.join();

    CHECK(failed_saves == 0);
    CHECK(bad_loads == 0);
    const auto final_state = cp.load("shared");
    REQUIRE(final_state.has_value());
    const auto writer = json::value_to<int>(final_state->at("writer"));
    // The last rename of all is the last save of the writer that finished last.
    CHECK(*final_state == state_of(writer, saves - 1));
    CHECK(entries(dir.path()) == std::vector<std::string>{"shared.json"});
}

TEST_CASE("concurrent saves to different threads do not interfere", "[checkpointer][file][concurrency]") {
    temp_dir dir;
    constexpr int writers = 8;
    constexpr int saves = 100;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            file_checkpointer cp(dir.path()); // each its own instance, one directory
            const std::string id = "thread-" + std::to_string(w);
            for (int i = 0; i < saves; ++i) {
                try {
                    cp.save(id, json::object{{"owner", w}, {"seq", i}});
                    const auto back = cp.load(id);
                    if (!back || back->at("owner") != w || back->at("seq") != i) ++failures;
                } catch (const std::exception&) {
                    ++failures;
                }
            }
        });
    }
    for (auto& t : threads)
        t.join();
    CHECK(failures == 0);
    file_checkpointer cp(dir.path());
    REQUIRE(cp.list().size() == writers);
    for (int w = 0; w < writers; ++w)
        CHECK(cp.load("thread-" + std::to_string(w)) ==
              std::optional<json::value>(json::object{{"owner", w}, {"seq", saves - 1}}));
    CHECK(entries(dir.path()).size() == static_cast<std::size_t>(writers));
}
