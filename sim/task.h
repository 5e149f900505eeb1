// Task<T>: the coroutine type of simulated client logic. Lazy (starts when awaited or when the
// runtime resumes it), single owner, and resumes its awaiter by symmetric transfer, so a chain
// of client functions runs as one simulated thread that suspends only at scheduling points
// (Redis calls and timers, see runtime.h).
//
//   Task<int> incr(Ctx& ctx) { auto r = co_await ctx.call({"GET", "n"}); ... co_return v; }
//   Task<void> actor(Ctx& ctx) { int v = co_await incr(ctx); }
#pragma once

#include <coroutine>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace testbed::sim {

template <typename T>
class Task;

namespace task_detail {

struct FinalAwaiter {
  bool await_ready() noexcept { return false; }
  template <typename P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
    auto c = h.promise().continuation;
    return c ? c : std::noop_coroutine();
  }
  void await_resume() noexcept {}
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  std::exception_ptr error;
  std::shared_ptr<const std::exception> error_object;  // set by co_return Fail(...) only
  std::suspend_always initial_suspend() noexcept { return {}; }
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }
};

}  // namespace task_detail

// co_return Fail(error) ends a Task<T> exactly as `throw error;` would (its awaiter's co_await
// throws it), without the unwinding: std::make_exception_ptr builds the exception in place. A
// thrown exception unwinds twice on its way to a catch in the awaiter (out of this body, then
// again from the awaiter's co_await); the quota errors that the ports raise on almost every
// write of the quota properties made that a few percent of a check.
//
// A Failure also keeps the error as a value (`object`), so FailureOf<E> below can hand it to
// an awaiter that expects it without throwing at all.
struct Failure {
  std::exception_ptr error;
  std::shared_ptr<const std::exception> object;  // the same error; null unless a std::exception
};
template <typename E>
Failure Fail(E error) {
  std::shared_ptr<const std::exception> object;
  if constexpr (std::is_base_of_v<std::exception, E>) object = std::make_shared<const E>(error);
  return Failure{std::make_exception_ptr(std::move(error)), std::move(object)};
}

template <typename T>
class [[nodiscard]] Task {
 public:
  struct promise_type : task_detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    void return_value(T v) { value = std::move(v); }
    void return_value(Failure f) {
      error = std::move(f.error);
      error_object = std::move(f.object);
    }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Task() {
    if (h_) h_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  T await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }
  Handle handle() const { return h_; }

 private:
  explicit Task(Handle h) : h_(h) {}
  Handle h_;
};

template <>
class [[nodiscard]] Task<void> {
 public:
  struct promise_type : task_detail::PromiseBase {
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    void return_void() {}
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Task() {
    if (h_) h_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  void await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }
  Handle handle() const { return h_; }

 private:
  explicit Task(Handle h) : h_(h) {}
  Handle h_;
};

// co_await FailureOf<E>(task): runs the task and returns the E it failed with (nullopt when
// it succeeded; its value is dropped), as `try { co_await task; } catch (const E& e) {...}`
// would see it; any other error propagates. An error the task ended with by co_return
// Fail(...) is returned without being thrown: the quota probes expect a quota error on most
// of their writes, and a throw costs some 15 000 instructions. Bind the result to a name
// (`const std::optional<E> e = co_await FailureOf<E>(...);`): g++ 12 destroys a temporary
// that holds a co_await's result twice when the full expression goes on using it.
template <typename E, typename T>
class [[nodiscard]] FailureAwaiter {
 public:
  explicit FailureAwaiter(Task<T> task) : task_(std::move(task)) {}
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    return task_.await_suspend(awaiting);
  }
  std::optional<E> await_resume() {
    const auto& promise = task_.handle().promise();
    if (promise.error_object)
      if (const E* e = dynamic_cast<const E*>(promise.error_object.get())) return *e;
    try {
      task_.await_resume();
    } catch (const E& e) {
      return e;
    }
    return std::nullopt;
  }

 private:
  Task<T> task_;
};
template <typename E, typename T>
FailureAwaiter<E, T> FailureOf(Task<T> task) {
  return FailureAwaiter<E, T>(std::move(task));
}

}  // namespace testbed::sim
