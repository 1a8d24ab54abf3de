// Grouping members into samples. See grouper.hpp for the rules.
#include "grouper.hpp"

#include <cstring>

namespace kiln::tar {

bool split_name(std::string_view name, std::string_view& key, std::string_view& extension) {
  // metadata: ^__[^/]*__($|/)
  if (name.size() >= 4 && name.substr(0, 2) == "__") {
    size_t slash = name.find('/');
    std::string_view first = name.substr(0, slash);
    if (first.size() >= 4 && first.substr(first.size() - 2) == "__") return false;
  }
  // ^((?:.*/|)[^.]+)[.]([^/]*)$
  size_t slash = name.rfind('/');
  size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  size_t dot = name.find('.', base);
  if (dot == std::string_view::npos || dot == base) return false;
  key = name.substr(0, dot);
  extension = name.substr(dot + 1);
  return true;
}

Grouper::Grouper(std::unique_ptr<MemberReader> reader)
    : reader_(std::move(reader)), copy_(reader_->lifetime() == MemberReader::Lifetime::UntilNext) {}

bool Grouper::read_pending() {
  Member m;
  for (;;) {
    if (!reader_->next(m)) return false;
    std::string_view key, ext;
    if (!split_name(*m.name, key, ext)) continue;
    pending_key_.assign(key);
    pending_.name.assign(ext);
    for (char& c : pending_.name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // ASCII letters
    }
    if (copy_) {
      pending_.owned.assign(m.data, m.data + m.size);
      pending_.data = pending_.owned.data();
    }
    pending_.data_offset = m.data_offset;
    pending_.size = m.size;
    pending_.offset = m.offset;
    return true;
  }
}

void Grouper::take_pending(Field& f) {
  f.name.swap(pending_.name);
  if (copy_) {
    f.owned.swap(pending_.owned);
    f.data = f.owned.data();
  }
  f.data_offset = pending_.data_offset;
  f.size = pending_.size;
  f.offset = pending_.offset;
  has_pending_ = false;
}

int32_t Grouper::next(kiln_sample* out) {
  error_.clear();
  if (!deferred_.empty()) {
    error_.swap(deferred_);
    return KILN_SAMPLE_ERROR;
  }
  if (done_) return KILN_SAMPLE_END;
  try {
    if (!has_pending_) {
      if (!read_pending()) {
        done_ = true;
        return KILN_SAMPLE_END;
      }
      has_pending_ = true;
    }
    key_.swap(pending_key_);
    n_fields_ = 0;
    if (!copy_) reader_->keep_from(pending_.data_offset);  // this sample's bytes stay
    std::string duplicate;
    for (;;) {
      // pending_ belongs to this sample: make it a field
      bool dup = false;
      for (size_t i = 0; i < n_fields_; ++i) {
        if (fields_[i].name == pending_.name) dup = true;
      }
      if (dup && duplicate.empty()) {
        duplicate = "member '" + key_ + "." + pending_.name + "' at byte offset " +
                    std::to_string(pending_.offset) + ": duplicate file name in tar file: the " +
                    "sample '" + key_ + "' already has a field '" + pending_.name + "'";
      }
      if (n_fields_ == fields_.size()) fields_.emplace_back();
      take_pending(fields_[n_fields_++]);
      bool more = false;
      try {
        more = read_pending();
      } catch (const TarError& e) {
        deferred_ = e.what();  // deliver what was read; the error comes next
      }
      if (!more) {
        done_ = true;
        break;
      }
      has_pending_ = true;
      if (pending_key_ != key_) break;
    }
    if (!duplicate.empty()) {
      error_ = duplicate;
      return KILN_SAMPLE_SKIP;
    }
  } catch (const TarError& e) {
    done_ = true;
    error_ = e.what();
    return KILN_SAMPLE_ERROR;
  } catch (const std::exception& e) {
    done_ = true;
    error_ = std::string("tar source: ") + e.what();
    return KILN_SAMPLE_ERROR;
  }
  out_.resize(n_fields_);
  for (size_t i = 0; i < n_fields_; ++i) {
    Field& f = fields_[i];
    if (!copy_) f.data = reader_->data_at(f.data_offset, f.size);  // after the window moved
    out_[i] = kiln_field{f.name.c_str(), f.data, f.size, f.offset};
  }
  out->key = key_.c_str();
  out->fields = out_.data();
  out->n_fields = static_cast<int32_t>(n_fields_);
  out->offset = n_fields_ > 0 ? fields_[0].offset : 0;
  return KILN_SAMPLE_OK;
}

}  // namespace kiln::tar
