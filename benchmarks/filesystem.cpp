// The filesystem tools beside the shell: grep (ours: the disk backend's
// literal search; theirs: `grep -rn`), glob (ours; theirs: `find -name`) and
// read_file (a 100-line window of a large file, numbered; theirs: `sed -n`),
// on a generated tree whose size in MB is AGENTWARE_FS_BENCH_MB (default 100).
// Then ls and read_file on the state backend with 100 and with 10,000 files
// in the state: the cost per call must not grow with the files.

#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/middleware/filesystem.hpp>
#include <agentware/state/basic_state.hpp>

#include <benchmark/benchmark.h>
#include <boost/json/parse.hpp>
#include <boost/json/src.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

namespace {

namespace stdfs = std::filesystem;

// 20 directories of files of 256 KB of word lines; one line in 500 holds "needle".
const stdfs::path& tree() {
    static const stdfs::path root = [] {
        const char* env = std::getenv("AGENTWARE_FS_BENCH_MB");
        const std::size_t mb = env ? std::strtoul(env, nullptr, 10) : 100;
        stdfs::path dir = stdfs::temp_directory_path() / ("agentware-fs-bench-" + std::to_string(::getpid()));
        stdfs::create_directories(dir);
        std::mt19937 rng(42);
        const char* words[] = {"alpha", "beta", "gamma", "delta", "omega", "lambda", "kappa", "sigma"};
        const std::size_t file_bytes = 256 * 1024, files = mb * 4;
        for (std::size_t f = 0; f < files; ++f) {
            stdfs::path sub = dir / ("d" + std::to_string(f % 20)) / ("s" + std::to_string(f % 7));
            stdfs::create_directories(sub);
            std::string text;
            std::size_t line = 0;
            while (text.size() < file_bytes) {
                for (int w = 0; w < 10; ++w) {
                    text += words[rng() % 8];
                    text += ' ';
                }
                if (++line % 500 == 0) text += "needle";
                text += '\n';
            }
            std::ofstream(sub / ("f" + std::to_string(f) + (f % 3 ? ".txt" : ".log"))) << text;
        }
        return dir;
    }();
    return root;
}

struct cleanup {
    ~cleanup() {
        std::error_code ec;
        const auto dir = stdfs::temp_directory_path() / ("agentware-fs-bench-" + std::to_string(::getpid()));
        stdfs::remove_all(dir, ec);
        stdfs::remove(dir.string() + ".grep-out", ec);
    }
} remove_tree_at_exit;

void run_shell(benchmark::State& state, const std::string& cmd) {
    for (auto _ : state)
        if (std::system(cmd.c_str()) < 0) state.SkipWithError("could not run the command");
}

void grep_ours(benchmark::State& state) {
    agentware::disk_backend b(tree().string());
    std::size_t n = 0;
    for (auto _ : state) {
        auto r = b.grep("needle", "/", "", 1000000);
        n = r.matches.size();
        benchmark::DoNotOptimize(r);
    }
    state.counters["matches"] = static_cast<double>(n);
}
// Into a file: GNU grep stops at the first match when its output is /dev/null.
void grep_rn(benchmark::State& state) {
    run_shell(state, "grep -rn needle " + tree().string() + " > " + tree().string() + ".grep-out");
}

void glob_ours(benchmark::State& state) {
    agentware::disk_backend b(tree().string());
    for (auto _ : state) {
        auto r = b.glob("*.log", "/");
        benchmark::DoNotOptimize(r);
    }
}
void glob_find(benchmark::State& state) {
    run_shell(state, "find " + tree().string() + " -name '*.log' > /dev/null");
}

// The same searches through the tools the model calls (arguments, path checks,
// the backend, the answer's text): what the tools add over the backend.
std::shared_ptr<agentware::tool_interface> tool_named(const agentware::filesystem& fs,
                                                      std::string_view name) {
    for (const auto& t : fs.tools())
        if (t->schema().name == name) return t;
    throw std::runtime_error("the filesystem middleware has no tool " + std::string(name));
}
void run_tool(benchmark::State& state, std::string_view name, const char* args_json) {
    agentware::filesystem_options o;
    o.grep_max_count = 1000000; // every match, as grep -rn finds (the default stops at 1,000)
    agentware::filesystem fs(agentware::disk_backend(tree().string()), o);
    agentware::basic_state<agentware::type_list<agentware::files_field>> st;
    agentware::tool_runtime rt;
    rt.bind_state(st);
    auto tool = tool_named(fs, name);
    auto args = boost::json::parse(args_json).as_object();
    for (auto _ : state) {
        auto out = tool->call(args, rt);
        benchmark::DoNotOptimize(out);
    }
}
void grep_tool(benchmark::State& state) {
    run_tool(state, "grep", R"({"pattern": "needle", "path": "/", "output_mode": "content"})");
}
void glob_tool(benchmark::State& state) { run_tool(state, "glob", R"({"pattern": "*.log", "path": "/"})"); }

// read_file through the tool (validation, backend, numbering) of lines 2000-2099.
void read_file_ours(benchmark::State& state) {
    agentware::filesystem fs(agentware::disk_backend(tree().string()));
    agentware::basic_state<agentware::type_list<agentware::files_field>> st;
    agentware::tool_runtime rt;
    rt.bind_state(st);
    auto args =
        boost::json::parse(R"({"file_path": "/d0/s0/f0.log", "offset": 2000, "limit": 100})").as_object();
    for (auto _ : state) {
        auto out = fs.tools()[1]->call(args, rt);
        benchmark::DoNotOptimize(out);
    }
}
void read_file_sed(benchmark::State& state) {
    run_shell(state, "sed -n '2001,2100p' " + (tree() / "d0" / "s0" / "f0.log").string() + " > /dev/null");
}

// The state backend: ls of a 10-entry directory and read_file, with state.range(0) files in the state.
struct state_files {
    agentware::basic_state<agentware::type_list<agentware::files_field>> st;
    explicit state_files(std::size_t n) {
        auto& files = agentware::get<agentware::files_field>(st);
        for (std::size_t i = 0; i < n; ++i)
            files["/bulk/d" + std::to_string(i / 100) + "/f" + std::to_string(i)] =
                agentware::file_data{"x\ny\n", "utf-8", {}, {}};
        for (int i = 0; i < 10; ++i)
            files["/work/f" + std::to_string(i)] = agentware::file_data{"one\ntwo\nthree\n", "utf-8", {}, {}};
    }
};

void state_ls(benchmark::State& state) {
    state_files s(static_cast<std::size_t>(state.range(0)));
    agentware::filesystem fs;
    agentware::tool_runtime rt;
    rt.bind_state(s.st);
    auto args = boost::json::parse(R"({"path": "/work"})").as_object();
    for (auto _ : state) {
        auto out = fs.tools()[0]->call(args, rt);
        benchmark::DoNotOptimize(out);
    }
}
void state_read_file(benchmark::State& state) {
    state_files s(static_cast<std::size_t>(state.range(0)));
    agentware::filesystem fs;
    agentware::tool_runtime rt;
    rt.bind_state(s.st);
    auto args = boost::json::parse(R"({"file_path": "/work/f3"})").as_object();
    for (auto _ : state) {
        auto out = fs.tools()[1]->call(args, rt);
        benchmark::DoNotOptimize(out);
    }
}

} // namespace

BENCHMARK(grep_ours)->Unit(benchmark::kMillisecond);
BENCHMARK(grep_rn)->Unit(benchmark::kMillisecond);
BENCHMARK(grep_tool)->Unit(benchmark::kMillisecond);
BENCHMARK(glob_ours)->Unit(benchmark::kMillisecond);
BENCHMARK(glob_find)->Unit(benchmark::kMillisecond);
BENCHMARK(glob_tool)->Unit(benchmark::kMillisecond);
BENCHMARK(read_file_ours)->Unit(benchmark::kMicrosecond);
BENCHMARK(read_file_sed)->Unit(benchmark::kMicrosecond);
BENCHMARK(state_ls)->Arg(100)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(state_read_file)->Arg(100)->Arg(10000)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
