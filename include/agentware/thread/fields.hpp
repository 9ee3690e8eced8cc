#ifndef AGENTWARE_THREAD_FIELDS_HPP
#define AGENTWARE_THREAD_FIELDS_HPP

// The state fields DeerFlow's runtime middlewares share (its ThreadState):
// thread_data, sandbox, artifacts, uploaded_files and viewed_images, with
// their merge rules and JSON forms. Several middlewares (and their tools) read
// or write the same field, so the field types live here, not in one of them.
//
// "None" in DeerFlow's reducers: an update that does not name a field leaves
// it alone, which is what "new None => keep existing" means there. Fields that
// DeerFlow types as optional (thread_data, sandbox, uploaded_files) are
// std::optional here and serialise to null when unset.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/state/update.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentware {

/// Host paths of a thread's three directories (DeerFlow's ThreadDataState).
struct thread_paths {
    std::string workspace_path;
    std::string uploads_path;
    std::string outputs_path;

    friend bool operator==(const thread_paths&, const thread_paths&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const thread_paths& p) {
        jv = boost::json::object{{"workspace_path", p.workspace_path},
                                 {"uploads_path", p.uploads_path},
                                 {"outputs_path", p.outputs_path}};
    }
    friend thread_paths tag_invoke(boost::json::value_to_tag<thread_paths>, const boost::json::value& jv) {
        json_reader r(jv, "thread_data");
        thread_paths p;
        r.read("workspace_path", p.workspace_path)
            .read("uploads_path", p.uploads_path)
            .read("outputs_path", p.outputs_path)
            .reject_unknown_keys();
        return p;
    }
};

/// Which sandbox a thread holds (DeerFlow's SandboxState). An unset id counts
/// as "no id" in the merge rule, as DeerFlow's missing key does.
struct sandbox_state {
    std::optional<std::string> sandbox_id;

    friend bool operator==(const sandbox_state&, const sandbox_state&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const sandbox_state& s) {
        boost::json::object o;
        o["sandbox_id"] = s.sandbox_id ? boost::json::value(*s.sandbox_id) : boost::json::value(nullptr);
        jv = std::move(o);
    }
    friend sandbox_state tag_invoke(boost::json::value_to_tag<sandbox_state>, const boost::json::value& jv) {
        json_reader r(jv, "sandbox");
        sandbox_state s;
        r.read("sandbox_id", s.sandbox_id).reject_unknown_keys();
        return s;
    }
};

/// One file of the current run's uploads, as UploadsMiddleware records it.
struct uploaded_file {
    std::string filename;
    std::uint64_t size = 0;
    std::string path;      ///< always the virtual path /mnt/user-data/uploads/{filename}
    std::string extension; ///< lower-cased suffix with its dot, "" when none

    friend bool operator==(const uploaded_file&, const uploaded_file&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const uploaded_file& f) {
        jv = boost::json::object{
            {"filename", f.filename}, {"size", f.size}, {"path", f.path}, {"extension", f.extension}};
    }
    friend uploaded_file tag_invoke(boost::json::value_to_tag<uploaded_file>, const boost::json::value& jv) {
        json_reader r(jv);
        uploaded_file f;
        r.read("filename", f.filename)
            .read("size", f.size)
            .read("path", f.path)
            .read("extension", f.extension)
            .reject_unknown_keys();
        return f;
    }
};

/// What view_image recorded about one image: metadata only, never the bytes
/// (base64 in the state bloated DeerFlow's checkpoints).
struct viewed_image {
    std::string mime_type;
    std::uint64_t size = 0;
    std::string actual_path; ///< host path the image was read from

    friend bool operator==(const viewed_image&, const viewed_image&) = default;
};

/// Virtual image path -> what was viewed, in insertion order (the order the
/// images are shown to the model). JSON form: an object keyed by path.
class viewed_image_map {
public:
    using entry = std::pair<std::string, viewed_image>;

    viewed_image_map() = default;
    viewed_image_map(std::initializer_list<entry> es) {
        for (const auto& e : es)
            insert_or_assign(e.first, e.second);
    }

    /// Adds the image, or replaces the entry of the same path in place.
    void insert_or_assign(std::string path, viewed_image img) {
        for (auto& e : entries_)
            if (e.first == path) {
                e.second = std::move(img);
                return;
            }
        entries_.emplace_back(std::move(path), std::move(img));
    }
    const viewed_image* find(std::string_view path) const noexcept {
        for (const auto& e : entries_)
            if (e.first == path) return &e.second;
        return nullptr;
    }
    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }
    void clear() noexcept { entries_.clear(); }
    auto begin() const noexcept { return entries_.begin(); }
    auto end() const noexcept { return entries_.end(); }

    friend bool operator==(const viewed_image_map&, const viewed_image_map&) = default;

    friend void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const viewed_image_map& m) {
        boost::json::object o;
        for (const auto& [path, img] : m.entries_)
            o[path] = boost::json::object{
                {"mime_type", img.mime_type}, {"size", img.size}, {"actual_path", img.actual_path}};
        jv = std::move(o);
    }
    friend viewed_image_map tag_invoke(boost::json::value_to_tag<viewed_image_map>,
                                       const boost::json::value& jv) {
        const auto& o = json_read_as<boost::json::object>(jv, "viewed_images");
        viewed_image_map m;
        for (const auto& kv : o) {
            json_reader r(kv.value(), detail::json_path("viewed_images", kv.key()));
            viewed_image img;
            r.read("mime_type", img.mime_type)
                .read("size", img.size)
                .read("actual_path", img.actual_path)
                .reject_unknown_keys();
            m.insert_or_assign(std::string(kv.key()), std::move(img));
        }
        return m;
    }

private:
    std::vector<entry> entries_;
};

/// `thread_data`: the thread's directories; last write wins.
struct thread_data_field {
    static constexpr std::string_view name = "thread_data";
    using value_type = std::optional<thread_paths>;
};

/// `sandbox`: the sandbox a thread holds. Merge (DeerFlow's merge_sandbox): an
/// unset update keeps the current value; an unset current value takes the
/// update; equal ids keep the current value (parallel lazy acquisitions of the
/// same sandbox are fine); different ids are a conflict, thrown as state_error
/// "Conflicting sandbox state updates: 'a' != 'b'".
struct sandbox_field {
    static constexpr std::string_view name = "sandbox";
    using value_type = std::optional<sandbox_state>;

    static void merge(value_type& current, value_type&& update) {
        if (!update) return;
        if (!current) {
            current = std::move(update);
            return;
        }
        if (current->sandbox_id == update->sandbox_id) return;
        auto repr = [](const std::optional<std::string>& id) {
            return id ? detail::format("'{}'", *id) : std::string("None");
        };
        throw state_error(detail::format("Conflicting sandbox state updates: {} != {}",
                                         repr(current->sandbox_id), repr(update->sandbox_id)));
    }
};

/// `artifacts`: virtual paths of the files presented to the user. Merge
/// (merge_artifacts): concatenation, then an order-preserving de-duplication.
struct artifacts_field {
    static constexpr std::string_view name = "artifacts";
    using value_type = std::vector<std::string>;

    static void merge(value_type& current, value_type&& update) {
        std::unordered_set<std::string> seen;
        value_type out;
        out.reserve(current.size() + update.size());
        for (auto* list : {&current, &update})
            for (auto& p : *list)
                if (seen.insert(p).second) out.push_back(std::move(p));
        current = std::move(out);
    }
};

/// `uploaded_files`: the uploads of the current run only; last write wins
/// (an empty list clears a stale one).
struct uploaded_files_field {
    static constexpr std::string_view name = "uploaded_files";
    using value_type = std::optional<std::vector<uploaded_file>>;
};

/// `viewed_images`: images the model looked at. Merge (merge_viewed_images):
/// an empty update clears all; otherwise a per-path merge, the update winning.
struct viewed_images_field {
    static constexpr std::string_view name = "viewed_images";
    using value_type = viewed_image_map;

    static void merge(value_type& current, value_type&& update) {
        if (update.empty()) {
            current.clear();
            return;
        }
        for (const auto& [path, img] : update)
            current.insert_or_assign(path, img);
    }
};

} // namespace agentware

#endif
