// json decoder: nlohmann::json, emitted value by value through kiln_decode_out.
#include "decoders.hpp"

#include <nlohmann/json.hpp>

namespace kiln::decoders {
namespace {

kiln_status emit(const nlohmann::json& j, const kiln_decode_out* out, int depth) {
  if (depth > 200) {
    set_error("json decoder: nested deeper than 200 levels");
    return 1;
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null: return out->none(out->ctx);
    case nlohmann::json::value_t::boolean: return out->boolean(out->ctx, j.get<bool>() ? 1 : 0);
    case nlohmann::json::value_t::number_integer: return out->integer(out->ctx, j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      auto v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(INT64_MAX)) return out->real(out->ctx, static_cast<double>(v));
      return out->integer(out->ctx, static_cast<int64_t>(v));
    }
    case nlohmann::json::value_t::number_float: return out->real(out->ctx, j.get<double>());
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      return out->text(out->ctx, s.data(), s.size());
    }
    case nlohmann::json::value_t::array: {
      if (kiln_status s = out->begin_list(out->ctx)) return s;
      for (const auto& v : j) {
        if (kiln_status s = emit(v, out, depth + 1)) return s;
      }
      return out->end(out->ctx);
    }
    case nlohmann::json::value_t::object: {
      if (kiln_status s = out->begin_map(out->ctx)) return s;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (kiln_status s = out->key(out->ctx, it.key().data(), it.key().size())) return s;
        if (kiln_status s = emit(it.value(), out, depth + 1)) return s;
      }
      return out->end(out->ctx);
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: set_error("json decoder: unsupported value"); return 1;
  }
  return 1;
}

}  // namespace

kiln_status decode_json(const void* data, uint64_t size, const char* name,
                        const kiln_decode_out* out, void*) {
  try {
    const auto* p = static_cast<const char*>(data);
    nlohmann::json j = nlohmann::json::parse(p, p + size);
    return emit(j, out, 0);
  } catch (const std::exception& e) {
    set_error(std::string(name) + " decoder: " + e.what());
    return 1;
  }
}

}  // namespace kiln::decoders
