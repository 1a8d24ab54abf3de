# Configures kiln with nlohmann::json hidden and builds the decoders plugin: it must build, with
# the json decoder left out and a note saying so (item 19 of issue 13).
#   cmake -DSOURCE_DIR=<kiln> -DWORK=<folder> [-DLAUNCHER=ccache]
#         -P check_decoders_without_json.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
# The header hidden too: one that fails to compile, found before the system's.
file(WRITE ${WORK}/hide/nlohmann/json.hpp "#error nlohmann::json is hidden by the test\n")
set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK} -DCMAKE_BUILD_TYPE=Debug ${launcher}
          -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_CXX_FLAGS=-I${WORK}/hide
          -DKILN_WITH_CPU=OFF -DKILN_WITH_CUDA=OFF
          -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_EXAMPLES=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure without nlohmann::json failed:\n${out}\n${err}")
endif()
if(NOT out MATCHES "nlohmann-json3-dev not found: the json decoder is left out")
  message(FATAL_ERROR "configure did not say that the json decoder is left out:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} --target kiln_decoders -j2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the decoders plugin does not build without nlohmann::json:\n${out}\n${err}")
endif()
file(GLOB_RECURSE plugin ${WORK}/kiln_decoders.so)
file(STRINGS "${plugin}" summary REGEX "field decoders:")
if(summary MATCHES "json")
  message(FATAL_ERROR "the plugin built without nlohmann::json still names json: ${summary}")
endif()
file(REMOVE_RECURSE ${WORK})
message("built without nlohmann::json: ${summary}")
