# kiln-plugin-check on a source whose fuzz harness crashes (crashing_source.cpp): it must stop
# with a failure, say so and save the input that crashed it.
#   cmake -DCHECK=<kiln-plugin-check> -DPLUGIN=<crashing_source.so> -DWORK=<folder> -P ...
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${CHECK} --fuzz-seconds 30 ${PLUGIN} WORKING_DIRECTORY ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "kiln-plugin-check passed a source that crashes:\n${out}${err}")
endif()
if(NOT out MATCHES "sample corpus: 1 shards read through the source")
  message(FATAL_ERROR "the sample corpus was not read before fuzzing:\n${out}${err}")
endif()
if(NOT err MATCHES "FAIL: the source's fuzz harness crashed; input saved to ([^\n]*)")
  message(FATAL_ERROR "no crash report:\n${out}${err}")
endif()
file(READ ${CMAKE_MATCH_1} input HEX)
if(NOT input MATCHES "ff")
  message(FATAL_ERROR "the saved input ${CMAKE_MATCH_1} is not the one that crashes: ${input}")
endif()
message("kiln-plugin-check caught the crash (exit status ${rc}); input: ${CMAKE_MATCH_1}")
