#ifndef AGENTWARE_SERVER_MULTIPART_HPP
#define AGENTWARE_SERVER_MULTIPART_HPP

// multipart/form-data (RFC 7578), as browsers send file uploads: the body is
// split at the boundary the Content-Type names, and each part gives its form
// field name, its file name (when it is a file) and its bytes. The parts are
// views into the body, so a 100 MB upload is not copied.

#include <agentware/detail/format.hpp>

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace agentware::server {

/// One part of a form.
struct form_part {
    std::string name;          ///< the form field (`files`)
    std::string filename;      ///< as the client sent it (unchecked); empty for a plain field
    bool has_filename = false; ///< the part is a file (even with an empty name)
    std::string content_type;  ///< the part's own Content-Type, if any
    std::string_view data;     ///< the bytes, a view into the request body
};

namespace detail {

inline std::string lower_ascii(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

inline std::string_view trim_ascii(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The value of `key=` in a header's parameters (`; name="files"; filename="a.txt"`),
// unquoted; `found` tells an absent parameter from an empty one.
inline std::string header_parameter(std::string_view header, std::string_view key, bool& found) {
    found = false;
    std::size_t at = 0;
    while (at < header.size()) {
        // Skip to the next parameter, outside quotes.
        std::size_t semi = at;
        bool quoted = false;
        for (; semi < header.size(); ++semi) {
            if (header[semi] == '"' && (semi == 0 || header[semi - 1] != '\\')) quoted = !quoted;
            if (header[semi] == ';' && !quoted) break;
        }
        std::string_view param = trim_ascii(header.substr(at, semi - at));
        at = semi + 1;
        const auto eq = param.find('=');
        if (eq == std::string_view::npos) continue;
        if (lower_ascii(trim_ascii(param.substr(0, eq))) != key) continue;
        std::string_view raw = trim_ascii(param.substr(eq + 1));
        found = true;
        if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
            std::string out;
            for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
                if (raw[i] == '\\' && i + 2 < raw.size()) ++i;
                out += raw[i];
            }
            return out;
        }
        return std::string(raw);
    }
    return {};
}

} // namespace detail

/// The boundary of a `multipart/form-data; boundary=...` Content-Type; throws
/// std::invalid_argument when the type is another or names no boundary.
inline std::string multipart_boundary(std::string_view content_type) {
    const std::string type =
        detail::lower_ascii(detail::trim_ascii(content_type.substr(0, content_type.find(';'))));
    if (type != "multipart/form-data")
        throw std::invalid_argument(
            agentware::detail::format("expected a multipart/form-data body, got Content-Type \"{}\"",
                                      std::string(content_type.substr(0, 100))));
    bool found = false;
    std::string boundary = detail::header_parameter(content_type, "boundary", found);
    if (boundary.empty() || boundary.size() > 200)
        throw std::invalid_argument("the multipart/form-data Content-Type has no boundary");
    return boundary;
}

/// The parts of a multipart/form-data body. Throws std::invalid_argument
/// naming what is wrong for a body that does not follow the format.
inline std::vector<form_part> parse_multipart(std::string_view body, std::string_view content_type) {
    const std::string delimiter = "--" + multipart_boundary(content_type);
    std::vector<form_part> parts;
    // The first delimiter starts the body or a line (a preamble may precede it).
    std::size_t at = 0;
    if (!body.starts_with(delimiter)) {
        at = body.find("\r\n" + delimiter);
        if (at == std::string_view::npos)
            throw std::invalid_argument("the multipart body has no boundary line");
        at += 2;
    }
    const std::string next_delimiter = "\r\n" + delimiter;
    for (;;) {
        at += delimiter.size();
        if (body.substr(at, 2) == "--") return parts; // the closing delimiter
        // Transport padding, then the line break ending the boundary line.
        while (at < body.size() && (body[at] == ' ' || body[at] == '\t'))
            ++at;
        if (body.substr(at, 2) != "\r\n")
            throw std::invalid_argument("a multipart boundary line is malformed");
        at += 2;
        const std::size_t head_end = body.find("\r\n\r\n", at);
        const std::size_t data_end = body.find(next_delimiter, at);
        if (data_end == std::string_view::npos)
            throw std::invalid_argument("the multipart body ends before its closing boundary");
        form_part part;
        std::size_t data_at = 0;
        if (body.substr(at, 2) == "\r\n") { // no headers at all
            data_at = at + 2;
        } else {
            if (head_end == std::string_view::npos || head_end > data_end)
                throw std::invalid_argument("a multipart part has no blank line after its headers");
            std::string_view headers = body.substr(at, head_end - at + 2);
            data_at = head_end + 4;
            while (!headers.empty()) {
                const auto nl = headers.find("\r\n");
                const std::string_view line = headers.substr(0, nl);
                headers.remove_prefix(nl == std::string_view::npos ? headers.size() : nl + 2);
                const auto colon = line.find(':');
                if (colon == std::string_view::npos) continue;
                const std::string key = detail::lower_ascii(detail::trim_ascii(line.substr(0, colon)));
                const std::string_view value = detail::trim_ascii(line.substr(colon + 1));
                if (key == "content-disposition") {
                    bool found = false;
                    part.name = detail::header_parameter(value, "name", found);
                    part.filename = detail::header_parameter(value, "filename", part.has_filename);
                } else if (key == "content-type") {
                    part.content_type = std::string(value);
                }
            }
        }
        part.data = body.substr(data_at, data_end - data_at);
        parts.push_back(std::move(part));
        at = data_end + 2;
    }
}

} // namespace agentware::server

#endif
