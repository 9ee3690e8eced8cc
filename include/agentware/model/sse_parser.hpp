#ifndef AGENTWARE_MODEL_SSE_PARSER_HPP
#define AGENTWARE_MODEL_SSE_PARSER_HPP

// An incremental parser for server-sent events (the WHATWG event-stream
// format), fed bytes exactly as the network delivers them.

#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace agentware {

/// One dispatched event. `type` is "message" unless an `event:` field set it.
struct sse_event {
    std::string_view type;
    std::string_view data;
    std::string_view id;
};

/// Thrown when a line or an event exceeds the parser's size limit, so that a
/// broken or hostile server cannot make the client buffer without bound.
class sse_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Splits a byte stream into events. Any split of the input is accepted: a
/// feed may end inside a line, a UTF-8 sequence or a "\r\n" pair, because
/// bytes are only interpreted once a whole line is buffered. Lines end in
/// "\r\n", "\n" or "\r"; lines starting with ':' are comments; several `data:`
/// lines of one event are joined with '\n'; a leading UTF-8 BOM is skipped.
class sse_parser {
public:
    static constexpr std::size_t default_max_event_size = 16u << 20;

    explicit sse_parser(std::size_t max_event_size = default_max_event_size)
        : max_event_size_(max_event_size) {}

    /// Feeds the next bytes; calls `on_event(const sse_event&)` for every
    /// event completed by them. The views in the event are valid during the call only.
    template <class OnEvent>
    void feed(std::string_view bytes, OnEvent&& on_event) {
        std::size_t pos = 0;
        if (bom_pending_) pos = skip_bom(bytes);
        while (pos < bytes.size()) {
            if (skip_lf_) {
                skip_lf_ = false;
                if (bytes[pos] == '\n') {
                    ++pos;
                    continue;
                }
            }
            const std::size_t end = line_end(bytes, pos);
            if (end == std::string_view::npos) {
                append_partial(bytes.substr(pos));
                return;
            }
            std::string_view line = bytes.substr(pos, end - pos);
            if (!line_.empty()) {
                append_partial(line);
                line = line_;
            }
            skip_lf_ = bytes[end] == '\r';
            pos = end + 1;
            process_line(line, on_event);
            line_.clear();
        }
    }

    /// True when bytes of an unfinished event are buffered: the stream ended
    /// (or was cut) in the middle of an event, which the spec says to drop.
    bool has_pending() const noexcept { return !line_.empty() || has_data_ || !event_type_.empty(); }

    /// The last `id:` the stream set (kept across events, as the spec says):
    /// what a client sends as `Last-Event-ID` to resume the stream.
    std::string_view last_event_id() const noexcept { return last_id_; }
    /// The last `retry:` the stream set: how long to wait before reconnecting.
    std::optional<std::chrono::milliseconds> retry() const noexcept { return retry_; }

    /// Forgets everything buffered; the next byte starts a new stream.
    void reset() {
        line_.clear();
        data_.clear();
        event_type_.clear();
        last_id_.clear();
        retry_.reset();
        has_data_ = false;
        skip_lf_ = false;
        bom_pending_ = true;
        bom_seen_ = 0;
    }

private:
    /// The first '\r' or '\n' at or after `pos`. Two memchr scans (vectorised
    /// in libc) beat a per-byte test of both characters by far.
    static std::size_t line_end(std::string_view bytes, std::size_t pos) noexcept {
        const char* begin = bytes.data() + pos;
        const std::size_t size = bytes.size() - pos;
        const void* lf = std::memchr(begin, '\n', size);
        const std::size_t lf_at = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - begin) : size;
        const void* cr = std::memchr(begin, '\r', lf_at);
        if (cr != nullptr) return pos + static_cast<std::size_t>(static_cast<const char*>(cr) - begin);
        return lf != nullptr ? pos + lf_at : std::string_view::npos;
    }

    std::size_t skip_bom(std::string_view bytes) {
        static constexpr std::string_view bom = "\xEF\xBB\xBF";
        std::size_t pos = 0;
        while (pos < bytes.size() && bom_seen_ < bom.size()) {
            if (bytes[pos] != bom[bom_seen_]) {
                // Not a BOM after all: the bytes matched so far are content.
                bom_pending_ = false;
                append_partial(bom.substr(0, bom_seen_));
                return pos;
            }
            ++pos;
            ++bom_seen_;
        }
        if (bom_seen_ == bom.size()) bom_pending_ = false;
        return pos;
    }

    void append_partial(std::string_view part) {
        if (line_.size() + part.size() > max_event_size_)
            throw sse_error("server-sent events: line too long");
        line_.append(part);
    }

    template <class OnEvent>
    void process_line(std::string_view line, OnEvent& on_event) {
        if (line.empty()) {
            dispatch(on_event);
            return;
        }
        if (line.front() == ':') return; // comment (keep-alive pings)
        const std::size_t colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value;
        if (colon != std::string_view::npos) {
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            if (data_.size() + value.size() + 1 > max_event_size_)
                throw sse_error("server-sent events: event too large");
            if (has_data_) data_.push_back('\n');
            data_.append(value);
            has_data_ = true;
        } else if (field == "event") {
            event_type_.assign(value);
        } else if (field == "id") {
            if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
        } else if (field == "retry") {
            // Digits only, as the spec says; a value too long to be a delay is ignored too.
            if (!value.empty() && value.size() <= 9 &&
                value.find_first_not_of("0123456789") == std::string_view::npos)
                retry_ = std::chrono::milliseconds(std::stol(std::string(value)));
        }
        // Unknown fields are ignored. The parser only reports `retry`: reconnecting is the client's.
    }

    template <class OnEvent>
    void dispatch(OnEvent& on_event) {
        if (has_data_) {
            const sse_event event{event_type_.empty() ? std::string_view("message")
                                                      : std::string_view(event_type_),
                                  data_, last_id_};
            on_event(event);
        }
        data_.clear();
        event_type_.clear();
        has_data_ = false;
    }

    std::size_t max_event_size_;
    std::string line_;       // the unfinished line carried over between feeds
    std::string data_;       // data of the event being built
    std::string event_type_; // its `event:` field
    std::string last_id_;    // persists across events, as the spec says
    std::optional<std::chrono::milliseconds> retry_;
    bool has_data_ = false; // distinguishes "data:" (empty data) from no data line
    bool skip_lf_ = false;  // the previous feed ended in '\r': a '\n' next belongs to it
    bool bom_pending_ = true;
    std::size_t bom_seen_ = 0;
};

} // namespace agentware

#endif
