#ifndef AGENTWARE_SERVER_DETAIL_HTTP_FILES_HPP
#define AGENTWARE_SERVER_DETAIL_HTTP_FILES_HPP

// What serving files over HTTP needs: a Content-Type from a file name, URL
// and Content-Disposition encoding, one byte range, and reading a file whole.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace agentware::server::detail {

/// The media type of a file name by its extension ("" when unknown), as
/// Python's mimetypes gives it for the common kinds.
inline std::string_view media_type_of(const std::filesystem::path& name) {
    std::string ext = name.extension().string();
    for (auto& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    struct entry {
        std::string_view ext, type;
    };
    static constexpr entry table[] = {
        {".txt", "text/plain"},
        {".log", "text/plain"},
        {".md", "text/markdown"},
        {".markdown", "text/markdown"},
        {".html", "text/html"},
        {".htm", "text/html"},
        {".xhtml", "application/xhtml+xml"},
        {".svg", "image/svg+xml"},
        {".css", "text/css"},
        {".js", "text/javascript"},
        {".mjs", "text/javascript"},
        {".json", "application/json"},
        {".csv", "text/csv"},
        {".tsv", "text/tab-separated-values"},
        {".xml", "text/xml"},
        {".py", "text/x-python"},
        {".c", "text/x-c"},
        {".h", "text/x-c"},
        {".sh", "application/x-sh"},
        {".yaml", "application/yaml"},
        {".yml", "application/yaml"},
        {".png", "image/png"},
        {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"},
        {".gif", "image/gif"},
        {".webp", "image/webp"},
        {".bmp", "image/bmp"},
        {".ico", "image/vnd.microsoft.icon"},
        {".pdf", "application/pdf"},
        {".zip", "application/zip"},
        {".gz", "application/gzip"},
        {".tar", "application/x-tar"},
        {".mp3", "audio/mpeg"},
        {".wav", "audio/x-wav"},
        {".mp4", "video/mp4"},
        {".webm", "video/webm"},
        {".doc", "application/msword"},
        {".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
        {".xls", "application/vnd.ms-excel"},
        {".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
        {".ppt", "application/vnd.ms-powerpoint"},
        {".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    };
    for (const auto& e : table)
        if (e.ext == ext) return e.type;
    return {};
}

/// Types a browser would run in the server's origin: always sent as attachments.
inline bool is_active_content(std::string_view type) {
    return type == "text/html" || type == "application/xhtml+xml" || type == "image/svg+xml";
}

/// Percent-encodes everything but the unreserved characters (Python's quote(s, safe="")).
inline std::string url_quote(std::string_view s, std::string_view safe = {}) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            safe.find(char(c)) != safe.npos) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

/// `attachment; filename*=UTF-8''report%20v2.pdf` (RFC 5987).
inline std::string content_disposition(std::string_view kind, std::string_view filename) {
    return std::string(kind) + "; filename*=UTF-8''" + url_quote(filename, "/");
}

inline std::optional<std::string> read_file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// One byte range of `size` bytes: `bytes=a-b`, `bytes=a-`, `bytes=-n`.
struct byte_range {
    std::uint64_t first = 0, last = 0;
};

/// The range a Range header asks for; nullopt when it cannot be satisfied
/// (or asks for several ranges, which is not served).
inline std::optional<byte_range> parse_byte_range(std::string_view header, std::uint64_t size) {
    if (!header.starts_with("bytes=") || header.find(',') != std::string_view::npos) return std::nullopt;
    std::string_view spec = header.substr(6);
    const auto dash = spec.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    auto number = [](std::string_view t, std::uint64_t& out) {
        if (t.empty() || t.size() > 18) return false;
        out = 0;
        for (char c : t) {
            if (c < '0' || c > '9') return false;
            out = out * 10 + std::uint64_t(c - '0');
        }
        return true;
    };
    std::uint64_t a = 0, b = 0;
    const std::string_view first = spec.substr(0, dash), last = spec.substr(dash + 1);
    if (first.empty()) { // the last n bytes
        if (!number(last, b) || b == 0 || size == 0) return std::nullopt;
        return byte_range{size - std::min(b, size), size - 1};
    }
    if (!number(first, a) || a >= size) return std::nullopt;
    if (last.empty()) return byte_range{a, size - 1};
    if (!number(last, b) || b < a) return std::nullopt;
    return byte_range{a, std::min(b, size - 1)};
}

} // namespace agentware::server::detail

#endif
