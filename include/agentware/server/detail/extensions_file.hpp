#ifndef AGENTWARE_SERVER_DETAIL_EXTENSIONS_FILE_HPP
#define AGENTWARE_SERVER_DETAIL_EXTENSIONS_FILE_HPP

// DeerFlow's extensions_config.json as the gateway edits it: read whole,
// changed, and written back whole to a temporary file that is renamed over
// the old one (never a torn file), indented as DeerFlow writes it.

#include <agentware/detail/format.hpp>
#include <agentware/memory/storage.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace agentware::server::detail {

/// The file's object; an empty object when the file does not exist. Throws
/// std::runtime_error naming the file when it is not a JSON object.
inline boost::json::object read_extensions_file(const std::filesystem::path& path) {
    auto text = agentware::detail::read_whole(path);
    if (!text) return {};
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(*text, ec);
    if (ec || !v.is_object())
        throw std::runtime_error(agentware::detail::format("{}: not a JSON object ({}); left untouched",
                                                           path.string(), ec ? ec.message() : "wrong type"));
    return std::move(v.get_object());
}

/// JSON indented by two spaces per level (json.dump(indent=2)).
inline void write_indented_json(const boost::json::value& v, std::string& out, int depth = 0) {
    const std::string pad(std::size_t(depth + 1) * 2, ' '), close(std::size_t(depth) * 2, ' ');
    if (const auto* o = v.if_object(); o && !o->empty()) {
        out += "{\n";
        bool first = true;
        for (const auto& kv : *o) {
            if (!first) out += ",\n";
            first = false;
            out += pad + boost::json::serialize(boost::json::string(kv.key())) + ": ";
            write_indented_json(kv.value(), out, depth + 1);
        }
        out += "\n" + close + "}";
    } else if (const auto* a = v.if_array(); a && !a->empty()) {
        out += "[\n";
        for (std::size_t i = 0; i < a->size(); ++i) {
            if (i) out += ",\n";
            out += pad;
            write_indented_json((*a)[i], out, depth + 1);
        }
        out += "\n" + close + "]";
    } else {
        out += boost::json::serialize(v);
    }
}

inline void write_extensions_file(const std::filesystem::path& path, const boost::json::object& doc) {
    std::string text;
    write_indented_json(doc, text);
    text += "\n";
    agentware::detail::atomic_write(path, text);
}

} // namespace agentware::server::detail

#endif
