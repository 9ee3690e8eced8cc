#ifndef AGENTWARE_MIDDLEWARE_VIEW_IMAGE_HPP
#define AGENTWARE_MIDDLEWARE_VIEW_IMAGE_HPP

// view_image: lets a vision model look at images in the thread's directories
// (DeerFlow's ViewImageMiddleware and view_image tool). The tool checks an
// image and records its metadata in `viewed_images`; when a round's
// view_image calls are all answered, the next model request carries the
// images as image content blocks. The images live only in that request (the
// design of DeerFlow's PR #5014): base64 never enters the state.

#include <agentware/core/fields.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/content.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/thread/detail/user_data_paths.hpp>
#include <agentware/thread/fields.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/object.hpp>

#include <fmt/core.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct view_image_options {
    /// Whether the model takes images. false: no view_image tool and no
    /// injection (DeerFlow registers neither for a model without vision).
    bool supports_vision = true;
    /// Larger images are refused (and not re-sent): 20 MiB.
    std::uint64_t max_image_bytes = 20 * 1024 * 1024;

    static constexpr std::string_view config_section = "view_image";
    friend bool operator==(const view_image_options&, const view_image_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const view_image_options& o) {
    jv = boost::json::object{{"supports_vision", o.supports_vision}, {"max_image_bytes", o.max_image_bytes}};
}
inline view_image_options tag_invoke(boost::json::value_to_tag<view_image_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(view_image_options::config_section));
    view_image_options o;
    r.read("supports_vision", o.supports_vision)
        .read("max_image_bytes", o.max_image_bytes)
        .reject_unknown_keys();
    return o;
}

namespace detail {

inline constexpr std::string_view view_image_context_prefix = "view-image-context:";

/// The image type the first bytes announce ("" when none of the four).
inline std::string_view sniff_image_mime(std::string_view bytes) noexcept {
    if (bytes.starts_with("\xFF\xD8\xFF")) return "image/jpeg";
    if (bytes.starts_with(std::string_view("\x89PNG\r\n\x1A\n", 8))) return "image/png";
    if (bytes.size() >= 12 && bytes.starts_with("RIFF") && bytes.substr(8, 4) == "WEBP") return "image/webp";
    if (bytes.starts_with("GIF87a") || bytes.starts_with("GIF89a")) return "image/gif";
    return {};
}

/// The image type an extension names ("" when unsupported).
inline std::string_view image_mime_for_extension(std::string_view ext) noexcept {
    if (ext == ".jpg" || ext == ".jpeg") return "image/jpeg";
    if (ext == ".png") return "image/png";
    if (ext == ".webp") return "image/webp";
    if (ext == ".gif") return "image/gif";
    return {};
}

inline std::optional<std::string> read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline tool_output view_image_call(const view_image_options& opts, const boost::json::object& args,
                                   const tool_runtime& rt) {
    auto fail = [](std::string text) { return tool_output::error(std::move(text)); };
    const auto* arg = args.if_contains("image_path");
    if (!arg || !arg->is_string()) return fail("Error: argument 'image_path' must be a string");
    const std::string path(arg->get_string());
    if (!has_path_prefix(path, virtual_workspace) && !has_path_prefix(path, virtual_uploads) &&
        !has_path_prefix(path, virtual_outputs))
        return fail("Error: Only image paths under /mnt/user-data/workspace, /mnt/user-data/uploads, "
                    "/mnt/user-data/outputs are allowed");
    const auto* td = rt.field<thread_data_field>();
    auto r = resolve_model_path(path, td && *td ? &**td : nullptr, path_access::read);
    if (!r.ok()) return fail(detail::format("Error: {}", r.error));
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(r.host, ec);
    if (!fs::exists(st)) return fail(detail::format("Error: Image file not found: {}", path));
    if (!fs::is_regular_file(st)) return fail(detail::format("Error: Path is not a file: {}", path));
    std::string ext = r.host.extension().string();
    for (char& c : ext)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const std::string_view expected = image_mime_for_extension(ext);
    if (expected.empty())
        return fail(detail::format(
            "Error: Unsupported image format: {}. Supported formats: .jpg, .jpeg, .png, .webp, .gif", ext));
    const std::uint64_t size = fs::file_size(r.host, ec);
    if (ec) return fail(detail::format("Error: Image file not found: {}", path));
    if (size > opts.max_image_bytes)
        return fail(
            detail::format("Error: Image file is too large: {} bytes. Maximum supported size is {} bytes",
                           size, opts.max_image_bytes));
    auto bytes = read_bytes(r.host);
    if (!bytes) return fail(detail::format("Error: Image file not found: {}", path));
    if (bytes->size() != size) return fail("Error: Image file changed during read");
    const std::string_view detected = sniff_image_mime(*bytes);
    if (detected.empty()) return fail("Error: File contents do not match a supported image format");
    if (detected != expected)
        return fail(detail::format("Error: Image contents are {}, but file extension indicates {}", detected,
                                   expected));
    tool_output out("Successfully read image");
    viewed_image_map update;
    update.insert_or_assign(path, viewed_image{std::string(expected), size, r.host.string()});
    out.update.set<viewed_images_field>(update);
    return out;
}

inline bool is_view_image_context(const message& m) {
    if (!m.is_human()) return false;
    if (m.id.starts_with(view_image_context_prefix)) return true;
    if (const auto* flag = m.metadata.if_contains("deerflow_view_image_context");
        flag && flag->is_bool() && flag->get_bool())
        return true;
    const std::string text = m.text();
    return text.find("Here are the images you've viewed") != std::string::npos ||
           text.find("Here are the details of the images you've viewed") != std::string::npos;
}

/// True when the last ai message called view_image, every call of it has
/// its tool message, and no image context follows it yet.
inline bool should_inject_images(const std::vector<message>& messages) {
    std::size_t ai = messages.size();
    for (std::size_t i = messages.size(); i-- > 0;)
        if (messages[i].is_ai()) {
            ai = i;
            break;
        }
    if (ai == messages.size()) return false;
    const message& m = messages[ai];
    bool viewed = false;
    for (const auto& c : m.tool_calls)
        viewed = viewed || c.name == "view_image";
    if (!viewed) return false;
    for (const auto& c : m.tool_calls) {
        bool answered = false;
        for (std::size_t i = ai + 1; i < messages.size() && !answered; ++i)
            answered = messages[i].is_tool() && messages[i].tool_call_id() == c.id;
        if (!answered) return false;
    }
    for (std::size_t i = ai + 1; i < messages.size(); ++i)
        if (is_view_image_context(messages[i])) return false;
    return true;
}

/// The hidden human message that shows the model every image viewed so far.
inline message image_context_message(const viewed_image_map& images, std::uint64_t max_bytes) {
    std::vector<content_block> blocks;
    if (images.empty()) {
        blocks.push_back(text_block("No images have been viewed."));
    } else {
        blocks.push_back(text_block("Here are the images you've viewed:"));
        for (const auto& [path, img] : images) {
            blocks.push_back(text_block(detail::format("\n- **{}** ({})", path, img.mime_type)));
            // Re-read now: the file may have changed or gone since the tool saw it.
            std::optional<std::string> bytes;
            std::error_code ec;
            const auto size = std::filesystem::file_size(img.actual_path, ec);
            if (!ec && size == img.size && size <= max_bytes) bytes = read_bytes(img.actual_path);
            if (bytes && bytes->size() == img.size)
                blocks.push_back(image_block_from_data(img.mime_type, *bytes));
            else
                blocks.push_back(text_block(
                    detail::format("  (file unavailable or changed on disk: {})", img.actual_path)));
        }
    }
    message m = human_message(std::move(blocks));
    m.id = std::string(view_image_context_prefix) + make_message_id();
    m.metadata["hide_from_ui"] = true;
    m.metadata["deerflow_view_image_context"] = true;
    return m;
}

} // namespace detail

/// Brings the view_image tool and shows viewed images to the model.
struct view_image {
    using state_fields = fields<thread_data_field, viewed_images_field>;

    view_image_options options;

    view_image() = default;
    explicit view_image(view_image_options o) : options(o) {}

    /// Request-only: appends the image context after the tool messages, so
    /// the ai/tool pairing of the history stays as it is.
    auto wrap_model_call(auto& req, auto&& next) {
        if (options.supports_vision && req.state && detail::should_inject_images(req.messages.get()))
            req.messages.edit().push_back(
                detail::image_context_message(get<viewed_images_field>(*req.state), options.max_image_bytes));
        return next(req);
    }

    std::vector<std::shared_ptr<tool_interface>> tools() const {
        if (!options.supports_vision) return {};
        auto opts = options;
        return {share_tool(make_tool(
            "view_image",
            "Read an image file (png, jpeg, gif or webp) from /mnt/user-data so that you can see it. Use it "
            "only "
            "for images you need to look at.",
            R"({"type":"object","properties":{"image_path":{"type":"string","description":"Absolute virtual path of the image, under /mnt/user-data/workspace, uploads or outputs."}},"required":["image_path"]})",
            [opts](const boost::json::object& args, const tool_runtime& rt) {
                try {
                    return detail::view_image_call(opts, args, rt);
                } catch (const std::exception& e) {
                    return tool_output::error(detail::format("Error: Unexpected error: {}", e.what()));
                }
            }))};
    }
};

} // namespace agentware

#endif
