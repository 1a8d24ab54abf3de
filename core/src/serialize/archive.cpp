// Archives over the safetensors format. See kiln/serialize/archive.h. A stream goes through a
// temporary file, so that writing and reading (with every check of kiln::load) are the format's
// one implementation in save.cpp and load.cpp.
#include <kiln/serialize/archive.h>

#include <kiln/error.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln::serialize {
namespace {

// A file name in the temporary directory, removed when this goes out of scope.
class TemporaryFile {
 public:
  TemporaryFile() {
    static std::atomic<uint64_t> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             detail::str("kiln-archive-", ::getpid(), "-", counter.fetch_add(1), ".safetensors"))
                .string();
  }
  ~TemporaryFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool) {
  KILN_CHECK_VALUE(tensor.defined(), "OutputArchive::write: the tensor of key '", key,
                   "' is undefined");
  for (auto& [name, t] : tensors_) {
    if (name == key) {
      t = tensor;
      return;
    }
  }
  tensors_.emplace_back(key, tensor);
}

void OutputArchive::save_to(const std::string& filename) const { kiln::save(tensors_, filename); }

void OutputArchive::save_to(std::ostream& stream) const {
  TemporaryFile file;
  kiln::save(tensors_, file.path());
  std::ifstream in(file.path(), std::ios::binary);
  stream << in.rdbuf();
  KILN_CHECK(in.good() && stream.good(), "OutputArchive::save_to: writing the archive to the ",
             "stream failed");
}

void InputArchive::load_from(const std::string& filename) { tensors_ = kiln::load(filename); }

void InputArchive::load_from(std::istream& stream) {
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  KILN_CHECK(!stream.bad(), "InputArchive::load_from: reading the stream failed");
  TemporaryFile file;
  {
    std::ofstream out(file.path(), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    KILN_CHECK(out.good(), "InputArchive::load_from: cannot write the temporary file '",
               file.path(), "'");
  }
  try {
    tensors_ = kiln::load(file.path());
  } catch (const Error& e) {
    throw Error(detail::str("InputArchive::load_from: the stream holds no valid archive (",
                            bytes.size(), " bytes): ", e.what()));
  }
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool) const {
  for (const auto& [name, t] : tensors_) {
    if (name == key) {
      tensor = t;
      return true;
    }
  }
  return false;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) const {
  if (try_read(key, tensor, is_buffer)) return;
  std::ostringstream names;
  for (const auto& [name, t] : tensors_) names << (names.tellp() > 0 ? ", " : "") << name;
  throw IndexError(detail::str("InputArchive::read: no key '", key, "' in the archive (keys: ",
                               tensors_.empty() ? "none" : names.str(), ")"));
}

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : tensors_) out.push_back(entry.first);
  return out;
}

}  // namespace kiln::serialize
