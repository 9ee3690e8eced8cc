#ifndef AGENTWARE_MODEL_DETAIL_CLIENT_CORE_HPP
#define AGENTWARE_MODEL_DETAIL_CLIENT_CORE_HPP

// The shared state and the call of the HTTP model clients: one call with
// retries, backoff and cancellation over the HTTP transport. A provider
// supplies its wire format as a chat_protocol. Only the clients'
// implementations include this header.

#include <agentware/detail/blocking_runner.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/model/chat_model.hpp>
#include <agentware/model/detail/call_control.hpp>
#include <agentware/model/detail/provider_error.hpp>
#include <agentware/model/http_transport.hpp>
#include <agentware/model/merge_settings.hpp>
#include <agentware/model/retry.hpp>
#include <agentware/model/sse_parser.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware::detail {

/// Reads the API key from the environment variable `variable` ("" means the
/// server needs none). The key itself never appears in an error.
inline std::string read_api_key(const std::string& variable, std::string_view model_name) {
    if (variable.empty()) return {};
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr || *value == '\0')
        throw model_error(
            model_error_kind::configuration,
            detail::format("the API key for model \"{}\" is missing: environment variable {} is not set",
                           model_name, variable));
    return value;
}

inline bool is_event_stream(std::string_view content_type) {
    return contains_nocase(content_type, "text/event-stream");
}

/// Builds one answer from a streamed response (a provider's stream assembler, type-erased).
class stream_assembly {
public:
    virtual ~stream_assembly() = default;
    virtual void feed(std::string_view bytes) = 0;
    virtual bool delivered() const noexcept = 0;
    virtual bool complete() const noexcept = 0;
    virtual bool finished() const noexcept = 0;
    virtual model_response finish() = 0;
};

template <class Assembler>
class stream_assembly_of final : public stream_assembly {
public:
    template <class... Args>
    explicit stream_assembly_of(Args&&... args) : assembler_(std::forward<Args>(args)...) {}
    void feed(std::string_view bytes) override { assembler_.feed(bytes); }
    bool delivered() const noexcept override { return assembler_.delivered(); }
    bool complete() const noexcept override { return assembler_.complete(); }
    bool finished() const noexcept override { return assembler_.finished(); }
    model_response finish() override { return assembler_.finish(); }

private:
    Assembler assembler_;
};

/// A provider's wire format: how a request becomes HTTP, and how an answer,
/// whole or streamed, becomes a model_response.
class chat_protocol {
public:
    virtual ~chat_protocol() = default;
    virtual http_request_spec make_request(const chat_request& request, bool stream) const = 0;
    virtual model_response parse_body(std::string_view body) const = 0;
    virtual std::unique_ptr<stream_assembly> make_stream_assembly(const stream_handler* handler) const = 0;

    std::string provider; ///< for error texts
    std::string secret;   ///< the API key, kept out of errors
};

/// The request the protocol sends: the client's defaults under the request's own settings.
inline chat_request with_defaults(const chat_request& request, const model_settings& defaults) {
    chat_request merged = request;
    merged.settings = merge_settings(defaults, request.settings);
    return merged;
}

/// A JSON request to `target` with the headers every provider sends; the
/// provider adds its own, then the configured extra ones.
inline http_request_spec json_request(std::string target, std::string body, bool stream) {
    http_request_spec spec;
    spec.target = std::move(target);
    spec.body = std::move(body);
    spec.headers.emplace_back("Content-Type", "application/json");
    spec.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
    return spec;
}

/// The calls in flight, so that cancel() can reach them from any thread.
class call_registry {
public:
    void add(const std::shared_ptr<call_control>& c) {
        std::lock_guard lock(mutex_);
        std::erase_if(calls_, [](const std::weak_ptr<call_control>& w) { return w.expired(); });
        calls_.push_back(c);
    }
    void cancel_all() {
        std::vector<std::shared_ptr<call_control>> live;
        {
            std::lock_guard lock(mutex_);
            for (const auto& w : calls_)
                if (auto c = w.lock()) live.push_back(std::move(c));
        }
        for (const auto& c : live)
            c->request_cancel();
    }

private:
    std::mutex mutex_;
    std::vector<std::weak_ptr<call_control>> calls_;
};

/// Shared state of a client and its copies.
class client_core {
public:
    client_core(std::unique_ptr<chat_protocol> protocol, std::string_view base_url, http_options http,
                retry_policy retry)
        : protocol_(std::move(protocol)), url_(parse_url(base_url)), retry_(retry),
          transport_(std::move(http)) {}

    http_transport& transport() noexcept { return transport_; }
    void cancel_all() { registry_.cancel_all(); }

    model_response invoke(const chat_request& request, const std::stop_token* stop) {
        return transport_.runner().run<model_response>(call(request, stop));
    }

    boost::asio::awaitable<model_response> call(const chat_request& request, const std::stop_token* stop) {
        namespace asio = boost::asio;
        const auto executor = co_await asio::this_coro::executor;
        auto control = std::make_shared<call_control>(executor);
        control->follow(co_await asio::this_coro::cancellation_state);
        registry_.add(control);
        std::optional<std::stop_callback<stop_canceller>> on_stop;
        if (stop != nullptr && stop->stop_possible()) on_stop.emplace(*stop, stop_canceller{control});

        const bool stream =
            static_cast<bool>(request.stream.on_text) || static_cast<bool>(request.stream.on_reasoning);
        const http_request_spec spec = protocol_->make_request(request, stream);
        thread_local std::minstd_rand rng{std::random_device{}()};
        const int max_retries = request.client_max_retries
                                    ? std::min(std::max(*request.client_max_retries, 0), retry_.max_retries)
                                    : retry_.max_retries;

        for (int retry = 0;; ++retry) {
            std::optional<model_error> failure;
            bool delivered = false;
            try {
                co_return co_await attempt(request, spec, stream, *control, delivered);
            } catch (const model_error& e) {
                failure = e;
            } catch (const sse_error& e) {
                failure = invalid_response(protocol_->provider, e.what());
            } catch (const boost::system::system_error& e) {
                // Asio throws operation_aborted once the awaiting coroutine is cancelled.
                if (e.code() == asio::error::operation_aborted)
                    failure = cancelled_error();
                else
                    failure = model_error(model_error_kind::connection,
                                          detail::format("{}: {}", protocol_->provider, e.what()));
            }
            throw_if_cancelled(*control);
            if (failure->kind() == model_error_kind::cancelled) throw *failure;
            // After text went to the caller's callback a retry would repeat it.
            if (!failure->retryable() || retry >= max_retries || delivered) throw *failure;
            std::chrono::milliseconds delay = retry_.backoff(retry, rng);
            if (const auto asked = failure->retry_after()) {
                if (*asked > retry_.max_retry_after) throw *failure;
                delay = *asked;
            }
            asio::steady_timer timer(executor, delay);
            {
                watch_guard guard{*control};
                control->watch(&timer);
                boost::system::error_code ec;
                co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            }
            throw_if_cancelled(*control);
        }
    }

private:
    boost::asio::awaitable<model_response> attempt(const chat_request& request, const http_request_spec& spec,
                                                   bool stream, call_control& control, bool& delivered) {
        const std::string& provider = protocol_->provider;
        http_response_head head;
        std::unique_ptr<stream_assembly> assembler;
        std::string body;
        const std::size_t max_body = transport_.options().max_body_bytes;

        http_response_sink sink;
        sink.on_head = [&](const http_response_head& h) {
            head = h;
            if (h.status >= 200 && h.status < 300 && stream && is_event_stream(h.content_type))
                assembler = protocol_->make_stream_assembly(&request.stream);
        };
        sink.on_data = [&](std::string_view data) {
            if (assembler) {
                assembler->feed(data);
                delivered = assembler->delivered();
                return !assembler->finished();
            }
            if (body.size() + data.size() > max_body)
                throw invalid_response(provider, detail::format("the response exceeds {} bytes", max_body));
            body.append(data);
            return true;
        };

        try {
            co_await transport_.post(url_, spec, sink, control);
        } catch (const model_error& e) {
            // A drop or a stall after the stream said it was complete loses nothing.
            const bool after_end =
                e.kind() == model_error_kind::connection || e.kind() == model_error_kind::timeout;
            if (!(assembler && assembler->complete() && after_end)) {
                if (e.kind() == model_error_kind::connection || e.kind() == model_error_kind::timeout)
                    throw model_error(e.kind(), detail::format("{}: {}", provider, e.what()), head.status);
                throw;
            }
        }

        if (head.status < 200 || head.status >= 300) {
            model_error error = http_error(provider, head.status, body, protocol_->secret);
            error.set_retry_after(head.retry_after);
            throw error;
        }
        if (assembler) co_return assembler->finish();

        model_response response = protocol_->parse_body(body);
        if (stream) {
            // The server ignored "stream": hand the whole answer over at once.
            if (!response.ai.reasoning().empty() && request.stream.on_reasoning)
                request.stream.on_reasoning(response.ai.reasoning());
            if (const std::string text = response.ai.text(); !text.empty() && request.stream.on_text)
                request.stream.on_text(text);
        }
        co_return response;
    }

    std::unique_ptr<chat_protocol> protocol_;
    url url_;
    retry_policy retry_;
    call_registry registry_;
    http_transport transport_;
};

} // namespace agentware::detail

#endif
