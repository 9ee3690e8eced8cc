#ifndef AGENTWARE_MIDDLEWARE_FILESYSTEM_READ_FORMAT_HPP
#define AGENTWARE_MIDDLEWARE_FILESYSTEM_READ_FORMAT_HPP

// How the filesystem middleware's read_file shows a file (deepagents'
// format): lines split as Python splits them, numbered, long lines in
// chunks, the remaining-lines notice and the cut at the size cap.

#include <agentware/detail/format.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/middleware/filesystem/options.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

namespace detail {

inline constexpr std::size_t fs_max_line_length = 5000;

// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_empty_file = "System reminder: File exists but has empty contents";
// Text kept for parity with deepagents (reference langchain.md §9).
inline constexpr std::string_view fs_read_truncation =
    "\n\n[Output was truncated due to size limits. The file content is very large. Consider reformatting the "
    "file to make it easier to navigate. For example, if this is JSON, use execute(command='jq . {}') to "
    "pretty-print it with line breaks. For other formats, you can use appropriate formatting tools to split "
    "long lines.]";

/// Python's str.splitlines() for \n, \r\n and \r (without the line ends).
inline std::vector<std::string_view> fs_split_lines(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n' || text[i] == '\r') {
            out.push_back(text.substr(start, i - start));
            if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            start = i + 1;
        }
    }
    if (start < text.size()) out.push_back(text.substr(start));
    return out;
}

/// One output row: its marker ("12", "12.1") and text.
struct fs_row {
    std::string marker;
    std::string_view text;
};

/// The rows of source line `number` (1-based); a line longer than `max_len`
/// code points (Python's len, as deepagents counts) becomes chunks of
/// `max_len` code points marked N, N.1, N.2, ..., never splitting a UTF-8 sequence.
inline void fs_rows_of(std::string_view line, std::size_t number, std::vector<fs_row>& rows,
                       std::size_t max_len = fs_max_line_length) {
    if (line.size() <= max_len || detail::utf8_chars(line) <= max_len) {
        rows.push_back(fs_row{std::to_string(number), line});
        return;
    }
    for (std::size_t k = 0; !line.empty(); ++k) {
        const std::size_t cut = detail::utf8_offset(line, max_len);
        rows.push_back(fs_row{k == 0 ? std::to_string(number) : detail::format("{}.{}", number, k),
                              line.substr(0, cut)});
        line.remove_prefix(cut);
    }
}

inline std::string fs_render_rows(const std::vector<fs_row>& rows, line_number_format format) {
    std::size_t width = 0;
    for (const auto& r : rows)
        width = std::max(width, r.marker.size());
    std::string out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i) out += '\n';
        if (format == line_number_format::current)
            out += detail::format("{:>{}}  {}", rows[i].marker, width, rows[i].text);
        else
            out += detail::format("{:>6}\t{}", rows[i].marker, rows[i].text);
    }
    return out;
}

/// Lines numbered from `first` as read_file shows them.
inline std::string fs_number_lines(const std::vector<std::string_view>& lines, std::size_t first,
                                   line_number_format format, std::size_t max_len = fs_max_line_length) {
    std::vector<fs_row> rows;
    for (std::size_t i = 0; i < lines.size(); ++i)
        fs_rows_of(lines[i], first + i, rows, max_len);
    return fs_render_rows(rows, format);
}

inline std::string_view fs_plural(std::size_t n) { return n == 1 ? "line" : "lines"; }

/// Empty or only white space: deepagents' empty-file reminder applies.
inline bool fs_is_blank(std::string_view content) {
    return content.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

/// read_file's notice when lines remain after source lines first..last (1-based) of `total`.
inline std::string fs_remaining_notice(std::size_t first, std::size_t last, std::size_t total) {
    if (last >= total) return {};
    const std::size_t read = last - first + 1, remaining = total - last;
    // Text kept for parity with deepagents (reference langchain.md §9).
    return detail::format("\n\n[Read {} {} (lines {}-{} of {} total). {} {} remaining from offset {}.]", read,
                          fs_plural(read), first, last, total, remaining, fs_plural(remaining), last);
}

/// read_file's answer for a file's text (deepagents' read_file formatting).
/// `offset` and `limit` are already clamped to zero or more; `cap` is the
/// character budget of the answer (0: none).
///
/// Over the budget it is cut as deepagents' _truncate_paginated_read cuts
/// it: after the last source line whose rows all fit with the size notice
/// and the recomputed remaining-lines notice (in that order, the rows keeping
/// the full window's marker width), else at the budget, with the size notice
/// only. Characters are code points, as Python counts them.
inline std::string fs_format_read(std::string_view content, std::string_view path, std::size_t offset,
                                  std::size_t limit, std::size_t cap, line_number_format format,
                                  bool& error) {
    error = false;
    if (fs_is_blank(content)) return std::string(fs_empty_file);
    const auto lines = fs_split_lines(content);
    const std::size_t total = lines.size();
    if (offset >= total) {
        error = true;
        // Text kept for parity with deepagents (reference langchain.md §9).
        return detail::format("Error: Line offset {} exceeds file length ({} lines)", offset, total);
    }
    const std::size_t end = std::min(total, offset + std::min(limit, total - offset));
    // The rows, and after each source line's last row where the answer may be
    // cut: its end in bytes and in characters, and the line's number.
    struct cut_point {
        std::size_t bytes, chars, line;
    };
    std::vector<fs_row> rows;
    std::vector<cut_point> cuts;
    std::vector<std::size_t> last_row_of; // per source line, its last row's index
    for (std::size_t i = offset; i < end; ++i) {
        fs_rows_of(lines[i], i + 1, rows);
        last_row_of.push_back(rows.size() - 1);
    }
    std::size_t width = 0;
    for (const auto& r : rows)
        width = std::max(width, r.marker.size());
    std::string body;
    std::size_t chars = 0;
    for (std::size_t i = 0, line = 0; i < rows.size(); ++i) {
        const std::size_t from = body.size();
        if (i) body += '\n';
        if (format == line_number_format::current)
            body += detail::format("{:>{}}  {}", rows[i].marker, width, rows[i].text);
        else
            body += detail::format("{:>6}\t{}", rows[i].marker, rows[i].text);
        chars += detail::utf8_chars(std::string_view(body).substr(from));
        if (i == last_row_of[line]) {
            cuts.push_back(cut_point{body.size(), chars, offset + line + 1});
            ++line;
        }
    }
    std::string notice = fs_remaining_notice(offset + 1, end, total);
    if (cap == 0 || chars + detail::utf8_chars(notice) < cap) return body + notice;
    const std::string size_notice = fmt::format(fmt::runtime(fs_read_truncation), path);
    const std::size_t size_notice_chars = detail::utf8_chars(size_notice);
    for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
        notice = fs_remaining_notice(offset + 1, it->line, total);
        if (it->chars + size_notice_chars + detail::utf8_chars(notice) <= cap)
            return body.substr(0, it->bytes) + size_notice + notice;
    }
    // Not one whole source line fits: no remaining-lines notice, whose offset would be wrong.
    const std::size_t keep = cap > size_notice_chars ? cap - size_notice_chars : 0;
    return body.substr(0, detail::utf8_offset(body, keep)) + size_notice;
}

} // namespace detail

} // namespace agentware

#endif
