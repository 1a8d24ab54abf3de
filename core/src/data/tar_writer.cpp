// TarShardWriter: ustar shards written by hand (a 512-byte header per member), so core needs no
// archive library. See kiln/data/tar_writer.h.
//
// Note [Where the tar writer lives]: in core, not in the tar plugin (plugins/datasets/tar) that
// reads shards. A user, kiln-shard and the examples write shards without loading any plugin,
// and the plugin ABI has sources and decoders but no sink: moving the writer there would add an
// ABI surface (open, write a member, close, errors across the C boundary) to keep stable for
// ~200 lines of code. The two sides do not hold the same knowledge either: the writer emits a
// fixed subset of POSIX ustar (regular files, a pax "path" record for names over 100 bytes,
// mtime 0), which every tar reader reads, while the reader must accept what any tar program
// writes (GNU long names, pax, compression). They share no code and no constant, and agree
// through the standard: test_shard_writer reads what the writer wrote with libarchive directly
// and with both of the plugin's readers (shards_are_plain_tar_that_every_reader_reads_alike).
// The same holds for encode_npy below and the decoders plugin's .npy reader (round trip in
// samples_round_trip_with_long_names_and_tensors).
#include <kiln/data/tar_writer.h>

#include <kiln/error.h>
#include <kiln/ops.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace kiln::data {
namespace {

using kiln::detail::str;

constexpr size_t kBlock = 512;

size_t padded(size_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

void put_octal(char* field, size_t width, uint64_t value) {
  // width-1 octal digits and a NUL, as GNU tar and Python's tarfile write them
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(value));
}

// One ustar header block.
std::string header(const std::string& name, uint64_t size, char type) {
  std::string h(kBlock, '\0');
  std::memcpy(&h[0], name.data(), std::min<size_t>(name.size(), 100));
  put_octal(&h[100], 8, 0644);
  put_octal(&h[108], 8, 0);
  put_octal(&h[116], 8, 0);
  put_octal(&h[124], 12, size);
  put_octal(&h[136], 12, 0);  // mtime 0: shards are byte-identical from run to run
  h[156] = type;
  std::memcpy(&h[257], "ustar", 6);  // "ustar\0"
  std::memcpy(&h[263], "00", 2);
  std::memset(&h[148], ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(&h[148], 8, "%06o", sum);  // six digits, NUL, then the space already there
  return h;
}

std::string pax_record(const std::string& key, const std::string& value) {
  // "<len> key=value\n" where len counts itself
  std::string body = " " + key + "=" + value + "\n";
  size_t len = body.size() + 1;
  while (std::to_string(len).size() + body.size() != len) ++len;
  return std::to_string(len) + body;
}

}  // namespace

std::string encode_npy(const Tensor& tensor) {
  KILN_CHECK_VALUE(tensor.defined(), "encode_npy: undefined tensor");
  Tensor t = tensor.cpu().contiguous();
  const char* descr = nullptr;
  switch (t.dtype()) {
    case kBool: descr = "|b1"; break;
    case kByte: descr = "|u1"; break;
    case kChar: descr = "|i1"; break;
    case kShort: descr = "<i2"; break;
    case kInt: descr = "<i4"; break;
    case kLong: descr = "<i8"; break;
    case kHalf: descr = "<f2"; break;
    case kFloat: descr = "<f4"; break;
    case kDouble: descr = "<f8"; break;
    default: throw TypeError(str("encode_npy: NumPy has no ", dtype_name(t.dtype()), " dtype"));
  }
  std::string shape = "(";
  for (int64_t s : t.sizes()) shape += std::to_string(s) + ", ";
  if (t.dim() > 1) shape.resize(shape.size() - 2);
  if (t.dim() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string dict =
      str("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
  return out;
}

TarShardWriter::TarShardWriter(std::string pattern, int64_t max_size, int64_t max_count,
                               int64_t first_index)
    : pattern_(std::move(pattern)),
      max_size_(max_size),
      max_count_(max_count),
      next_index_(first_index) {
  KILN_CHECK_VALUE(max_size > 0 && max_count > 0, "TarShardWriter: max_size and max_count must ",
                   "be positive");
  size_t percent = pattern_.find('%');
  KILN_CHECK_VALUE(percent != std::string::npos &&
                       pattern_.find('%', percent + 1) == std::string::npos,
                   "TarShardWriter: the pattern '", pattern_, "' needs one integer ",
                   "conversion for the shard number, as \"train-%06d.tar\"");
  size_t conv = pattern_.find_first_not_of("0123456789-+ #", percent + 1);
  KILN_CHECK_VALUE(conv != std::string::npos && (pattern_[conv] == 'd' || pattern_[conv] == 'i'),
                   "TarShardWriter: the pattern '", pattern_, "' needs %d (e.g. %06d)");
}

TarShardWriter::~TarShardWriter() {
  try {
    close();
  } catch (...) {
    // see close()
  }
}

void TarShardWriter::write_bytes(const void* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) {
    throw Error(str("TarShardWriter: cannot write '", tmp_path_, "': ", std::strerror(errno)));
  }
  size_ += static_cast<int64_t>(n);
}

void TarShardWriter::start_shard() {
  char name[4096];
  std::snprintf(name, sizeof name, pattern_.c_str(), static_cast<int>(next_index_));
  ++next_index_;
  path_ = name;
  tmp_path_ = path_ + ".tmp";
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw Error(str("TarShardWriter: cannot create '", tmp_path_, "': ", std::strerror(errno)));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  size_ = count_ = 0;
}

void TarShardWriter::write_member(const std::string& name, const std::string& data) {
  if (name.size() > 100) {  // a pax header carries the full path
    std::string records = pax_record("path", name);
    write_bytes(header("PaxHeader/" + name.substr(name.size() - 80), records.size(), 'x').data(),
                kBlock);
    records.resize(padded(records.size()), '\0');
    write_bytes(records.data(), records.size());
  }
  KILN_CHECK_VALUE(data.size() < (uint64_t{1} << 33), "TarShardWriter: member '", name,
                   "' is larger than 8 GiB");
  write_bytes(header(name, data.size(), '0').data(), kBlock);
  write_bytes(data.data(), data.size());
  static const char zeros[kBlock] = {};
  write_bytes(zeros, padded(data.size()) - data.size());
}

void TarShardWriter::write(const std::string& key,
                           const std::vector<std::pair<std::string, std::string>>& fields) {
  KILN_CHECK_VALUE(!key.empty(), "TarShardWriter: empty key");
  size_t base = key.rfind('/');
  base = base == std::string::npos ? 0 : base + 1;
  KILN_CHECK_VALUE(key.find('.', base) == std::string::npos && base < key.size(),
                   "TarShardWriter: the key '", key, "' has a dot in its last component (or ",
                   "ends with '/'): readers would split it there");
  std::set<std::string> seen;
  int64_t bytes = 0;
  for (const auto& [name, data] : fields) {
    KILN_CHECK_VALUE(!name.empty(), "TarShardWriter: sample '", key, "' has a field without a ",
                     "name");
    KILN_CHECK_VALUE(seen.insert(name).second, "TarShardWriter: sample '", key, "' has the ",
                     "field '", name, "' twice");
    bytes += static_cast<int64_t>(kBlock + padded(data.size()) +
                                  (key.size() + name.size() + 1 > 100 ? 2 * kBlock : 0));
  }
  if (file_ != nullptr && count_ > 0 &&
      (count_ >= max_count_ || size_ + bytes + 2 * static_cast<int64_t>(kBlock) > max_size_)) {
    close();
  }
  if (file_ == nullptr) start_shard();
  for (const auto& [name, data] : fields) write_member(key + "." + name, data);
  ++count_;
  ++total_count_;
}

void TarShardWriter::write(const Sample& sample) {
  KILN_CHECK_VALUE(sample.is_map() && sample.contains("__key__"), "TarShardWriter: expects a ",
                   "map sample with a \"__key__\", got ", sample.repr());
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& [name, v] : sample.map()) {
    if (name == "__key__" || name == "__url__") continue;
    switch (v.kind()) {
      case Sample::Kind::String: fields.emplace_back(name, v.str()); break;
      case Sample::Kind::Int: fields.emplace_back(name, std::to_string(v.to_int())); break;
      case Sample::Kind::Tensor: {
        const Tensor& t = v.tensor();
        bool npy = name.size() >= 3 && name.compare(name.size() - 3, 3, "npy") == 0;
        if (t.dtype() == kByte && !npy) {
          Tensor c = t.cpu().contiguous();
          fields.emplace_back(name,
                              std::string(static_cast<const char*>(c.data_ptr()), c.nbytes()));
        } else {
          fields.emplace_back(name, encode_npy(t));
        }
        break;
      }
      default:
        throw TypeError(str("TarShardWriter: field '", name, "' is ", kind_name(v.kind()),
                            "; a field is bytes (a string or a uint8 tensor), an int, or a ",
                            "tensor (written as .npy)"));
    }
  }
  write(sample.at("__key__").str(), fields);
}

void TarShardWriter::close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  static const char zeros[2 * kBlock] = {};
  try {
    write_bytes(zeros, sizeof zeros);  // end of archive
  } catch (...) {
    std::fclose(f);
    file_ = nullptr;
    throw;
  }
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    throw Error(str("TarShardWriter: cannot write '", tmp_path_, "': ", std::strerror(errno)));
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw Error(str("TarShardWriter: cannot rename '", tmp_path_, "' to '", path_,
                    "': ", std::strerror(errno)));
  }
  shards_.push_back(path_);
}

}  // namespace kiln::data
