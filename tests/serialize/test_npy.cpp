// The npy decoder (plugins/datasets/decoders/npy.cpp, compiled in) on outside bytes: every
// header field checked with an error naming it and its byte offset, bool bytes other than 0
// and 1 refused, and shapes whose strides would overflow refused.
#include "serialize_test.h"

#include "../../plugins/datasets/decoders/decoders.hpp"

#include <kiln/sdk/kernel.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

thread_local std::string g_error;

// What decode_npy asked for and wrote.
struct Decoded {
  int32_t dtype = -1;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

void* tensor_of(void* ctx, int32_t dtype, int32_t ndim, const int64_t* sizes) {
  auto* d = static_cast<Decoded*>(ctx);
  d->dtype = dtype;
  d->shape.assign(sizes, sizes + ndim);
  uint64_t n = kiln::sdk::dtype_size(dtype);
  for (int64_t s : d->shape) n *= static_cast<uint64_t>(s);
  d->bytes.assign(n + 1, 0);  // never empty, so data() is a valid pointer
  return d->bytes.data();
}

// decode_npy of `bytes`: true on success; g_error holds the message otherwise.
bool decode(const std::string& bytes, Decoded& out) {
  g_error.clear();
  kiln_decode_out o{};
  o.struct_size = sizeof o;
  o.ctx = &out;
  o.tensor = tensor_of;
  return kiln::decoders::decode_npy(bytes.data(), bytes.size(), "x.npy", &o, nullptr) == 0;
}

// A version 1 .npy file with the header dict `dict` (padded as NumPy pads it) and `data`.
std::string npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
         static_cast<char>(header.size() >> 8) + header + data;
}

void check_fails(const std::string& bytes, const std::vector<std::string>& parts) {
  Decoded d;
  BOOST_TEST(!decode(bytes, d));
  for (const std::string& part : parts) {
    BOOST_TEST(g_error.find(part) != std::string::npos,
               "\"" << g_error << "\" lacks \"" << part << "\"");
  }
}

}  // namespace

namespace kiln::decoders {
void set_error(const std::string& message) { g_error = message; }
}  // namespace kiln::decoders

BOOST_AUTO_TEST_SUITE(npy_decoder)

BOOST_AUTO_TEST_CASE(bool_bytes_other_than_0_or_1_are_refused) {
  // np.array([True, False, True]) with its third byte changed: sum() gave 258
  Decoded d;
  std::string dict = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
  BOOST_TEST(decode(npy(dict, std::string("\x01\x00\x01", 3)), d));
  BOOST_TEST(d.dtype == KILN_BOOL);
  check_fails(npy(dict, std::string("\x01\x00\xff", 3)),
              {"x.npy decoder: b1 (bool) element 2 at byte 130 holds the byte 255",
               "booleans are 0 or 1"});
}

BOOST_AUTO_TEST_CASE(empty_arrays_whose_strides_would_overflow_are_refused) {
  // row-major strides of a Fortran-order (0, 2^48, 2^48) were 2^96 (UBSan)
  check_fails(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 281474976710656, "
                  "281474976710656), }",
                  ""),
              {"header field 'shape' at byte 59", "spans more than 2^48 elements"});
  Decoded d;
  BOOST_TEST(decode(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 1048576, "
                        "1048576), }",
                        ""),
                    d));
  BOOST_TEST(d.shape == std::vector<int64_t>({0, 1048576, 1048576}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fortran_order_big_endian) {
  Decoded d;
  std::string dict = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
  // column-major [[1, 2, 3], [4, 5, 6]]: 1 4 2 5 3 6
  BOOST_TEST(decode(npy(dict, std::string("\0\1\0\4\0\2\0\5\0\3\0\6", 12)), d));
  std::vector<int16_t> v(6);
  std::memcpy(v.data(), d.bytes.data(), 12);
  BOOST_TEST(v == std::vector<int16_t>({1, 2, 3, 4, 5, 6}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_header_field_is_checked) {
  const std::string f4 = "'descr': '<f4', ";
  check_fails("\x93NUMPX", {"not an .npy file"});
  check_fails(std::string("\x93NUMPY\x07\x00\x00\x00", 10), {"unknown .npy version 7 at byte 6"});
  check_fails(std::string("\x93NUMPY\x01\x00\xff\x00{}", 12),
              {"header length 255 at byte 8 exceeds the 2 bytes that follow"});
  check_fails(npy("('descr', '<f4')", ""), {"the header at byte 10 is not a dict literal"});
  check_fails(npy("{'fortran_order': False, 'shape': (1,), }", "abcd"),
              {"the header dict at byte 10 has no field 'descr'"});
  check_fails(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"),
              {"header field 'descr' at byte 20", "dtype '<c8' has no kiln dtype"});
  check_fails(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
              {"header field 'descr' at byte 20 is not a quoted dtype string"});
  check_fails(npy("{" + f4 + "'fortran_order': Maybe, 'shape': (1,), }", "abcd"),
              {"header field 'fortran_order' at byte 44 is neither True nor False"});
  check_fails(npy("{" + f4 + "'fortran_order': False, 'shape': 4, }", "abcd"),
              {"header field 'shape' at byte 60 is not a tuple"});
  check_fails(npy("{" + f4 + "'fortran_order': False, 'shape': (2, x), }", "abcd"),
              {"header field 'shape' at byte 60: (2, x) is not a tuple of at most 16 sizes"});
  check_fails(npy("{" + f4 + "'fortran_order': False, 'shape': (281474976710657,), }", ""),
              {"header field 'shape' at byte 60: a dimension of (281474976710657,) exceeds 2^48"});
  check_fails(npy("{" + f4 +
                      "'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                      "1, 1, 1, 1, 1, 1, 1), }",
                  "abcd"),
              {"is not a tuple of at most 16 sizes"});
  check_fails(npy("{" + f4 + "'fortran_order': False, 'shape': (16777216, 16777217), }", ""),
              {"spans more than 2^48 elements"});
  check_fails(npy("{" + f4 + "'fortran_order': False, 'shape': (3,), }", "abcd"),
              {"truncated data at byte 128: the header says 12 bytes, 4 follow"});
}

BOOST_AUTO_TEST_SUITE_END()
