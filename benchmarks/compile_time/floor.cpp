// The floor for the getting-started program: the same program written by
// hand against Boost.JSON and Asio, without agentware (a message type, a
// scripted model, one tool taking JSON arguments, a loop that runs a round's
// tool calls on a thread pool and prints a line per round). What any C++
// agent on these libraries pays; agentware's figure is read against it.
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstdio>
#include <functional>
#include <latch>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace json = boost::json;

struct tool_call {
    std::string id, name;
    json::object args;
};

struct message {
    std::string role, text, tool_call_id;
    std::vector<tool_call> calls;
};

struct tool {
    std::string name, description;
    json::object parameters;
    std::function<std::string(const json::object&)> call;
};

int main() {
    json::value schema =
        json::parse(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
                                         "required":["a","b"]})");
    std::map<std::string, tool> tools;
    tools["add"] = tool{"add", "Adds two integers.", schema.as_object(), [](const json::object& args) {
                            return std::to_string(args.at("a").as_int64() + args.at("b").as_int64());
                        }};
    std::vector<message> script{{"ai", "", "", {{"call-1", "add", {{"a", 2}, {"b", 40}}}}},
                                {"ai", "2 + 40 = 42", "", {}}};
    std::vector<message> history{{"human", "What is 2 + 40?", "", {}}};
    boost::asio::thread_pool pool(4);
    std::mutex lock;
    for (std::size_t round = 0; round < script.size(); ++round) {
        std::printf("round %zu, %zu messages so far\n", round, history.size());
        history.push_back(script[round]);
        const std::vector<tool_call> calls = history.back().calls;
        if (calls.empty()) break;
        std::latch done(static_cast<std::ptrdiff_t>(calls.size()));
        for (const tool_call& c : calls)
            boost::asio::post(pool, [&, c] {
                message out{"tool", "", c.id, {}};
                try {
                    out.text = tools.at(c.name).call(c.args);
                } catch (const std::exception& e) {
                    out.text = std::string("Error: ") + e.what() + " " + json::serialize(c.args);
                }
                std::lock_guard g(lock);
                history.push_back(std::move(out));
                done.count_down();
            });
        done.wait();
    }
    std::printf("%s (%s)\n", history.back().text.c_str(), "completed");
    pool.join();
    return 0;
}
