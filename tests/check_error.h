// CHECK_ERROR, shared by the test areas: the statement must throw `type` (a kiln::Error
// subclass), and its message must contain each of the texts that follow.
//   CHECK_ERROR(kiln::ValueError, x.view({5}), "shape '[5]' is invalid", "of size 6");
#pragma once

#include <boost/test/unit_test.hpp>

#include <exception>
#include <string>
#include <vector>

namespace kiln_test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace kiln_test

#define CHECK_ERROR(type, statement, ...)                                                     \
  do {                                                                                        \
    try {                                                                                     \
      statement;                                                                              \
      BOOST_ERROR("expected " #type " from: " #statement);                                    \
    } catch (const type& e_) {                                                                \
      for (const std::string& part_ : std::vector<std::string>{__VA_ARGS__}) {                \
        BOOST_CHECK_MESSAGE(kiln_test::contains(e_.what(), part_),                            \
                            #statement " threw \"" << e_.what() << "\", expected \"" << part_ \
                                                   << "\"");                                  \
      }                                                                                       \
    } catch (const std::exception& e_) {                                                      \
      BOOST_ERROR(#statement " threw another exception type than " #type ": " << e_.what());  \
    }                                                                                         \
  } while (0)
