// WorkerException: what the libtorch-shaped loaders (and ChunkDataset's preloaders) raise in the
// caller when a worker thread's job threw: the worker's exception is kept in
// original_exception, and its message follows libtorch's text.
#pragma once

#include <kiln/error.h>
#include <kiln/export.h>

#include <exception>
#include <string>

namespace kiln::data {

class KILN_API WorkerException : public Error {
 public:
  explicit WorkerException(std::exception_ptr original)
      : Error("Caught exception in DataLoader worker thread. Original message: " +
              message_of(original)),
        original_exception(std::move(original)) {}

  // The exception the worker threw (std::rethrow_exception(e.original_exception) raises it).
  std::exception_ptr original_exception;

 private:
  static std::string message_of(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown exception (not derived from std::exception)";
    }
  }
};

}  // namespace kiln::data
