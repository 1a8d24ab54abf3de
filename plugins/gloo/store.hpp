// gloo's rendezvous store over the kiln_store the core hands a backend: gloo exchanges each
// rank's address through it when it connects the group.
#pragma once

#include <kiln/sdk/plugin.h>

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln_gloo {

class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(const kiln_store* store, std::chrono::milliseconds timeout)
      : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    if (store_->set(store_->self, key.c_str(), data.data(), data.size()) != 0) {
      throw std::runtime_error("the rendezvous store failed to set '" + key + "'");
    }
  }

  std::vector<char> get(const std::string& key) override { return get(key, timeout_); }

  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }

  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    for (const std::string& key : keys) get(key, t);
  }

 private:
  std::vector<char> get(const std::string& key, std::chrono::milliseconds t) {
    std::vector<char> out;
    auto emit = [](void* ctx, const void* data, uint64_t size) {
      auto* v = static_cast<std::vector<char>*>(ctx);
      v->assign(static_cast<const char*>(data), static_cast<const char*>(data) + size);
    };
    if (store_->get(store_->self, key.c_str(), t.count(), emit, &out) != 0) {
      throw std::runtime_error("the rendezvous store has no key '" + key + "' after " +
                               std::to_string(t.count()) + " ms: a rank did not connect");
    }
    return out;
  }

  const kiln_store* store_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kiln_gloo
