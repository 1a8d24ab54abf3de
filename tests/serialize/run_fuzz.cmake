# Runs each libFuzzer target briefly from its seed corpus (fuzz_seeds/<format>/).
#   cmake -DFUZZERS=fuzz_safetensors,fuzz_npy -DBIN=<folder of the targets>
#         -DSEEDS=<fuzz_seeds> -DWORK=<folder> -P run_fuzz.cmake
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" fuzzers "${FUZZERS}")
foreach(fuzz ${fuzzers})
  string(REGEX REPLACE "^fuzz_" "" format ${fuzz})
  file(REMOVE_RECURSE ${WORK}/${fuzz})
  file(MAKE_DIRECTORY ${WORK}/${fuzz})
  execute_process(COMMAND ${BIN}/${fuzz} -max_total_time=20 -rss_limit_mb=2048 -timeout=10
                          ${WORK}/${fuzz} ${SEEDS}/${format}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${fuzz} failed (${rc}):\n${err}")
  endif()
  string(REGEX MATCH "Done [0-9]+ runs" runs "${err}")
  message("${fuzz}: ${runs}")
endforeach()
