#ifndef AGENTWARE_SERVER_FILE_STORE_HPP
#define AGENTWARE_SERVER_FILE_STORE_HPP

// The store that needs no setup: everything in memory, and, given a data
// directory, written through to files, so a restarted server has every thread,
// checkpoint and run back. A thread is a folder, `threads/<id>/`, holding
// `thread.json` (replaced atomically), `checkpoints.jsonl` and `runs.jsonl`
// (one record per line, appended; for a run the last line wins). An append cut
// short by a crash leaves a last line that does not parse: it is skipped with a
// warning, and what came before it is kept.

#include <agentware/detail/format.hpp>
#include <agentware/server/detail/record.hpp>
#include <agentware/server/store.hpp>
#include <agentware/thread/id.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace agentware::server {

class file_store final : public store {
public:
    /// In memory only.
    file_store() = default;
    /// Persisted under `dir` (created when missing); what it holds is loaded now.
    /// `warn` hears of records that could not be read.
    explicit file_store(std::filesystem::path dir, std::function<void(const std::string&)> warn = {})
        : dir_(std::move(dir)), warn_(std::move(warn)) {
        std::filesystem::create_directories(dir_ / "threads");
        load();
    }

    const std::filesystem::path& directory() const noexcept { return dir_; }

    task<void> put_thread(boost::json::object t) override {
        const std::string id = detail::record_key(t, "thread_id");
        std::unique_lock lock(mutex_);
        threads_[id].record = t;
        if (!dir_.empty()) persist(id, {write_kind::thread, boost::json::serialize(t)}, lock);
        co_return;
    }
    task<std::optional<boost::json::object>> thread(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = threads_.find(id);
        if (it == threads_.end()) co_return std::nullopt;
        co_return it->second.record;
    }
    task<bool> update_thread(std::string id, boost::json::object fields,
                             boost::json::object metadata) override {
        std::unique_lock lock(mutex_);
        auto it = threads_.find(id);
        if (it == threads_.end()) co_return false;
        merge_thread(it->second.record, fields, metadata);
        if (!dir_.empty()) persist(id, {write_kind::thread, boost::json::serialize(it->second.record)}, lock);
        co_return true;
    }
    task<bool> erase_thread(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = threads_.find(id);
        if (it == threads_.end()) co_return false;
        for (const auto& r : it->second.runs)
            run_index_.erase(r);
        threads_.erase(it);
        if (!dir_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(folder(std::string(id)), ec);
        }
        co_return true;
    }
    task<std::vector<boost::json::object>> threads() override {
        std::lock_guard lock(mutex_);
        std::vector<boost::json::object> out;
        out.reserve(threads_.size());
        for (const auto& [id, t] : threads_)
            out.push_back(t.record);
        co_return out;
    }

    task<void> add_checkpoint(checkpoint_record c) override {
        const std::string id = detail::record_key(c, "thread_id");
        std::unique_lock lock(mutex_);
        auto& t = known(id);
        // The file keeps the record as given (a run's save: what changed), the memory whole values.
        std::string text = dir_.empty() ? std::string() : boost::json::serialize(c);
        apply_checkpoint_changes(c, t.checkpoints);
        t.checkpoints.push_back(std::move(c));
        if (!dir_.empty()) persist(id, {write_kind::checkpoint, std::move(text)}, lock);
        co_return;
    }
    task<std::vector<checkpoint_record>> checkpoints(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = threads_.find(id);
        co_return it == threads_.end() ? std::vector<checkpoint_record>{} : it->second.checkpoints;
    }
    task<std::optional<checkpoint_record>> last_checkpoint(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = threads_.find(id);
        if (it == threads_.end() || it->second.checkpoints.empty()) co_return std::nullopt;
        co_return it->second.checkpoints.back();
    }
    task<std::size_t> checkpoint_count(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = threads_.find(id);
        co_return it == threads_.end() ? 0 : it->second.checkpoints.size();
    }
    task<void> truncate_checkpoints(std::string id, std::size_t keep) override {
        std::unique_lock lock(mutex_);
        auto it = threads_.find(id);
        if (it == threads_.end() || it->second.checkpoints.size() <= keep) co_return;
        it->second.checkpoints.resize(keep);
        if (!dir_.empty()) {
            std::string text;
            for (const auto& c : it->second.checkpoints)
                text += boost::json::serialize(c) + "\n";
            persist(std::string(id), {write_kind::all_checkpoints, std::move(text)}, lock);
        }
    }

    task<void> put_run(boost::json::object r) override {
        const std::string id = detail::record_key(r, "run_id");
        const std::string thread_id = detail::record_key(r, "thread_id");
        std::unique_lock lock(mutex_);
        auto& t = known(thread_id);
        auto [it, added] = run_index_.try_emplace(id, thread_id);
        if (added) t.runs.push_back(id);
        t.run_records[id] = r;
        if (!dir_.empty()) persist(thread_id, {write_kind::run, boost::json::serialize(r)}, lock);
        co_return;
    }
    task<std::optional<boost::json::object>> run(std::string id) override {
        std::lock_guard lock(mutex_);
        auto it = run_index_.find(id);
        if (it == run_index_.end()) co_return std::nullopt;
        auto t = threads_.find(it->second);
        if (t == threads_.end()) co_return std::nullopt;
        auto r = t->second.run_records.find(std::string(id));
        if (r == t->second.run_records.end()) co_return std::nullopt;
        co_return r->second;
    }
    task<std::vector<boost::json::object>> runs(std::string thread_id) override {
        std::lock_guard lock(mutex_);
        std::vector<boost::json::object> out;
        auto t = threads_.find(thread_id);
        if (t == threads_.end()) co_return out;
        for (const auto& id : t->second.runs)
            out.push_back(t->second.run_records.at(id));
        co_return out;
    }
    task<bool> erase_run(std::string id) override {
        std::unique_lock lock(mutex_);
        auto it = run_index_.find(id);
        if (it == run_index_.end()) co_return false;
        const std::string thread_id = it->second;
        run_index_.erase(it);
        auto t = threads_.find(thread_id);
        if (t == threads_.end()) co_return true;
        std::erase(t->second.runs, std::string(id));
        t->second.run_records.erase(std::string(id));
        if (!dir_.empty())
            persist(thread_id,
                    {write_kind::run,
                     boost::json::serialize(boost::json::object{
                         {"run_id", std::string(id)}, {"thread_id", thread_id}, {"__deleted", true}})},
                    lock);
        co_return true;
    }

private:
    struct thread_data {
        boost::json::object record;
        std::vector<checkpoint_record> checkpoints;
        std::vector<std::string> runs; ///< run ids, oldest first
        std::map<std::string, boost::json::object, std::less<>> run_records;
    };

    enum class write_kind { thread, checkpoint, run, all_checkpoints };
    struct pending_write {
        write_kind kind;
        std::string text;
    };
    struct write_queue {
        std::vector<pending_write> writes;
        bool writing = false;
    };

    // Writes a thread's records in the order they were made, outside the
    // store's lock: the first caller to find the thread's queue idle writes
    // it out (what others add meanwhile included); the others return at once.
    // So no thread's file I/O holds up the others or the readers. (Writes are
    // not synced: as LangGraph's default `async` durability, a crash may lose
    // the last records; recover() rebuilds run and thread status.)
    void persist(const std::string& id, pending_write w, std::unique_lock<std::mutex>& lock) {
        auto& q = write_queues_[id]; // never erased: the reference stays good
        q.writes.push_back(std::move(w));
        if (q.writing) return;
        q.writing = true;
        const auto dir = folder(id);
        while (!q.writes.empty()) {
            std::vector<pending_write> batch;
            batch.swap(q.writes);
            lock.unlock();
            try {
                for (const auto& b : batch)
                    switch (b.kind) {
                    case write_kind::thread:
                        replace_file(dir, "thread.json", b.text);
                        break;
                    case write_kind::checkpoint:
                        append(dir / "checkpoints.jsonl", b.text + "\n");
                        break;
                    case write_kind::run:
                        append(dir / "runs.jsonl", b.text + "\n");
                        break;
                    case write_kind::all_checkpoints:
                        replace_file(dir, "checkpoints.jsonl", b.text);
                        break;
                    }
            } catch (const std::exception& e) {
                warn(agentware::detail::format("thread {}: not saved: {}", id, e.what()));
            }
            lock.lock();
        }
        q.writing = false;
    }

    static void replace_file(const std::filesystem::path& dir, const std::string& name,
                             const std::string& text) {
        std::filesystem::create_directories(dir);
        const auto temp = dir / (name + ".tmp");
        {
            std::ofstream out(temp, std::ios::binary | std::ios::trunc);
            out << text;
            if (!out) throw std::runtime_error("cannot write " + temp.string());
        }
        std::filesystem::rename(temp, dir / name);
    }

    // A record whose thread is not (yet) known: checkpoints and runs of a
    // thread always come after the thread, but a stateless run's may not.
    thread_data& known(const std::string& id) {
        auto& t = threads_[id];
        if (t.record.empty()) t.record = {{"thread_id", id}};
        return t;
    }

    std::filesystem::path folder(const std::string& id) const {
        // Ids come from requests: only valid thread ids name folders.
        validate_thread_id(id);
        return dir_ / "threads" / id;
    }

    void append(const std::filesystem::path& file, const std::string& line) {
        std::filesystem::create_directories(file.parent_path());
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) throw std::runtime_error("cannot open " + file.string() + ": " + std::strerror(errno));
        const std::string& text = line; // whole lines, each ending in a newline
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int err = errno;
                ::close(fd);
                throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(err));
            }
            done += std::size_t(n);
        }
        ::close(fd);
    }

    void warn(const std::string& what) {
        if (warn_) warn_(what);
    }

    template <class F>
    void read_lines(const std::filesystem::path& file, F&& each) {
        std::ifstream in(file, std::ios::binary);
        std::string line;
        for (std::size_t n = 1; std::getline(in, line); ++n) {
            if (line.empty()) continue;
            boost::system::error_code ec;
            auto v = boost::json::parse(line, ec);
            if (ec || !v.is_object()) {
                warn(agentware::detail::format("{}:{}: skipped a record that does not parse ({})",
                                               file.string(), n, ec ? ec.message() : "not an object"));
                continue;
            }
            each(v.get_object());
        }
    }

    void load() {
        for (const auto& entry : std::filesystem::directory_iterator(dir_ / "threads")) {
            if (!entry.is_directory()) continue;
            const std::string id = entry.path().filename().string();
            if (!is_valid_thread_id(id)) continue;
            auto& t = threads_[id];
            std::ifstream in(entry.path() / "thread.json", std::ios::binary);
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            boost::system::error_code ec;
            auto v = boost::json::parse(text, ec);
            if (!ec && v.is_object())
                t.record = v.get_object();
            else
                t.record = {{"thread_id", id}};
            read_lines(entry.path() / "checkpoints.jsonl", [&](boost::json::object& c) {
                try {
                    apply_checkpoint_changes(c, t.checkpoints);
                } catch (const std::invalid_argument& e) {
                    warn(agentware::detail::format("{}: skipped {}",
                                                   (entry.path() / "checkpoints.jsonl").string(), e.what()));
                    return;
                }
                t.checkpoints.push_back(std::move(c));
            });
            read_lines(entry.path() / "runs.jsonl", [&](boost::json::object& r) {
                const auto* rid = r.if_contains("run_id");
                if (rid == nullptr || !rid->is_string()) return;
                const std::string run_id(rid->get_string());
                if (r.contains("__deleted")) {
                    std::erase(t.runs, run_id);
                    t.run_records.erase(run_id);
                    run_index_.erase(run_id);
                    return;
                }
                if (!t.run_records.contains(run_id)) t.runs.push_back(run_id);
                t.run_records[run_id] = std::move(r);
                run_index_[run_id] = id;
            });
        }
    }

    std::filesystem::path dir_;
    std::function<void(const std::string&)> warn_;
    std::mutex mutex_;
    std::map<std::string, thread_data, std::less<>> threads_;
    std::map<std::string, std::string, std::less<>> run_index_; ///< run id -> thread id
    std::map<std::string, write_queue, std::less<>> write_queues_;
};

} // namespace agentware::server

#endif
