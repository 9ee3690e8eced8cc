#ifndef AGENTWARE_TESTS_MIDDLEWARE_DEERFLOW_SUPPORT_HPP
#define AGENTWARE_TESTS_MIDDLEWARE_DEERFLOW_SUPPORT_HPP

// Helpers for the thread_data / uploads / sandbox / view_image tests: a fresh
// temporary directory per test (removed at the end), a state with DeerFlow's
// fields, and direct tool calls against it.

#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/message.hpp>
#include <agentware/middleware/clarification.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/loop_detection.hpp>
#include <agentware/middleware/sandbox.hpp>
#include <agentware/middleware/subagent_limit.hpp>
#include <agentware/middleware/thread_data.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/uploads.hpp>
#include <agentware/middleware/view_image.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/parse.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace dftest {

namespace fs = std::filesystem;

struct temp_dir {
    fs::path path;
    temp_dir() {
        static std::atomic<int> counter{0};
        std::random_device rd;
        path = fs::temp_directory_path() / ("agentware-mw-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(counter++) + "-" + std::to_string(rd()));
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec); // does not follow symlinks
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

inline void write(const fs::path& p, std::string_view content) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
}
inline std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

using full_state = agentware::basic_state<
    agentware::type_list<agentware::thread_data_field, agentware::sandbox_field, agentware::artifacts_field,
                         agentware::uploaded_files_field, agentware::viewed_images_field>>;

/// A thread "t1" of user "default" under a fresh base directory, with the
/// sandbox tools (bash included, so tests can see its disabled text) and
/// view_image, called directly.
struct sandbox_env {
    temp_dir base;
    full_state state;
    boost::json::object context;
    std::shared_ptr<agentware::detail::sandbox_tool_context> ctx;
    agentware::tool_set tools;
    agentware::thread_paths paths;

    explicit sandbox_env(agentware::sandbox_options o = {}, agentware::view_image_options vo = {})
        : ctx(std::make_shared<agentware::detail::sandbox_tool_context>()) {
        ctx->options = o;
        paths = agentware::detail::make_thread_paths(base.path, "default", "t1");
        state.get<agentware::thread_data_field>() = paths;
        for (auto& t : agentware::make_sandbox_tools(ctx, true))
            tools.add(t);
        for (auto& t : agentware::view_image(vo).tools())
            tools.add(t);
    }

    fs::path ws() const { return paths.workspace_path; }
    fs::path uploads() const { return paths.uploads_path; }
    fs::path outputs() const { return paths.outputs_path; }
    fs::path outside() const { return base.path / "outside"; }

    agentware::tool_output call(std::string_view name, const boost::json::object& args) {
        agentware::tool_runtime rt;
        rt.thread_id = "t1";
        rt.tool_call_id = "call-1";
        rt.context = &context;
        rt.bind_state(state);
        auto* t = tools.find(name);
        if (!t) throw std::logic_error("no tool " + std::string(name));
        auto out = t->call(args, rt);
        if (!out.update.empty()) state.apply(out.update);
        return out;
    }
    agentware::tool_output call(std::string_view name, std::string_view args_json) {
        return call(name, boost::json::parse(args_json).as_object());
    }
    std::string text(std::string_view name, std::string_view args_json) {
        return call(name, args_json).text();
    }
};

} // namespace dftest

#endif
