#ifndef AGENTWARE_MIDDLEWARE_DETAIL_HTML_TEXT_HPP
#define AGENTWARE_MIDDLEWARE_DETAIL_HTML_TEXT_HPP

// The readable text of an HTML page, for the web capability's `fetch`: what a
// reader sees, not the markup. Scripts, styles and comments are dropped;
// block elements start new lines, list items are bulleted, headings marked
// with '#', links keep their target; character references are decoded and
// runs of white space collapsed. A tolerant scanner, not a parser: broken
// markup yields text, never an error.

#include <agentware/message/detail/text.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace agentware::detail {

/// `cp` as UTF-8 (invalid code points become U+FFFD).
inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

/// Decodes the character reference at `s[i]` ('&'), appending it to `out`;
/// returns the index after it, or i + 1 (with '&' appended) when it is none.
inline std::size_t decode_html_reference(std::string_view s, std::size_t i, std::string& out) {
    const std::size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
        out += '&';
        return i + 1;
    }
    std::string_view name = s.substr(i + 1, semi - i - 1);
    if (!name.empty() && name.front() == '#') {
        std::uint32_t cp = 0;
        const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
        std::string_view digits = name.substr(hex ? 2 : 1);
        if (digits.empty()) {
            out += '&';
            return i + 1;
        }
        for (char c : digits) {
            int d = c >= '0' && c <= '9'          ? c - '0'
                    : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : -1;
            if (d < 0) {
                out += '&';
                return i + 1;
            }
            cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
            if (cp > 0x10FFFF) cp = 0x110000; // stays invalid, cannot overflow
        }
        append_utf8(out, cp);
        return semi + 1;
    }
    struct entity {
        std::string_view name;
        std::uint32_t cp;
    };
    static constexpr entity common[] = {
        {"amp", '&'},      {"lt", '<'},       {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
        {"nbsp", ' '},     {"copy", 0xA9},    {"reg", 0xAE},     {"trade", 0x2122}, {"hellip", 0x2026},
        {"mdash", 0x2014}, {"ndash", 0x2013}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
        {"rdquo", 0x201D}, {"bull", 0x2022},  {"middot", 0xB7},  {"euro", 0x20AC},  {"laquo", 0xAB},
        {"raquo", 0xBB},   {"times", 0xD7},   {"deg", 0xB0},
    };
    for (const auto& e : common)
        if (e.name == name) {
            append_utf8(out, e.cp);
            return semi + 1;
        }
    out += '&';
    return i + 1;
}

namespace html {

inline bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

inline bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

inline bool one_of(std::string_view name, std::initializer_list<std::string_view> names) noexcept {
    for (auto n : names)
        if (iequals(name, n)) return true;
    return false;
}

/// The value of attribute `attr` in a tag's text (after its name), or "".
inline std::string attribute(std::string_view tag, std::string_view attr) {
    std::size_t i = 0;
    while (i < tag.size()) {
        while (i < tag.size() && (is_space(tag[i]) || tag[i] == '/'))
            ++i;
        const std::size_t start = i;
        while (i < tag.size() && !is_space(tag[i]) && tag[i] != '=' && tag[i] != '/')
            ++i;
        std::string_view name = tag.substr(start, i - start);
        while (i < tag.size() && is_space(tag[i]))
            ++i;
        std::string_view value;
        if (i < tag.size() && tag[i] == '=') {
            ++i;
            while (i < tag.size() && is_space(tag[i]))
                ++i;
            if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
                const char q = tag[i++];
                const std::size_t end = tag.find(q, i);
                value = tag.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
                i = end == std::string_view::npos ? tag.size() : end + 1;
            } else {
                const std::size_t vs = i;
                while (i < tag.size() && !is_space(tag[i]))
                    ++i;
                value = tag.substr(vs, i - vs);
            }
        }
        if (name.empty()) {
            if (i == start) ++i;
            continue;
        }
        if (iequals(name, attr)) {
            std::string decoded;
            for (std::size_t k = 0; k < value.size();)
                if (value[k] == '&') {
                    k = decode_html_reference(value, k, decoded);
                } else {
                    decoded += value[k++];
                }
            return decoded;
        }
    }
    return {};
}

/// Collects text, collapsing white space and keeping at most one blank line.
class text_sink {
public:
    void text(std::string_view s) {
        for (char c : s)
            character(c);
    }
    void character(char c) {
        if (is_space(c)) {
            if (pre_ > 0) {
                out_ += c == '\r' ? '\n' : c;
                return;
            }
            space_ = true;
            return;
        }
        if (space_ && !out_.empty() && out_.back() != '\n' && out_.back() != ' ') out_ += ' ';
        space_ = false;
        out_ += c;
    }
    void append_raw(std::string_view s) {
        for (char c : s)
            out_ += c;
        space_ = false;
    }
    /// Ends the line (`blank`: and leaves an empty line after it).
    void line_break(bool blank = false) {
        space_ = false;
        while (!out_.empty() && out_.back() == ' ')
            out_.pop_back();
        if (out_.empty()) return;
        if (out_.back() != '\n') out_ += '\n';
        if (blank && (out_.size() < 2 || out_[out_.size() - 2] != '\n')) out_ += '\n';
    }
    void enter_pre() { ++pre_; }
    void leave_pre() {
        if (pre_ > 0) --pre_;
    }
    bool at_line_start() const { return out_.empty() || out_.back() == '\n'; }
    std::string finish() {
        while (!out_.empty() && (out_.back() == '\n' || out_.back() == ' '))
            out_.pop_back();
        return std::move(out_);
    }

private:
    std::string out_;
    bool space_ = false;
    int pre_ = 0;
};

} // namespace html

/// The readable text of `page`, and its title (from <title>) in `title`.
inline std::string html_to_text(std::string_view page, std::string* title = nullptr) {
    html::text_sink sink;
    std::string link_target;
    std::string title_text;
    bool in_title = false;
    std::size_t i = 0;
    while (i < page.size()) {
        const char c = page[i];
        if (c == '&') {
            std::string decoded;
            i = decode_html_reference(page, i, decoded);
            if (in_title)
                title_text += decoded;
            else
                sink.text(decoded);
            continue;
        }
        if (c != '<') {
            if (in_title)
                title_text += c;
            else
                sink.character(c);
            ++i;
            continue;
        }
        if (page.compare(i, 4, "<!--") == 0) { // a comment
            const std::size_t end = page.find("-->", i + 4);
            i = end == std::string_view::npos ? page.size() : end + 3;
            continue;
        }
        const std::size_t close = page.find('>', i + 1);
        if (close == std::string_view::npos) { // a lone '<' at the end is text
            sink.text(page.substr(i));
            break;
        }
        std::string_view tag = page.substr(i + 1, close - i - 1);
        i = close + 1;
        if (tag.empty() || tag.front() == '!' || tag.front() == '?') continue; // doctype, processing
        const bool closing = tag.front() == '/';
        if (closing) tag.remove_prefix(1);
        std::size_t name_end = 0;
        while (name_end < tag.size() && !html::is_space(tag[name_end]) && tag[name_end] != '/')
            ++name_end;
        const std::string_view name = tag.substr(0, name_end);
        const std::string_view rest = tag.substr(name_end);

        if (!closing && html::one_of(name, {"script", "style", "noscript", "template", "svg", "iframe"})) {
            // Skip to the matching end tag, whatever it holds.
            const std::string end_tag = "</" + std::string(name);
            std::size_t k = i;
            for (;;) {
                k = page.find("</", k);
                if (k == std::string_view::npos) {
                    i = page.size();
                    break;
                }
                if (html::iequals(page.substr(k, end_tag.size()), end_tag)) {
                    const std::size_t gt = page.find('>', k);
                    i = gt == std::string_view::npos ? page.size() : gt + 1;
                    break;
                }
                k += 2;
            }
            continue;
        }
        if (html::iequals(name, "title")) {
            in_title = !closing;
            continue;
        }
        if (html::iequals(name, "br")) {
            sink.line_break();
        } else if (html::one_of(name,
                                {"p", "div", "section", "article", "header", "footer", "main", "nav", "aside",
                                 "blockquote", "table", "ul", "ol", "dl", "form", "figure", "hr"})) {
            sink.line_break(true);
        } else if (html::one_of(name, {"tr", "dt", "dd", "figcaption", "caption"})) {
            sink.line_break();
        } else if (html::one_of(name, {"td", "th"})) {
            if (!closing && !sink.at_line_start()) sink.append_raw(" | ");
        } else if (html::iequals(name, "li")) {
            sink.line_break();
            if (!closing) sink.append_raw("- ");
        } else if (name.size() == 2 && ascii_lower(name[0]) == 'h' && name[1] >= '1' && name[1] <= '6') {
            sink.line_break(true);
            if (!closing) sink.append_raw(std::string(static_cast<std::size_t>(name[1] - '0'), '#') + " ");
        } else if (html::iequals(name, "pre")) {
            sink.line_break(true);
            if (closing)
                sink.leave_pre();
            else
                sink.enter_pre();
        } else if (html::iequals(name, "a")) {
            if (!closing) {
                link_target = html::attribute(rest, "href");
            } else if (!link_target.empty()) {
                if (!link_target.starts_with('#') && !link_target.starts_with("javascript:"))
                    sink.append_raw(" (" + link_target + ")");
                link_target.clear();
            }
        } else if (html::iequals(name, "img") && !closing) {
            const std::string alt = html::attribute(rest, "alt");
            if (!alt.empty()) sink.text("[" + alt + "]");
        }
    }
    if (title != nullptr) {
        html::text_sink t;
        t.text(title_text);
        *title = t.finish();
    }
    return sink.finish();
}

} // namespace agentware::detail

#endif
