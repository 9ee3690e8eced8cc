#ifndef AGENTWARE_MESSAGE_CONTENT_HPP
#define AGENTWARE_MESSAGE_CONTENT_HPP
// A piece of message content: text or an image (URL or inline data URL).

#include <agentware/message/detail/base64.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace agentware {

namespace detail {

/// Moves a string out of `s`, skipping the copy when it is empty. libstdc++
/// copies a short string's inline buffer with a call to memcpy, even an empty
/// one; most of a message's strings are empty, and the agent loop moves
/// messages every round.
inline std::string take_string(std::string& s) noexcept {
    if (s.empty()) return {};
    return std::move(s);
}

} // namespace detail

/// One block of a message's content. Text blocks use `text`; image blocks use
/// `image_url` (an http(s) URL or a base64 `data:` URL) and the optional OpenAI
/// `detail` hint ("", "low", "high" or "auto"; "" means the provider default).
struct content_block {
    enum class kind { text, image } type = kind::text;
    std::string text;
    std::string image_url;
    std::string detail;

    content_block() = default;
    content_block(kind k, std::string text_, std::string image_url_, std::string detail_) noexcept
        : type(k), text(std::move(text_)), image_url(std::move(image_url_)), detail(std::move(detail_)) {}
    content_block(const content_block&) = default;
    content_block(content_block&& o) noexcept
        : type(o.type), text(detail::take_string(o.text)), image_url(detail::take_string(o.image_url)),
          detail(detail::take_string(o.detail)) {}
    content_block& operator=(const content_block&) = default;
    content_block& operator=(content_block&&) = default;

    bool is_text() const noexcept { return type == kind::text; }
    bool is_image() const noexcept { return type == kind::image; }

    friend bool operator==(const content_block&, const content_block&) = default;
};

/// A text block.
inline content_block text_block(std::string text) {
    return content_block{content_block::kind::text, std::move(text), {}, {}};
}

/// An image block referring to `url` (http(s) or data URL).
inline content_block image_block(std::string url, std::string detail_level = {}) {
    return content_block{content_block::kind::image, {}, std::move(url), std::move(detail_level)};
}

/// An image block carrying the image inline as `data:<mime>;base64,<bytes>`,
/// for images a provider cannot fetch (local files, screenshots).
inline content_block image_block_from_data(std::string_view mime, std::string_view bytes,
                                           std::string detail_level = {}) {
    std::string url = "data:";
    url += mime;
    url += ";base64,";
    url += detail::base64_encode(bytes);
    return image_block(std::move(url), std::move(detail_level));
}

} // namespace agentware

#endif
