// message/content.hpp: text and image blocks, images from bytes as base64 data URLs.
#include <agentware/message/content.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

using namespace agentware;

TEST_CASE("base64 matches the RFC 4648 test vectors", "[message][content]") {
    const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                           {"f", "Zg=="},
                                                           {"fo", "Zm8="},
                                                           {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg=="},
                                                           {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        CHECK(detail::base64_encode(plain) == encoded);
        CHECK(detail::base64_decode(encoded) == std::optional<std::string>(plain));
    }
}

TEST_CASE("base64 decoding rejects what is not base64 and accepts missing padding", "[message][content]") {
    CHECK_FALSE(detail::base64_decode("Zm9v!").has_value());
    CHECK_FALSE(detail::base64_decode("Z").has_value());
    CHECK_FALSE(detail::base64_decode("Zg=").has_value()); // padding that does not complete a group
    CHECK_FALSE(detail::base64_decode("Zm 9v").has_value());
    CHECK(detail::base64_decode("Zm8") == std::optional<std::string>("fo"));
}

TEST_CASE("image blocks from data carry the bytes as a base64 data URL", "[message][content]") {
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes += static_cast<char>(i);
    const content_block block = image_block_from_data("image/png", bytes, "high");

    CHECK(block.is_image());
    CHECK(block.detail == "high");
    const std::string prefix = "data:image/png;base64,";
    REQUIRE(block.image_url.rfind(prefix, 0) == 0);
    CHECK(detail::base64_decode(std::string_view(block.image_url).substr(prefix.size())) ==
          std::optional<std::string>(bytes));
}

TEST_CASE("text and image factories fill the matching fields", "[message][content]") {
    CHECK(text_block("hi") == content_block{content_block::kind::text, "hi", "", ""});
    CHECK(image_block("https://x/y.png") ==
          content_block{content_block::kind::image, "", "https://x/y.png", ""});
}
