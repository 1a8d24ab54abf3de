# kiln_conformance: the conformance cases (cases_*.cpp), their references and golden records, and
# the framework-free runner (check.cpp), as a static library linked by the Boost.Test runner
# (test_conformance) and by kiln-plugin-check (tools/). Included from tools/CMakeLists.txt,
# which CMake processes first.
include_guard(GLOBAL)
set(_kiln_conformance_dir ${PROJECT_SOURCE_DIR}/tests/conformance)
add_library(kiln_conformance STATIC
  ${_kiln_conformance_dir}/check.cpp
  ${_kiln_conformance_dir}/reference.cpp
  ${_kiln_conformance_dir}/golden.cpp
  ${_kiln_conformance_dir}/cases_unary.cpp
  ${_kiln_conformance_dir}/cases_binary.cpp
  ${_kiln_conformance_dir}/cases_compare.cpp
  ${_kiln_conformance_dir}/cases_ternary.cpp
  ${_kiln_conformance_dir}/cases_inplace.cpp
  ${_kiln_conformance_dir}/cases_reduce.cpp
  ${_kiln_conformance_dir}/cases_linalg.cpp
  ${_kiln_conformance_dir}/cases_conv.cpp
  ${_kiln_conformance_dir}/cases_norm.cpp
  ${_kiln_conformance_dir}/cases_shape.cpp
  ${_kiln_conformance_dir}/cases_copy.cpp
  ${_kiln_conformance_dir}/cases_random.cpp)
target_include_directories(kiln_conformance PUBLIC ${_kiln_conformance_dir})
target_link_libraries(kiln_conformance PUBLIC kiln::core)
# The golden file's folder in the source tree (KILN_GOLDEN_DIR in the environment overrides it).
target_compile_definitions(kiln_conformance PRIVATE
  KILN_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")
